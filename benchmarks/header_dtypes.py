"""Screen every dtype table against the element types the profile's headers admit, per mode.

    python benchmarks/header_dtypes.py --pto-isa-root /tmp/pto-isa [--ops tadd tmov] [--profiles a5] [-v]

For each op, profile (a2a3, a5, cpu) and mode, the mode's C++ call (``cpp.name``, ``cpp.template``,
``cpp.args``) is followed through pto-isa's headers (``header_scan``): the overloads that fit it, the
functions they call, and the ``if constexpr`` branches the mode's tile locations and element types select.
A binding of element types is *rejected* when every path fails a ``static_assert``. Flags:

- LOOSER: a type of the mode's table rows that the header rejects with every completion of the row
  (the table must follow the header);
- STRICTER: a type of the profile the header admits for a type variable and the mode's rows leave out;
  *recorded* when a difference of the op lists it under ``omits`` (profile, variable, dtypes), else
  *unrecorded* (every one must be recorded with the source that justifies it); a packed type (f4e2m1x2)
  a row's ``any`` leaves out is recorded by the database's definition of ``any`` (specs/isa.yaml);
- READ BY HAND: no call path found for the mode, or a type variable no assertion constrains on the
  mode's paths although the table restricts it (the header leaves it to the intrinsics).

A type variable only scalar operands (or an operand the call takes as a C++ struct) use is fixed by the
C++ signature and not screened. Exits 1 when a
looser or an unrecorded stricter flag remains. Nothing is copied from the headers; only type names are
compared.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from header_scan import Elem, Evaluator, Headers, Scope, Tile, Value

from ptospec.loader import load_database
from ptospec.model import Database, Mode, OpSpec

PROFILES = ("a2a3", "a5", "cpu")
MAX_COMPLETIONS = 256


def tile_type(loc: str) -> str:
    return "".join(w.capitalize() for w in loc.split("_"))


class Screen:
    def __init__(self, db: Database, root: Path, profile: str):
        self.db, self.profile = db, profile
        self.dtypes = [n for n, d in db.isa.dtypes.items() if d.profiles is None or profile in d.profiles]
        cpp = {d.cpp: n for n, d in db.isa.dtypes.items()}  # every C++ name, emulated types included
        widths = {n: d.bytes for n, d in db.isa.dtypes.items()}
        self.ev = Evaluator(Headers.read(root, profile, cpp, widths))
        self._debug_args = (root, profile, cpp, widths)
        self._debug_ev: Evaluator | None = None
        self._admitted: dict[tuple, bool] = {}
        self.judged: dict[tuple[str, str, str], set[str]] = {}  # (op, mode, var) -> the types the header admits

    def placements(self, op: OpSpec, mode: Mode) -> list[dict[str, str]]:
        """Every assignment of tile locations the op's loc rules allow the mode on this profile.

        An operand no loc rule restricts keeps the location of the profile's own example (the mode's
        example, or the first base written for this profile)."""
        example = next((e for e in (mode.example, *mode.bases) if e.profile == self.profile), mode.example)
        shown = {name: tile_type(desc.split(",")[0].strip()) for name, desc in example.tiles.items()
                 if isinstance(desc, str) and "," in desc}
        choices: dict[str, list[str]] = {}
        for o in mode.operands:
            if o.role not in ("in", "out", "tmp") or o.kind == "global":
                continue
            allowed: set[str] | None = None
            for r in op.rules:
                if (r.kind == "loc" and o.name in r.operands and (not r.modes or mode.name in r.modes)
                        and (not r.profiles or self.profile in r.profiles)):
                    allowed = set(r.allow) if allowed is None else allowed & set(r.allow)
            if allowed:
                choices[o.name] = sorted(allowed)
            elif o.name in shown:
                choices[o.name] = [shown[o.name]]
        names = list(choices)
        combos = itertools.islice(itertools.product(*(choices[n] for n in names)), MAX_COMPLETIONS)
        return [dict(zip(names, c, strict=True)) for c in combos] or [{}]

    def admits(self, op: OpSpec, mode: Mode, binding: dict[str, str | None]) -> bool:
        """Whether some location assignment the rules allow takes a path no assertion fails."""
        key = (op.name, mode.name, tuple(sorted(binding.items(), key=lambda kv: kv[0])))
        if key not in self._admitted:
            binding = {**self._scalar_types(op, mode), **binding}
            self._admitted[key] = any(self._admits_at(mode, binding, locs) for locs in self.placements(op, mode))
        return self._admitted[key]

    def _admits_at(self, mode: Mode, binding: dict[str, str | None], locs: dict[str, str]) -> bool:
        scope = Scope()
        for o in mode.operands:
            if o.role == "attr":
                scope.names[o.name] = Value(o.enum or "?")
            elif o.role == "scalar" or o.kind == "global":
                scope.names[o.name] = Elem(binding.get(o.dtype))
                if o.kind == "global":
                    scope.names[o.name] = scope.objects[o.name] = Tile(binding.get(o.dtype), None, glob=True)
            else:
                tile = Tile(binding.get(o.dtype), locs.get(o.name))
                scope.names[o.name] = scope.objects[o.name] = tile
        if mode.cpp_conv_tile:  # a ConvTile argument on a Mat tile operand's storage
            data = next(o for o in mode.operands if o.name == mode.cpp_conv_tile.data)
            conv = Tile(binding.get(data.dtype), "Mat", conv=True)
            scope.names[mode.cpp_conv_tile.name] = scope.objects[mode.cpp_conv_tile.name] = conv
        targs = list(mode.cpp_template) or None
        return self.evaluator(mode).call_admits(mode.cpp_name, targs, list(mode.cpp_args), scope, 0, frozenset())

    def _scalar_types(self, op: OpSpec, mode: Mode) -> dict[str, str]:
        """Each type variable only scalar operands use that the mode's rows give one type, bound to it: it
        picks between overloads whose scalar parameters differ (TEXTRACT's uint16_t index against a uint64_t
        quantisation scalar)."""
        rows = [r for r in op.dtypes[self.profile].rows if not r.modes or mode.name in r.modes]
        tiles = {o.dtype for o in mode.operands if o.role in ("in", "out", "tmp")}
        out = {}
        for o in mode.operands:
            if o.role == "scalar" and o.dtype and o.dtype not in tiles:
                types = {t for r in rows for t in r.types.get(o.dtype, ())}
                if len(types) == 1:
                    out[o.dtype] = types.pop()
        return out

    def reachable(self, mode: Mode) -> bool:
        """Whether the mode's call resolves to a function of the headers at all."""
        return bool(self.evaluator(mode).h.functions.get(mode.cpp_name))

    def debug_only(self, mode: Mode) -> bool:
        """Whether the mode's function exists only in a debug build (TPRINT: ``#if defined(_DEBUG) || ...``)."""
        return not self.ev.h.functions.get(mode.cpp_name) and self.evaluator(mode) is not self.ev

    def evaluator(self, mode: Mode) -> Evaluator:
        """The headers as the profile compiles them, or as its debug build (``_DEBUG``) does when only that
        defines the mode's function."""
        if self.ev.h.functions.get(mode.cpp_name):
            return self.ev
        if self._debug_ev is None:
            root, profile, cpp, widths = self._debug_args
            self._debug_ev = Evaluator(Headers.read(root, profile, cpp, widths, extra_macros={"_DEBUG"}))
        return self._debug_ev if self._debug_ev.h.functions.get(mode.cpp_name) else self.ev

    def screen(self, op: OpSpec, mode: Mode) -> list[tuple[str, str, tuple[str, ...]]]:
        """(class, variable, dtypes) flags of one mode: looser, stricter, unconstrained."""
        table = op.dtypes[self.profile]
        rows = [r for r in table.rows if not r.modes or mode.name in r.modes]
        # an operand the C++ call takes as a struct (TMRGSORT's MrgSortExecutedNumList of uint16_t fields) has
        # its element type fixed by the signature, like a scalar's: not screened
        tiles = {o.dtype for o in mode.operands if o.role in ("in", "out", "tmp") and o.dtype and not o.cpp_struct}
        vars_ = [v for v in dict.fromkeys(v for r in rows for v in r.types) if v in tiles]
        flags = []
        alone = {var: [t for t in self.dtypes if self.admits(op, mode, {var: t})] for var in vars_}
        free = {var for var, admitted in alone.items() if len(admitted) == len(self.dtypes)}
        # a variable nothing constrains alone is judged beside each row's types for the other variables (an
        # assertion tying it to another operand's type, TXOR's tmp, decides it then); not when every variable
        # is free alone: tied only to each other (A2/A3 TXOR's T == U), each would be judged by the others'
        # table types, and the table, not the header, would decide them all
        beside = free != set(vars_) and len(rows[0].types) > 1
        for var in vars_:
            in_table = {t for r in rows for t in r.types.get(var, ())}
            loose = [t for t in sorted(in_table) if not any(self._row_admits(op, mode, r, var, t) for r in rows
                                                             if t in r.types.get(var, ()))]
            if loose:
                flags.append(("looser", var, tuple(loose)))
            admitted = alone[var]
            if var in free and beside:
                admitted = [t for t in self.dtypes if any(self._row_admits(op, mode, r, var, t) for r in rows)]
            if len(admitted) < len(self.dtypes):
                self.judged[op.name, mode.name, var] = set(admitted)
            if len(admitted) == len(self.dtypes):
                if len(in_table) < len(self.dtypes):
                    flags.append(("unconstrained", var, tuple(t for t in self.dtypes if t not in in_table)))
                continue
            extra = tuple(t for t in admitted if t not in in_table)
            if extra:
                flags.append(("stricter", var, extra))
        return flags

    def _row_admits(self, op: OpSpec, mode: Mode, row, var: str, t: str) -> bool:
        others = [v for v in row.types if v != var]
        combos = list(itertools.islice(itertools.product(*(row.types[v] for v in others)), MAX_COMPLETIONS))
        return any(self.admits(op, mode, {var: t, **dict(zip(others, c, strict=False))}) for c in combos)


def omitted(op: OpSpec, profile: str, var: str, mode: str) -> set[str]:
    """The dtypes the op's differences record as left out of ``profile``'s table for ``var`` in ``mode``."""
    return {t for d in op.differences for o in d.omits
            if o.profile == profile and o.var == var and (not o.modes or mode in o.modes) for t in o.dtypes}


def packed_outside_any(db: Database, op: OpSpec, profile: str, var: str, mode: str) -> set[str]:
    """The packed dtypes (``per_byte`` > 1) a row's ``any`` leaves out of ``var`` by the database's definition
    (specs/isa.yaml: only tables that name them use them): recorded there, not by the op."""
    dtypes = {n: d for n, d in db.isa.dtypes.items() if d.profiles is None or profile in d.profiles}
    whole = {n for n, d in dtypes.items() if d.per_byte == 1}
    rows = [r for r in op.dtypes[profile].rows if not r.modes or mode in r.modes]
    if not any(whole <= set(r.types.get(var, ())) for r in rows):
        return set()
    return {n for n, d in dtypes.items() if d.per_byte > 1}


def open_types(db: Database, op: OpSpec, mode: Mode, profile: str, var: str, types: tuple[str, ...]) -> tuple[str, ...]:
    """The types of an unconstrained variable that neither a difference nor the definition of ``any`` records."""
    closed = omitted(op, profile, var, mode.name) | packed_outside_any(db, op, profile, var, mode.name)
    return tuple(t for t in types if t not in closed)


def compile_probe(db: Database, args, profile: str, entries) -> dict:
    """The compile probe's verdict on every open type of the unconstrained variables (cpu only)."""
    from compile_probe import Compiler, judge_types

    units = [(op, mode, var, open_types(db, op, mode, profile, var, types))
             for op, mode, cls, var, types in entries if cls == "unconstrained"]
    units = [u for u in units if u[3]]
    compiler = Compiler(args.pto_isa_root)
    verdicts = judge_types(db, compiler, profile, units, lambda m: print(m, file=sys.stderr, flush=True))
    print(f"compile probe: {compiler.compiles} compiles, {compiler.cache_hits} cached", file=sys.stderr)
    return verdicts


def report(db: Database, op: OpSpec, mode: Mode, name: str, profile: str, cls: str, var: str,
           types: tuple[str, ...], probed: dict, counts: Counter[str], verbose: bool) -> None:
    """Print and count one flag of the screen (``name``: the mode as printed; ``probed``: the compile probe's
    verdicts, by op, mode, var, type)."""
    head = f"{op.name:16} {profile:5} {name:14}"
    if cls == "no function":
        counts["read by hand"] += 1
        print(f"{head} READ BY HAND  no function {mode.cpp_name}")
        return
    by_any = packed_outside_any(db, op, profile, var, mode.name)
    if cls == "unconstrained":  # what a difference or the definition of any records is not open
        by_op = omitted(op, profile, var, mode.name) & set(types)
        for done, why in ((by_op, ""), ((by_any & set(types)) - by_op, " (any: packed types only where named)")):
            counts["recorded"] += len(done)
            if verbose and done:
                print(f"{head} recorded  {var}: {', '.join(t for t in types if t in done)}{why}")
        types = tuple(t for t in types if t not in by_op | by_any)
        if not types:
            return
        verdicts = {t: probed[op.name, mode.name, var, t] for t in types if (op.name, mode.name, var, t) in probed}
        rejected: dict[str, list[str]] = {}
        for t, v in verdicts.items():
            if v.kind == "rejected":
                rejected.setdefault(v.where, []).append(t)
        for where, ts in rejected.items():
            counts["does not compile"] += len(ts)
            if verbose:
                print(f"{head} does not compile  {var}: {', '.join(ts)} ({where}: {verdicts[ts[0]].message})")
        compiles = [t for t, v in verdicts.items() if v.kind == "compiles"]
        if compiles:
            counts["stricter unrecorded"] += len(compiles)
            print(f"{head} STRICTER UNRECORDED {var}: {', '.join(compiles)} (compiles on cpu, "
                  f"{verdicts[compiles[0]].message})")
        types = tuple(t for t in types if t not in verdicts or verdicts[t].kind == "inconclusive")
        if types:
            counts["read by hand"] += 1
            why = next((verdicts[t].message for t in types if t in verdicts), "")
            print(f"{head} READ BY HAND  {var}: no assertion constrains it (table leaves out {', '.join(types)})"
                  + (f"; the compile probe is inconclusive: {why}" if why else ""))
        return
    if cls == "stricter":
        recorded = omitted(op, profile, var, mode.name) | by_any
        done = [t for t in types if t in recorded]
        counts["recorded"] += len(done)
        if verbose and done:
            print(f"{head} recorded  {var}: {', '.join(done)}")
        types = tuple(t for t in types if t not in recorded)
        cls = "stricter unrecorded"
    if types:
        counts[cls] += len(types)
        print(f"{head} {cls.upper():9} {var}: {', '.join(types)}")


def stale_omits(db: Database, screen: Screen, profile: str) -> dict[tuple[str, str], set[str]]:
    """(op, var) -> the types a difference's ``omits`` lists that the header rejects in every mode the omission
    covers (each judged by the screen): not omissions of the table but the header's own refusals, so they are
    never counted as recorded."""
    rejected: dict[tuple[str, str], set[str]] = {}
    kept: dict[tuple[str, str], set[str]] = {}
    for op in db.ops.values():
        if profile not in op.dtypes:
            continue
        for mode in op.modes:
            for var in {o.var for d in op.differences for o in d.omits if o.profile == profile}:
                listed = omitted(op, profile, var, mode.name)
                admitted = screen.judged.get((op.name, mode.name, var))
                if admitted is None:  # not judged (unconstrained, not screened): the record stands
                    kept.setdefault((op.name, var), set()).update(listed)
                else:
                    kept.setdefault((op.name, var), set()).update(listed & admitted)
                    rejected.setdefault((op.name, var), set()).update(listed - admitted)
    out = {k: v - kept.get(k, set()) for k, v in rejected.items()}
    return {k: v for k, v in out.items() if v}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pto-isa-root", required=True, type=Path)
    ap.add_argument("--ops", nargs="*", default=None)
    ap.add_argument("--profiles", nargs="*", default=list(PROFILES), choices=PROFILES)
    ap.add_argument("-v", "--verbose", action="store_true", help="also print recorded flags and types the compile "
                    "probe finds rejected")
    ap.add_argument("--compile-probe", action="store_true",
                    help="on cpu, compile the mode's call with each type an unconstrained variable's table leaves "
                         "out (clang++ >= 17, -fsyntax-only, cached): rejected types are no flag, compiling ones "
                         "are stricter flags")
    args = ap.parse_args()
    if not (args.pto_isa_root / "include/pto").is_dir():
        ap.error(f"{args.pto_isa_root}: no include/pto (give the root of a pto-isa checkout)")
    db = load_database()
    unknown = sorted(set(args.ops or ()) - set(db.ops))
    if unknown:
        ap.error(f"unknown op(s): {', '.join(unknown)}")
    counts: Counter[str] = Counter()
    for profile in args.profiles:
        print(f"reading the {profile} headers ...", file=sys.stderr, flush=True)
        screen = Screen(db, args.pto_isa_root, profile)
        entries = []
        for op in sorted(db.ops.values(), key=lambda o: o.name):
            if (args.ops and op.name not in args.ops) or profile not in op.dtypes:
                continue
            for mode in op.modes:
                if not screen.reachable(mode):
                    entries.append((op, mode, "no function", "", ()))
                    continue
                entries += [(op, mode, cls, var, types) for cls, var, types in screen.screen(op, mode)]
        probed = compile_probe(db, args, profile, entries) if args.compile_probe and profile == "cpu" else {}
        for op, mode, cls, var, types in entries:
            name = f"{mode.name} (_DEBUG)" if screen.debug_only(mode) else mode.name  # TPRINT: debug builds only
            report(db, op, mode, name, profile, cls, var, types, probed, counts, args.verbose)
        for (name, var), types in sorted(stale_omits(db, screen, profile).items()):
            counts["listed but rejected"] += len(types)
            print(f"{name:16} {profile:5} {'':14} STALE     {var}: omits lists {', '.join(sorted(types))}, which the "
                  "header rejects in every mode the record covers")
    probe = f", does not compile {counts['does not compile']}" if args.compile_probe else ""
    print(f"looser {counts['looser']}, stricter unrecorded {counts['stricter unrecorded']}, "
          f"recorded {counts['recorded']}{probe}, read by hand {counts['read by hand']}, "
          f"stale (omits the header rejects) {counts['listed but rejected']} "
          "(cells are (op, profile, mode, variable, dtype); read by hand counts (op, profile, mode[, variable]))")
    return 1 if counts["looser"] or counts["stricter unrecorded"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
