"""Synchronisation hazards: races between the pipes of a core that a sequential run cannot see.

``clocks`` (vector clocks), ``ordering`` (what the synchronisation instructions order, from their ``orders`` in
specs/program.yaml), ``findings`` (what is reported), ``dynamic`` (a tracer of a reference run: shadow memory
per byte) and ``static`` (the same relation over the program's structure)."""
