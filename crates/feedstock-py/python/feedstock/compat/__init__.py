"""Compatibility layers; ``feedstock.compat.v1`` is TensorFlow 1's API."""
