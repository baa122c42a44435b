"""One module per ``ptospec`` subcommand; each defines ``register(subparsers)``."""
