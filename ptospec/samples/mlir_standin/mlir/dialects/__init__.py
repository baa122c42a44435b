"""The dialects a sample builder imports: func, arith, builtin (ours) and pto (generated at run time)."""
