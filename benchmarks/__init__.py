"""Benchmarks run by hand (``python -m benchmarks NAME``); never part of the test suite. See README.md."""
