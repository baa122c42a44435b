"""``ptospec show OP``: a terminal view of one instruction's spec."""

from __future__ import annotations

from ..errors import InvocationError
from ._common import database, text


def register(sub) -> None:
    p = sub.add_parser("show", help="show one instruction's spec",
                       description="Print an instruction's summary, operands, semantics, assembly forms, C++ "
                       "intrinsic, dtype tables per profile, rules, numerics and recorded differences.")
    p.add_argument("op", help="instruction name, e.g. tcolargmax")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the prose (default: en)")
    p.set_defaults(func=run)


def run(args) -> int:
    from .. import attrs
    from ..asm.forms import FORMS, print_template
    from ..docs.examples import asm_examples

    db = database(args)
    key = args.op.lower().removeprefix("pto.")
    if key not in db.ops:
        raise InvocationError(f"unknown op {args.op!r} (see 'ptospec list')", rule="invocation.op")
    op = db.ops[key]
    lang = args.lang
    print(f"{op.name.upper()}  ({op.family})")
    if op.status:
        to = f" to {op.status['to'].upper()}" if op.status.get("to") else ""
        print(f"  {op.status['state'].upper()}{to} upstream after the snapshot: {text(op.status['text'], lang)} "
              f"(source: {op.status['source']})")
    print(f"  {text(op.summary, lang)}")
    print(f"\n  {text(op.description, lang)}")
    for mode in op.modes:
        print(f"\nmode {mode.name}: {text(mode.title, lang)}")
        print("  operands:")
        for o in mode.operands:
            typed = f"dtype {o.dtype:<3}" if not o.is_attr else attrs.describe(db.isa, o)
            print(f"    {o.name:<8} {o.role:<6} {typed} {text(o.text, lang)}")
        print("  semantics:")
        if mode.effect is not None:
            print(f"    none: no data semantics ({mode.effect.kind}); {text(mode.effect.text, lang)}")
        for s in mode.semantics:
            guard = (f"   (where {s.where_text})" if s.where is not None else "") + (
                f"   (when {s.when_text})" if s.when is not None else "")
            print(f"    {s.text}{guard}")
            for name, _node, let_text in s.lets:
                print(f"        {name} = {let_text}")
            if s.where is not None:
                print(f"        only where {s.where_text}")
            if s.combine:
                print(f"        combine: {s.combine}")
        print("  assembly:")
        for form in FORMS:
            print(f"    {form:<5} {print_template(op, mode, form)}")
        print(f"  example on {mode.example.profile} (ptospec check --profile {mode.example.profile} --asm LINE):")
        for form, line in asm_examples(db, op, mode).items():
            print(f"    {form:<5} {line}")
        print("  C++:")
        for line in mode.cpp_signature.splitlines():
            print(f"    {line}")
    print("\ndtypes:")
    for prof, table in op.dtypes.items():
        print(f"  {prof} ({table.basis}; sources: {', '.join(table.sources)})")
        for row in table.rows:
            types = "  ".join(f"{v}: {'/'.join(ds)}" for v, ds in row.types.items())
            note = f"   # {text(row.note, lang)}" if row.note else ""
            print(f"    [{','.join(row.modes)}] {types}{note}")
    print("\nrules:")
    for r in op.rules:
        scope = f"profiles={','.join(r.profiles)} modes={','.join(r.modes)}"
        detail = r.check_text or f"{','.join(r.operands)} in {'/'.join(r.allow)}"
        when = f" when {r.when_text}" if r.when_text else ""
        print(f"  {r.id:<28} {r.phase:<7} {detail}{when}   [{scope}]")
    n = op.numerics
    print(f"\nnumerics: nan={n.nan} signed_zero={n.signed_zero} ties={n.ties} overflow={n.overflow}")
    for p in n.exact_specials:
        variants = ", ".join(f"{f}={v}" for f, v in db.isa.profiles[p].variants.items())
        print(f"  on {p}: NaN, infinities and signed zeros are defined ({variants or 'IEEE'}) and tested")
    print(f"  {text(n.notes, lang)}")
    if op.differences:
        print("\nrecorded differences between sources:")
        for d in op.differences:
            print(f"  {d.id} ({d.kind}): {text(d.topic, lang)}")
            for src, says in d.claims:
                print(f"    - {src}: {text(says, lang)}")
            print(f"    => {text(d.resolution, lang)}")
    return 0
