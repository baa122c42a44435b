"""ptospec's stand-in for MLIR's Python package (``mlir``), importable only inside a sample builder's subprocess."""
