"""A package, so that every cloud's test folder can name its files alike (test_resources.py, ...)."""
