"""``ptospec list``: every instruction with its family and modes."""

from __future__ import annotations

from ..program.spec import program_spec
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
        effects = sorted({m.effect.kind for m in op.modes if m.effect is not None})
        note = f"  no data semantics ({','.join(effects)})" if effects else ""
        print(f"{op.name:<{width}}  {op.family:<{fam_width}}  {op.kind or '-':<{kind_width}}  modes={modes:<20} "
              f"profiles={','.join(op.dtypes)}{note}")
    print(f"{len(ops)} instruction(s)")
    if not args.family:  # the program layer's own instructions (specs/program.yaml)
        spec = program_spec(db)
        layer = [n for n, i in spec.instructions.items() if not i.synchronisation]
        print(f"program layer: {len(layer)} instruction(s): {', '.join(layer)}")
        print(f"program layer, synchronisation (no data semantics): {len(spec.sync)} instruction(s): "
              f"{', '.join(spec.sync)}")
        if db.isa.unspecified:
            print(f"pages without a specification: {len(db.isa.unspecified)}: "
                  + ", ".join(f"{name} ({page})" for page, name, _ in db.isa.unspecified))
    return 0
