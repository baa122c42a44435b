"""Conformance suites derived from the spec: case derivation, inputs, comparison, backends, pytest plugin."""
