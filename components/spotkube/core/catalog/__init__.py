"""Bundled platform facts (VM sizes, machine types, GPU zones) that the spec validates against."""
