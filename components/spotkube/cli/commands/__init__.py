"""The commands other than `plan`, `cost` and `logs`, each in its own module: `spotkube.cli.app` imports
one only when it runs or when help lists it, so a plan loads none of them."""
