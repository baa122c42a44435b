"""``ptospec run``: execute an instruction with the NumPy reference on .npy/.npz data."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..asm.types import parse_descriptor
from ..errors import InvocationError, TileError
from ..executor import execute, view_elements
from ..tile import GlobalDesc, TileDesc
from ..validator import resolve
from ._common import database, parse_tiles


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="execute an instruction on .npy/.npz inputs with the reference executor",
        description="Execute an instruction with the NumPy reference semantics. Inputs come from --input "
        "NAME=FILE.npy (repeat) and/or --inputs FILE.npz (keys are operand names). An output given as input "
        "supplies the initial contents (elements outside its valid region stay as they are); otherwise it "
        "starts as zeros. Tiles default to Vec, row-major, the array's shape and dtype, fully valid; "
        "describe them with --tile NAME=DESC to set valid shapes or layouts. A global operand (a view of global "
        "memory, --tile NAME=gm,16x16xf32,strides=32x1) takes either the view's elements or its whole buffer "
        "(1-D, size elements); its output is saved as NAME (the view's elements) and NAME.buffer. "
        "Outputs go to --output (.npz).",
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
    p.add_argument("--output", "-o", default=None, help="output .npz (default: OP-out.npz)")
    p.set_defaults(func=run)


def _load(path: str, where: str):
    p = Path(path)
    if not p.is_file():
        raise InvocationError(f"no such file: {path}", rule="run.input", where=where)
    try:
        return np.load(p, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise InvocationError(f"cannot read {path}: {exc}", rule="run.input", where=where) from None


def _dtype_of(db, name: str, arr: np.ndarray) -> str:
    for dtype_name, dt in db.isa.dtypes.items():
        if dt.numpy == arr.dtype.name:
            return dtype_name
    raise TileError(f"{name}: array dtype {arr.dtype} has no ISA dtype; describe it with --tile", rule="run.dtype")


def run(args) -> int:
    db = database(args)
    data: dict[str, object] = {}
    if args.inputs:
        archive = _load(args.inputs, "--inputs")
        if not hasattr(archive, "files"):
            raise InvocationError(f"{args.inputs} is not an .npz archive", rule="run.input", where="--inputs")
        data.update({k: archive[k] for k in archive.files})
    for item in args.input or []:
        name, sep, path = item.partition("=")
        if not sep:
            raise InvocationError(f"--input expects NAME=FILE.npy, got {item!r}", rule="cli.args", where="--input")
        data[name.strip()] = _load(path, "--input")
    for item in args.scalar or []:
        name, sep, value = item.partition("=")
        try:
            data[name.strip()] = float(value) if any(c in value for c in ".eEn") else int(value)
        except ValueError:
            raise InvocationError(f"--scalar expects NAME=NUMBER, got {item!r}", rule="cli.args",
                                  where="--scalar") from None
        if not sep:
            raise InvocationError(f"--scalar expects NAME=NUMBER, got {item!r}", rule="cli.args", where="--scalar")
    tiles = parse_tiles(db, args.tile)
    op, mode = resolve(db, args.op, args.mode, args.profile, set(tiles) | set(data))
    reverse = {dt.numpy: name for name, dt in db.isa.dtypes.items()}
    for o in mode.operands:
        if o.name in tiles or o.name not in data or o.role == "scalar":
            continue
        arr = np.asarray(data[o.name])
        if o.is_global:
            tiles[o.name] = parse_descriptor(f"gm, {'x'.join(map(str, arr.shape))}x{_dtype_of(db, o.name, arr)}",
                                             db.isa)
            continue
        if arr.ndim != 2:
            raise TileError(f"{o.name}: expected a 2-D array, got shape {arr.shape}", rule="run.shape")
        dtype = reverse.get(arr.dtype.name)
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
    outputs = execute(db, op.name, mode.name, args.profile, tiles, data)
    out_path = Path(args.output or f"{op.name}-out.npz")
    saved: dict[str, np.ndarray] = {}
    for name, arr in outputs.items():
        desc = tiles[name]
        if isinstance(desc, GlobalDesc):  # the view's elements, and the whole buffer behind it
            saved[name] = view_elements(desc, arr)
            saved[f"{name}.buffer"] = arr
        else:
            saved[name] = arr
    np.savez(out_path, **saved)
    for name, arr in saved.items():
        print(f"{name}: {arr.shape} {arr.dtype}")
    print(f"wrote {out_path}")
    return 0
