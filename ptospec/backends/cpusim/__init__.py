"""The ``cpusim`` conformance backend: runs cases in the upstream PTO CPU simulator.

    ptospec conformance --backend cpusim --pto-isa-root PATH [--ops ...] [--profile cpu]
    pytest generated_tests --pto-backend=cpusim --pto-profile=cpu      # with PTO_ISA_ROOT set

Modules: ``toolchain`` (checkout, clang++, cache dir), ``cppgen`` (driver C++ from the spec),
``harness`` (the C++ header every driver includes), ``build`` (compile + content-hash cache),
``diagnostics`` (static_assert vs other compiler errors), ``execute`` (run binaries, exchange tiles
through files), ``outcome`` (compiler/run results -> ``Result``), ``backend`` (the ``Backend``).
See docs/cpusim.md.
"""

from __future__ import annotations

from .backend import CpuSimBackend

__all__ = ["CpuSimBackend"]
