"""Conformance backends shipped with ptospec (selected by name with ``--pto-backend``)."""
