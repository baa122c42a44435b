"""A stand-in for clang++ used by tests/test_cpusim_harness.py (no real compiler needed).

* ``--version`` prints a clang banner (major version from $FAKE_CLANG_MAJOR, default 19);
* every other call is logged to $FAKE_CLANG_LOG (one line: "full", "syntax" or "pch");
* ``-x c++-header ... -o X`` writes X;
* a unit is scanned per ``namespace vN { ... } // namespace vN`` block: a block containing
  ``STATIC_FAIL`` gets a static_assert error with an instantiation note at its line, one containing
  ``OTHER_FAIL`` an ordinary error in the unit, one containing ``REFUSE`` an error in a library header
  whose instantiation chain starts at that line, one containing ``OVERLOAD_FAIL`` a failed overload
  resolution on ``OVERLOAD_FAIL`` at that line (comment lines are not scanned); when there is no error
  and ``-o X`` is given, X is written.
"""

from __future__ import annotations

import os
import re
import sys


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print(f"clang version {os.environ.get('FAKE_CLANG_MAJOR', '19')}.1.7 (fake)")
        return 0
    out = argv[argv.index("-o") + 1] if "-o" in argv else None
    kind = "pch" if "c++-header" in argv else "full" if out else "syntax"
    log = os.environ.get("FAKE_CLANG_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(kind + "\n")
    if kind == "pch":
        with open(out, "w", encoding="utf-8") as f:  # type: ignore[arg-type]
            f.write("pch")
        return 0
    source = next(a for a in argv if a.endswith(".cpp"))
    with open(source, encoding="utf-8") as f:
        lines = f.read().splitlines()
    errors = []
    current = None
    for number, line in enumerate(lines, 1):
        m = re.match(r"(?://|namespace) (v\d+)\b", line)
        if m:
            current = m.group(1)
        if line.lstrip().startswith("//"):
            continue
        if current and "REFUSE" in line:
            errors.append("/fake/include/pto/cpu/TFake.hpp:20:5: error: invalid operands to binary expression "
                          "('_Float16' and '_Float16')")
            errors.append(f"{source}:{number}:5: note: in instantiation of function template specialization "
                          f"'pto::REFUSE<int>' requested here")
        if current and "OVERLOAD_FAIL" in line:
            errors.append(f"{source}:{number}:5: error: no matching function for call to 'OVERLOAD_FAIL'")
            errors.append("/fake/include/pto/common/pto_instr.hpp:5:1: note: candidate template ignored: deduced "
                          "conflicting types for parameter 'TileData'")
        if current and "STATIC_FAIL" in line:
            errors.append(f"/fake/include/pto/cpu/TFake.hpp:10:5: error: static assertion failed due to "
                          f"requirement 'false': fake rejection of {current}")
            errors.append(f"{source}:{number}:5: note: in instantiation of function template specialization "
                          f"'pto::STATIC_FAIL<int>' requested here")
        if current and "OTHER_FAIL" in line:
            errors.append(f"{source}:{number}:5: error: use of undeclared identifier 'OTHER_FAIL'")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        print(f"{len(errors)} errors generated.", file=sys.stderr)
        return 1
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(out, 0o755)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
