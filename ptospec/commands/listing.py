"""``ptospec list``: every instruction with its family and modes."""

from __future__ import annotations

from ._common import database


def register(sub) -> None:
    p = sub.add_parser("list", help="list the instructions in the database",
                       description="List every instruction: name, family, the kind it expands (if any), modes and "
                       "the profiles it is specified for.")
    p.add_argument("--family", help="only this family")
    p.set_defaults(func=run)


def run(args) -> int:
    db = database(args)
    ops = [op for op in db.ops.values() if not args.family or op.family == args.family]
    if args.family and args.family not in db.isa.families:
        from ..errors import InvocationError

        raise InvocationError(f"unknown family {args.family!r} (known: {', '.join(db.isa.families)})",
                              rule="cli.family", where="--family")
    width = max((len(op.name) for op in ops), default=4)
    fam_width = max((len(op.family) for op in ops), default=6)
    kind_width = max((len(op.kind or "-") for op in ops), default=1)
    for op in sorted(ops, key=lambda o: (o.family, o.name)):
        modes = ",".join(m.name for m in op.modes)
        print(f"{op.name:<{width}}  {op.family:<{fam_width}}  {op.kind or '-':<{kind_width}}  modes={modes:<20} "
              f"profiles={','.join(op.dtypes)}")
    print(f"{len(ops)} instruction(s)")
    return 0
