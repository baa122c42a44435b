"""``ptospec run``: execute an instruction with the NumPy reference on .npy/.npz data."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvocationError, TileError
from ._common import database, parse_tiles

if TYPE_CHECKING:
    import numpy as np


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="execute an instruction on .npy/.npz inputs with the reference executor",
        description="Execute an instruction with the NumPy reference semantics. Inputs come from --input "
        "NAME=FILE.npy (repeat) and/or --inputs FILE.npz (keys are operand names). An output given as input "
        "supplies the initial contents (elements outside its valid region stay as they are); otherwise it "
        "starts as zeros. Arrays must have their tile's dtype and shape (--cast converts the dtype); every "
        "name must be an operand of the mode. Tiles default to Vec, row-major, the array's shape and dtype, "
        "fully valid; describe them with --tile NAME=DESC to set valid shapes or layouts. A global operand (a view "
        "of global memory, --tile NAME=gm,16x16xf32,strides=32x1) takes either the view's elements or its whole "
        "buffer (1-D, size elements); its output is saved as NAME (the view's elements) and NAME.buffer. "
        "An instruction reading configuration state (TIMG2COL on the NPUs) takes each register field with "
        "--state REGISTER.FIELD=NUMBER (or a REGISTER.FIELD key of --inputs); a configuration instruction prints "
        "the fields it writes and saves them under the same keys. Outputs go to --output (.npz).",
        epilog="example:\n  ptospec run tcolmin --profile a5 --input src=src.npy "
        "--tile src=vec,16x16xf32,valid=10x16 --tile dst=vec,1x16xf32 --output out.npz",
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
    )
    p.add_argument("op")
    p.add_argument("--profile", "-p", required=True)
    p.add_argument("--mode", "-m")
    p.add_argument("--tile", "-t", action="append", metavar="NAME=DESC")
    p.add_argument("--input", "-i", action="append", metavar="NAME=FILE.npy")
    p.add_argument("--inputs", metavar="FILE.npz")
    p.add_argument("--scalar", "-s", action="append", metavar="NAME=VALUE", help="value of a scalar operand")
    p.add_argument("--state", action="append", metavar="REGISTER.FIELD=VALUE",
                   help="a field of a configuration register the instruction reads (isa.yaml state)")
    p.add_argument("--output", "-o", default=None, help="output .npz, written at exactly this path "
                   "(default: OP-out.npz)")
    p.add_argument("--cast", action="store_true",
                   help="convert input arrays to their tile's dtype (without it, a dtype mismatch is an error)")
    p.set_defaults(func=run)


def _number(item: str, option: str = "--scalar") -> tuple[str, int | float]:
    from ._arrays import FLOAT_TEXT, INT_TEXT

    name, sep, value = item.partition("=")
    value = value.strip()
    if not sep or not name.strip():
        raise InvocationError(f"{option} expects NAME=NUMBER, got {item!r}", rule="cli.args", where=option)
    if INT_TEXT.fullmatch(value):
        return name.strip(), int(value)
    if len(value) <= 64 and FLOAT_TEXT.fullmatch(value):
        return name.strip(), float(value)
    raise InvocationError(f"{option} expects NAME=NUMBER (ASCII digits), got {item!r}", rule="cli.args",
                          where=option)


def _put(data: dict, name: str, value, where: str) -> None:
    if name in data:
        raise InvocationError(f"{name!r} is given twice", rule="cli.args", where=where)
    data[name] = value


def _registers(db, data: dict) -> dict[str, dict[str, object]]:
    """Take the ``REGISTER.FIELD`` entries out of ``data``, grouped per configuration register."""
    import numpy as np

    out: dict[str, dict[str, object]] = {}
    for key in [k for k in data if "." in k]:
        register, _, field = key.partition(".")
        if register not in db.isa.state or field not in db.isa.state[register].fields:
            continue  # an operand's name, or an unknown register: reported as an unknown input
        value = data.pop(key)
        if isinstance(value, np.ndarray | np.generic):  # an --inputs member: one number
            if value.size != 1 or value.dtype.kind not in "biuf":
                raise InvocationError(f"{key} must hold one number, got an array of shape {value.shape} and dtype "
                                      f"{value.dtype}", rule="run.state", where="--inputs")
            value = value.item()
        out.setdefault(register, {})[field] = value
    return out


def _dtype_of(db, name: str, arr: np.ndarray) -> str:

    for dtype_name, dt in db.isa.dtypes.items():
        if dt.numpy == arr.dtype.name:
            return dtype_name
    raise TileError(f"{name}: array dtype {arr.dtype} has no ISA dtype; describe it with --tile", rule="run.dtype")


def run(args) -> int:
    import numpy as np

    from ..asm.types import parse_descriptor
    from ..executor import configure, execute, view_elements
    from ..outputs import write_npz
    from ..tile import GlobalDesc, TileDesc
    from ..validator import resolve

    db = database(args)
    data = _given_data(args)
    state = _registers(db, data)
    tiles = parse_tiles(db, args.tile)
    # the tiles given, with their locations, tell modes with the same operands apart
    op, mode = resolve(db, args.op, args.mode, args.profile, {**dict.fromkeys(data), **tiles})
    data.update(state)
    known = {o.name for o in mode.operands} | set(mode.reads_state)
    unknown = sorted((set(data) | set(tiles)) - known)
    if unknown:
        raise InvocationError(f"{op.name} {mode.name} has no operand(s) {', '.join(unknown)} (its operands: "
                              f"{', '.join(o.name for o in mode.operands)})", rule="run.unknown-input")
    reverse = {dt.numpy: name for name, dt in db.isa.dtypes.items()}
    for o in mode.operands:
        if o.name in tiles or o.name not in data or o.role == "scalar":
            continue
        arr = data[o.name]
        if not isinstance(arr, np.ndarray):
            raise TileError(f"{o.name} is a tile operand; give it an array, not a number", rule="run.input")
        if o.is_global:
            tiles[o.name] = parse_descriptor(f"gm, {'x'.join(map(str, arr.shape))}x{_dtype_of(db, o.name, arr)}",
                                             db.isa)
            continue
        if arr.ndim != 2:
            raise TileError(f"{o.name}: expected a 2-D array, got shape {arr.shape}", rule="run.shape")
        dtype = reverse.get(arr.dtype.name) if arr.dtype.fields is None else None
        if dtype is None:
            raise TileError(f"{o.name}: array dtype {arr.dtype} has no ISA dtype; describe it with --tile",
                            rule="run.dtype")
        tiles[o.name] = TileDesc("Vec", dtype, arr.shape[0], arr.shape[1], arr.shape[0], arr.shape[1])
    missing = [o.name for o in mode.operands if o.name not in tiles and o.role != "scalar"]
    if missing:
        raise InvocationError(f"no tile or data for {', '.join(missing)}; give --tile or --input",
                              rule="run.missing-input")
    for o in mode.operands:
        if o.role == "scalar" and o.name not in tiles:
            raise InvocationError(f"scalar {o.name} needs --tile {o.name}=DTYPE", rule="run.missing-input")
    outputs = execute(db, op.name, mode.name, args.profile, tiles, data, cast=args.cast)
    saved: dict[str, np.ndarray] = {}
    if mode.effect is not None:
        print(f"{op.name} {mode.name} has no data semantics ({mode.effect.kind}): the invocation is legal and "
              "nothing was executed; every operand keeps its contents")
        for register, fields in configure(db, op.name, mode.name, args.profile, tiles, data).items():
            print(f"sets {register}: " + ", ".join(f"{k}={v}" for k, v in fields.items()))
            saved.update({f"{register}.{k}": np.asarray(v) for k, v in fields.items()})
    out_path = Path(args.output or f"{op.name}-out.npz")
    for name, arr in outputs.items():
        desc = tiles[name]
        if isinstance(desc, GlobalDesc):  # the view's elements, and the whole buffer behind it
            saved[name] = view_elements(desc, arr)
            saved[f"{name}.buffer"] = arr
        else:
            saved[name] = arr
    write_npz(out_path, saved, rule="run.output", where="--output")
    for name, arr in saved.items():
        print(f"{name}: {arr.shape} {arr.dtype}")
    print(f"wrote {out_path}")
    return 0


def _given_data(args) -> dict[str, object]:
    """The arrays, scalars and register fields of --inputs, --input, --scalar and --state, each name once."""
    from ._arrays import load_arrays

    data: dict[str, object] = {}
    if args.inputs:
        archive = load_arrays(args.inputs, "--inputs")
        if not isinstance(archive, dict):
            raise InvocationError(f"{args.inputs} is not an .npz archive", rule="run.input", where="--inputs")
        for key, value in archive.items():
            _put(data, key, value, "--inputs")
    for item in args.input or []:
        name, sep, path = item.partition("=")
        if not sep or not name.strip():
            raise InvocationError(f"--input expects NAME=FILE.npy, got {item!r}", rule="cli.args", where="--input")
        array = load_arrays(path, "--input")
        if isinstance(array, dict):
            raise InvocationError(f"{path} is an .npz archive; give it with --inputs", rule="run.input",
                                  where="--input")
        _put(data, name.strip(), array, "--input")
    for item in args.scalar or []:
        _put(data, *_number(item), "--scalar")
    for item in args.state or []:
        name, value = _number(item, "--state")
        _put(data, name, value, "--state")
    return data
