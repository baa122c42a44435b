"""Whole programs in the PTO assembler's dialect: read (``parser``), checked (``checker``) and run by a
reference interpreter (``interpreter``) over the database's validator and executor."""
