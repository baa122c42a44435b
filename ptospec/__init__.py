"""ptospec: the PTO tile ISA as data.

One YAML file per instruction under ``specs/`` is the single source of truth; the
validator, reference executor, assembly printer/parser, conformance-suite generator
and reference site are all derived from it.
"""

__version__ = "0.1.0"
