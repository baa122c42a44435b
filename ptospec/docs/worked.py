"""A worked example per instruction: a small legal case with a partial valid region, run through the
reference executor at site-generation time and drawn as inline SVG grids.

Nothing here is hand-written data: the configuration comes from the conformance case derivation
(legal tiles for a small valid-region target), the inputs from its deterministic ``ties`` pattern
(small integers, easy to follow), and the outputs from ``ptospec.executor.execute``.
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass
from html import escape

import numpy as np

from .. import attrs
from ..conformance.cases import example_target, example_tiles, legal, reshape, shaped, with_dtypes
from ..conformance.data import make_inputs
from ..errors import PtospecError
from ..executor import execute, view_elements
from ..model import Database, Mode, OpSpec
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from ..validator import validate
from .labels import label

# Small valid-region targets, tried in order: (rows, cols) of the destination's valid region.
TARGETS = ((3, 5), (3, 6), (2, 5), (4, 4), (3, 8), (2, 8), (1, 5), (5, 1), (2, 16), (4, 16))
# Physical-shape roundings tried (rows to 2**kr, cols to 2**kc): small grids first.
ROUNDINGS = ((2, 3), (1, 3), (0, 3), (2, 4), (2, 5), (1, 5), (3, 3), (0, 5), (2, 2), (3, 4))
# Element types that print shortest first (integers, then floats); ties broken by table order.
READABLE = ("i32", "i16", "i8", "u32", "u16", "u8", "f32", "f16", "bf16")
MAX_CELLS = 16  # a grid wider or taller than this is drawn cropped

CELL = 30
GAP = 26


@dataclass(frozen=True)
class Worked:
    op: str
    mode: str
    profile: str
    tiles: dict[str, TileDesc | ScalarDesc | AttrDesc]
    inputs: dict[str, object]
    before: dict[str, np.ndarray]  # outputs' contents before the instruction
    after: dict[str, np.ndarray]


def _bindings(db: Database, op: OpSpec, mode: Mode, profile: str, limit: int) -> list[dict[str, str]]:
    """Per dtype-table row of the mode: the most readable type of each variable, then each attribute value;
    the first ``limit`` of them, the most readable types first.  Made lazily: the attribute values of some
    modes combine into tens of thousands of bindings (TIMG2COL's img2col parameters)."""
    table = op.dtypes.get(profile)
    if table is None:
        return []

    def rank(d: str) -> int:
        return READABLE.index(d) if d in READABLE else len(READABLE)

    bases = [{v: min(row.types[v], key=rank) for v in mode.type_vars} for row in table.rows
             if mode.name in row.modes and all(v in row.types for v in mode.type_vars)]
    bases.sort(key=lambda b: tuple(rank(b[v]) for v in mode.type_vars))  # stable: table order among equals
    out: list[dict[str, str]] = []
    seen: set[tuple] = set()
    values = [[(a.name, value) for value in attrs.sample_values(db.isa, a)] for a in mode.attrs]
    for base in bases:
        for chosen in itertools.product(*values):
            binding = {**base, **dict(chosen)}
            key = tuple(binding.items())  # equal as the dicts are (the keys come in one order)
            if key not in seen:
                seen.add(key)
                out.append(binding)
                if len(out) == limit:
                    return out
    return out


def _profiles(db: Database, mode: Mode) -> list[str]:
    return [mode.example.profile] + [p for p in db.isa.profiles if p != mode.example.profile]


def _legal_tiles(db: Database, op: OpSpec, mode: Mode, profile: str, binding: dict[str, str],
                 target: tuple[int, int], partial: bool):
    base = with_dtypes(db, mode, example_tiles(db, mode), binding)
    for kr, kc in ROUNDINGS:
        tiles = shaped(db.isa, base, target, partial, kr, kc, mode.scaled_valid, mode.fixed_shape,
                         mode.valid_divisors, mode.example.valid, mode.case_shapes == "proportional",
                         mode.valid_axes)
        if legal(validate(db, op.name, mode.name, profile, tiles)):
            return tiles
    return None


def compute(db: Database, op: OpSpec, mode: Mode | None = None) -> Worked:
    """The first small legal case (partial valid region preferred) the executor runs without error, else
    one at the example's valid region."""
    mode = mode or op.modes[0]
    seed = zlib.crc32(f"worked:{op.name}:{mode.name}".encode())
    for partial in (True, False):
        for profile in _profiles(db, mode):
            for binding in _bindings(db, op, mode, profile, 6):
                for target in TARGETS:
                    tiles = _legal_tiles(db, op, mode, profile, binding, target, partial)
                    if tiles is None:
                        continue
                    data = make_inputs(db, op, mode, tiles, seed, "ties")
                    before = {o.name: np.array(data[o.name]) for o in mode.operands if o.role == "out"}
                    try:
                        after = execute(db, op.name, mode.name, profile, tiles, data)
                    except PtospecError:
                        continue
                    return Worked(op.name, mode.name, profile, tiles, data, before, after)
    # no small target fits (256 histogram bins, a sort's whole blocks): the example's own valid region,
    # in a larger tile if it can be
    profile, base = mode.example.profile, example_tiles(db, mode)
    for partial in (True, False):
        tiles = reshape(db, op, mode, profile, base, example_target(base), partial, legal)
        if tiles is None:
            continue
        data = make_inputs(db, op, mode, tiles, seed, "ties")
        before = {o.name: np.array(data[o.name]) for o in mode.operands if o.role == "out"}
        try:
            return Worked(op.name, mode.name, profile, tiles, data, before,
                          execute(db, op.name, mode.name, profile, tiles, data))
        except PtospecError:
            continue
    raise PtospecError(f"{op.name}: no small legal case for a worked example", rule="docs.worked-example")


def _fmt(value) -> str:
    v = value.item() if hasattr(value, "item") else value
    if isinstance(v, float) or (hasattr(value, "dtype") and value.dtype.kind not in "iub"):
        f = float(v)
        if np.isnan(f):
            return "NaN"
        if np.isinf(f):
            return "∞" if f > 0 else "−∞"
        if f == int(f) and abs(f) < 1e6:
            return str(int(f)).replace("-", "−")
        return f"{f:.3g}".replace("-", "−")
    return str(int(v)).replace("-", "−")


def _changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Elements whose bytes differ (NaN-safe, any dtype)."""
    b = np.ascontiguousarray(before)
    a = np.ascontiguousarray(after)
    width = a.dtype.itemsize
    return (a.view(np.uint8).reshape(*a.shape, width) != b.view(np.uint8).reshape(*b.shape, width)).any(axis=-1)


def _grid(name: str, desc: TileDesc, values: np.ndarray, kind: str, lang: str,
          written: np.ndarray | None = None, whole: bool = False) -> str:
    """One tile as compact SVG: the tile shaded, its valid region white and outlined (dashed), written
    elements highlighted, grid lines as one path, one text per shown value (an input's valid region, or its
    whole tile when the semantics read it: ``whole``)."""
    rows, cols = min(desc.rows, MAX_CELLS), min(desc.cols, MAX_CELLS)
    vr, vc = min(desc.valid_row or 0, rows), min(desc.valid_col or 0, cols)
    width, height = cols * CELL + 2, rows * CELL + 2
    parts = [f'<rect class="pw-outside" x="1" y="1" width="{cols * CELL}" height="{rows * CELL}"/>']
    if vr and vc:
        parts.append(f'<rect class="pw-valid" x="1" y="1" width="{vc * CELL}" height="{vr * CELL}"/>')
    texts = []
    for i in range(rows):
        for j in range(cols):
            x, y = 1 + j * CELL, 1 + i * CELL
            if kind == "in":
                shown = whole or (i < vr and j < vc)
            else:
                shown = written is not None and bool(written[i, j])
                if shown:
                    parts.append(f'<rect class="pw-written" x="{x}" y="{y}" width="{CELL}" height="{CELL}"/>')
            if shown:
                txt = _fmt(values[i, j])
                size = "" if len(txt) <= 4 else ' font-size="9"'
                texts.append(f'<text x="{x + CELL // 2}" y="{y + CELL // 2 + 4}"{size}>{escape(txt)}</text>')
    lines = "".join(f"M1 {1 + i * CELL}h{cols * CELL}" for i in range(rows + 1))
    lines += "".join(f"M{1 + j * CELL} 1v{rows * CELL}" for j in range(cols + 1))
    parts.append(f'<path class="pw-lines" d="{lines}"/>')
    if vr and vc:
        parts.append(f'<rect class="pw-region" x="1" y="1" width="{vc * CELL}" height="{vr * CELL}"/>')
    crop = desc.rows > rows or desc.cols > cols
    caption = (f"{name}: {desc.rows}×{desc.cols} {desc.dtype}, {label('valid_region', lang)} "
               f"{desc.valid_row or 0}×{desc.valid_col or 0}" + (f" ({label('cropped', lang)})" if crop else ""))
    role = label("worked_input" if kind == "in" else "worked_output", lang)
    return (f'<figure class="pw-tile"><svg role="img" aria-label="{escape(role)} {escape(caption)}" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-size="11">'
            + "".join(parts) + "".join(texts) + f"</svg><figcaption>{escape(caption)}</figcaption></figure>")


def _as_grid(desc: GlobalDesc):
    """A view shown as a grid: its outer dimensions flattened into rows, the last one as columns."""
    cols = desc.shape[-1] or 1
    rows = int(np.prod(desc.shape[:-1])) if desc.rank > 1 else 1
    grid = TileDesc("Vec", desc.dtype, rows, cols, rows, cols)

    def view(buffer: np.ndarray) -> np.ndarray:
        return view_elements(desc, buffer).reshape(rows, cols)

    return grid, view


def render(db: Database, worked: Worked, lang: str) -> str:
    """The example as raw HTML: inputs, then outputs, with the scalars/attributes in words."""
    op = db.ops[worked.op]
    mode = op.mode(worked.mode)
    ins, outs, values = [], [], []
    for o in mode.operands:
        desc = worked.tiles[o.name]
        if isinstance(desc, AttrDesc):
            values.append(f"<code>{escape(o.name)} = {escape(attrs.spell_value(desc.value))}</code>")
        elif isinstance(desc, ScalarDesc):
            values.append(f"<code>{escape(o.name)} = {escape(_fmt(worked.inputs[o.name]))}</code> ({desc.dtype})")
        elif isinstance(desc, GlobalDesc):  # a view of global memory: its elements as rows of its last dimension
            grid_desc, view = _as_grid(desc)
            if o.role == "in":
                ins.append(_grid(o.name, grid_desc, view(np.asarray(worked.inputs[o.name])), "in", lang))
            else:
                after = view(worked.after[o.name])
                outs.append(_grid(o.name, grid_desc, after, "out", lang,
                                  _changed(view(np.asarray(worked.before[o.name])), after)))
        elif o.role == "in":
            whole = any(stmt.reads == "tile" for stmt in mode.semantics)  # TEXTRACT's window may leave it
            ins.append(_grid(o.name, desc, np.asarray(worked.inputs[o.name]), "in", lang, whole=whole))
        elif o.role == "out":
            after = worked.after[o.name]
            outs.append(_grid(o.name, desc, after, "out", lang, _changed(worked.before[o.name], after)))
    parts = ['<div class="pw-example">']
    scalars = f'<p class="pw-values">{", ".join(values)}</p>' if values else ""
    parts.append(f'<div class="pw-row"><span class="pw-label">{label("worked_input", lang)}</span>'
                 + scalars + "".join(ins) + "</div>")
    parts.append(f'<div class="pw-row"><span class="pw-label">{label("worked_output", lang)}</span>'
                 + "".join(outs) + "</div>")
    parts.append(f'<p class="pw-legend"><span class="pw-key pw-valid"></span> {label("legend_valid", lang)} '
                 f'<span class="pw-key pw-outside"></span> {label("legend_outside", lang)} '
                 f'<span class="pw-key pw-written"></span> {label("legend_written", lang)}</p>')
    parts.append("</div>")
    return "".join(parts)
