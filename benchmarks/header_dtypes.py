"""Compare the a2a3/a5 dtype tables with the element types the profile's header admits.

    python benchmarks/header_dtypes.py --pto-isa-root /tmp/pto-isa [--ops tadd tdivs]

For each op and NPU profile it reads the header its spec names as source ``a2a3``/``a5``, collects
the element types every ``static_assert`` names (``std::is_same<T, X>`` lists, ``isSupportType<T, ...>``
and ``sizeof(T) == N`` alternatives) and prints:

- LOOSER: a table type no assert of the header admits (the table must follow the header; type
  variables of scalar parameters alone are left out, the signature fixes them);
- STRICTER: a type the header admits and the table leaves out, with the op's recorded differences
  (each such case must be recorded).

It is a screening aid, not a proof: the asserts of a header shared by several ops are pooled (so a
looser cell can hide behind another op's assert), headers that delegate to others (TBitwiseSOp's
TANDS calls TAND) or dispatch by overload (TCvt) admit everything here and need reading by hand.
Nothing is copied from the headers; only type names are compared.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from ptospec.loader import load_database

ALIASES = {"float16_t": "f16", "float32_t": "f32", "int": "i32", "unsigned int": "u32"}


def static_asserts(text: str) -> list[str]:
    found = []
    for m in re.finditer(r"static_assert\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        found.append(text[m.start():i])
    return found


def admitted(assertion: str, cpp: dict[str, str], widths: dict[str, int]) -> set[str]:
    """Our dtype names an assertion admits (empty: it says nothing about element types we know)."""
    names: set[str] = set()
    for t in re.findall(r"is_same(?:_v)?<\s*[^,<>]+(?:<[^<>]*>)?[^,<>]*,\s*([A-Za-z_][A-Za-z0-9_ ]*?)\s*>", assertion):
        if t.strip() in cpp:
            names.add(cpp[t.strip()])
    for group in re.findall(r"isSupportType<\s*\w+\s*,([^>]*)>", assertion):
        names |= {cpp[t.strip()] for t in group.split(",") if t.strip() in cpp}
    sizes = {int(n) for n in re.findall(r"sizeof\([^)]*\)\s*==\s*(\d+)", assertion)}
    sizes |= {4 for _ in re.findall(r"sizeof\([^)]*\)\s*==\s*sizeof\(float\)", assertion)}
    sizes |= {2 for _ in re.findall(r"sizeof\([^)]*\)\s*==\s*sizeof\(half\)", assertion)}
    if sizes and "!=" not in assertion:
        names |= {n for n, w in widths.items() if w in sizes}
    return names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pto-isa-root", required=True, type=Path)
    ap.add_argument("--specs", default=None)
    ap.add_argument("--ops", nargs="*", default=None)
    args = ap.parse_args()
    db = load_database(args.specs) if args.specs else load_database()
    cpp = {d.cpp: n for n, d in db.isa.dtypes.items()} | ALIASES
    shared = Counter(op.sources[p].ref for op in db.ops.values() for p in ("a2a3", "a5") if p in op.sources)
    looser = stricter = 0
    for op in sorted(db.ops.values(), key=lambda o: o.name):
        if args.ops and op.name not in args.ops:
            continue
        for profile in ("a2a3", "a5"):
            source, table = op.sources.get(profile), op.dtypes.get(profile)
            if source is None or table is None or not source.ref.endswith(".hpp"):
                continue
            widths = {n: d.bytes for n, d in db.isa.dtypes.items() if d.profiles is None or profile in d.profiles}
            text = (args.pto_isa_root / source.ref).read_text(errors="replace")
            header = set().union(*(admitted(a, cpp, widths) for a in static_asserts(text)))
            if not header:
                print(f"{op.name:16} {profile:5} {source.ref}: no element-type static_assert (read by hand)")
                continue
            # a type variable only scalar parameters use (TADDDEQRELU's float deqScale) is fixed by the
            # C++ signature, not by a static_assert
            scalar_only = {v for r in table.rows for v in r.types
                           if all(o.role == "scalar" for m in op.modes for o in m.operands if o.dtype == v)}
            for var in dict.fromkeys(v for r in table.rows for v in r.types):  # rows of several modes
                allowed = set().union(*(set(r.types.get(var, ())) for r in table.rows))
                if len(allowed) == len(widths) or var in scalar_only:  # an unconstrained scratch variable
                    continue
                loose = sorted(allowed - header)
                if loose:
                    looser += len(loose)
                    print(f"{op.name:16} {profile:5} LOOSER   {var}: {', '.join(loose)} (header admits "
                          f"{', '.join(sorted(header))})")
            if shared[source.ref] == 1 and any("T" in r.types for r in table.rows):
                main_types = set().union(*(set(r.types.get("T", ())) for r in table.rows))
                extra = sorted(header - main_types)
                if extra:
                    stricter += len(extra)
                    ids = ", ".join(d.id for d in op.differences)
                    print(f"{op.name:16} {profile:5} STRICTER T: {', '.join(extra)}; recorded differences: {ids}")
    print(f"{looser} looser and {stricter} stricter cell(s) to review")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
