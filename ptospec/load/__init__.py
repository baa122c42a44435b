"""Loading ``specs/`` into the frozen model: one builder per section of a spec file.

Floors, from the ground up: ``problems`` (how a problem is collected), ``files`` (where the spec files are),
``schema`` (the JSON Schemas), ``names`` (parsing expressions and the names each may read); the section
builders of an op file (``operands``, ``asm_forms``, ``cpp``, ``semantics``, ``examples``, ``modes``,
``dtype_tables``, ``rules``, ``numerics``, ``differences``) over the shared ``context``; ``isa`` and ``kinds``
for the other two file kinds; ``op`` (one op file); ``crosschecks`` (what no single file can tell);
``database`` (all of it). ``ptospec.loader`` hands the public names on.
"""
