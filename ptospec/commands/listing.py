"""``ptospec list``: every instruction with its family and modes; with ``--upstream``, the upstream pages."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvocationError
from ._common import database


def register(sub) -> None:
    p = sub.add_parser("list", help="list the instructions in the database",
                       description="List every instruction: name, family, the kind it expands (if any), modes and "
                       "the profiles it is specified for. With --upstream PATH, account instead for every page "
                       "under PATH/docs/isa/tile/ops/: per family, the pages an instruction or the program layer "
                       "covers, those recorded as describing nothing implemented, and those still missing (named).")
    p.add_argument("--family", help="only this family")
    p.add_argument("--upstream", metavar="PATH", help="a pto-isa checkout whose tile-op pages to account for")
    p.add_argument("--strict", action="store_true",
                   help="with --upstream: exit 1 when a page is missing or the database names a page the checkout "
                        "does not have")
    p.set_defaults(func=run)


def run(args) -> int:
    db = database(args)
    if args.strict and not args.upstream:
        raise InvocationError("--strict needs --upstream PATH", rule="cli.strict", where="--strict")
    if args.upstream:
        return _upstream(db, args)
    _check_family(args.family, list(db.isa.families))
    ops = [op for op in db.ops.values() if not args.family or op.family == args.family]
    width = max((len(op.name) for op in ops), default=4)
    fam_width = max((len(op.family) for op in ops), default=6)
    kind_width = max((len(op.kind or "-") for op in ops), default=1)
    for op in sorted(ops, key=lambda o: (o.family, o.name)):
        modes = ",".join(m.name for m in op.modes)
        effects = sorted({m.effect.kind for m in op.modes if m.effect is not None})
        note = f"  no data semantics ({','.join(effects)})" if effects else ""
        if op.status:
            note += f"  {op.status['state']} upstream" + (f" (now {op.status['to']})" if op.status.get("to") else "")
        print(f"{op.name:<{width}}  {op.family:<{fam_width}}  {op.kind or '-':<{kind_width}}  modes={modes:<20} "
              f"profiles={','.join(op.dtypes)}{note}")
    print(f"{len(ops)} instruction(s)")
    if not args.family:  # the program layer's own instructions (specs/program.yaml)
        from ..program.spec import program_spec

        spec = program_spec(db)
        layer = [n for n, i in spec.instructions.items() if not i.synchronisation]
        print(f"program layer: {len(layer)} instruction(s): {', '.join(layer)}")
        print(f"program layer, synchronisation (no data semantics): {len(spec.sync)} instruction(s): "
              f"{', '.join(spec.sync)}")
        if db.isa.unspecified:
            print(f"pages without a specification: {len(db.isa.unspecified)}: "
                  + ", ".join(f"{name} ({page})" for page, name, _ in db.isa.unspecified))
    return 0


def _upstream(db, args) -> int:
    from ..accounting import account, only_family, report
    from ..program.spec import load_program_spec

    program = load_program_spec(Path(db.root), db)
    root = Path(args.upstream)
    acc = account(db, {*program.instructions, *program.sync}, root,
                  {name: i.intrinsic for name, i in program.instructions.items() if i.intrinsic})
    if args.family:
        _check_family(args.family, [f.family for f in acc.families])
        acc = only_family(acc, db, args.family)
    for line in report(acc, root):
        print(line)
    return 1 if args.strict and (acc.missing or acc.stale) else 0


def _check_family(family: str | None, known: list[str]) -> None:
    if family is not None and family not in known:  # an empty name is no family either
        raise InvocationError(f"unknown family {family!r} (known: {', '.join(known)})", rule="cli.family",
                              where="--family")
