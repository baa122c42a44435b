"""``ptospec check``: is an invocation legal on a profile?"""

from __future__ import annotations

from ..errors import InvocationError
from ._common import database, parse_tiles


def register(sub) -> None:
    p = sub.add_parser(
        "check", help="validate an invocation (assembly line or tile descriptors) on a profile",
        description="Validate one invocation. Give either an assembly line (any of the three forms) with --asm, "
        "or an op name with one --tile NAME=DESCRIPTOR per operand. A descriptor is the inside of a "
        "!pto.tile_buf<...> type, e.g. vec,16x256xf32,valid=16x255,layout=nd (layouts: nd, dn, and for "
        "boxed tiles nz, zn, zz, nn; a bare dtype is a scalar). "
        "Exit 0: legal; 1: illegal (every violation printed with its rule id); 2: bad input.",
        epilog="examples:\n  ptospec check tcolmin --profile a2a3 --tile src=vec,16x16xf32 --tile dst=vec,1x16xf32\n"
        "  ptospec check --profile a5 --asm 'pto.tcolmin ins(%s : !pto.tile_buf<vec, 16x16xf16>) "
        "outs(%d : !pto.tile_buf<vec, 1x16xf16>)'",
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
    )
    p.add_argument("op", nargs="?", help="instruction name (not needed with --asm)")
    p.add_argument("--profile", "-p", required=True, help="cpu, a2a3 or a5")
    p.add_argument("--mode", "-m", help="mode of a multi-mode instruction (inferred from the operands if omitted)")
    p.add_argument("--tile", "-t", action="append", metavar="NAME=DESC", help="one operand (repeat)")
    p.add_argument("--asm", help="an assembly line instead of op + --tile")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..asm.forms import parse_line
    from ..validator import validate

    db = database(args)
    if args.asm:
        if args.tile:
            raise InvocationError("give either --asm or --tile, not both", rule="cli.args", where="--asm")
        parsed = parse_line(db, args.asm, args.mode, args.profile)
        if args.op and args.op.lower().removeprefix("pto.") != parsed.op:
            raise InvocationError(f"the line is {parsed.op}, not {args.op}", rule="cli.args", where="--asm")
        op, mode, operands, implied = parsed.op, parsed.mode, parsed.operands, parsed.implied
    else:
        if not args.op:
            raise InvocationError("name an op (or give --asm)", rule="cli.args", where="OP")
        if not args.tile:
            raise InvocationError("give one --tile NAME=DESCRIPTOR per operand", rule="cli.args", where="--tile")
        op, mode, operands, implied = args.op, args.mode, parse_tiles(db, args.tile), ()
    report = validate(db, op, mode, args.profile, operands, implied)
    head = f"{report.op} {report.mode} on {report.profile}"
    if report.ok:
        print(f"legal: {head}")
    else:
        print(f"illegal: {head}: {len(report.violations)} violation(s)")
        for v in report.violations:
            print(f"  {v.one_line()}")
    for d in report.deferred:
        print(f"  deferred to run time (valid shape not known): {d}")
    if implied:
        rules = f"; its rules are not checked here: {', '.join(report.implied)}" if report.implied else ""
        print(f"  implied by the form (allocated by the implementation): {', '.join(implied)}{rules}")
    if args.asm and parsed.alternatives:
        print(f"  the line also fits mode(s) {', '.join(parsed.alternatives)}; choose one with --mode")
    return 0 if report.ok else 1
