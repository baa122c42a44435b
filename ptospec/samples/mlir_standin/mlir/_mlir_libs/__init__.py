"""The stand-in's extension modules: ``_pto`` (the assembler's dialect types and attributes) in pure Python."""
