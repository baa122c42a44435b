"""How far one run of a program may go (the command line names them in its help)."""

MAX_STEPS = 50_000_000  # statements one run may execute (a loop that never ends is an error, not a hang)
MAX_SECONDS = 300.0  # wall-clock seconds one run may take (a loop of costly statements is stopped too)
MAX_CALL_DEPTH = 64
