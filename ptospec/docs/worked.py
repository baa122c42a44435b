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
from ..asm.types import parse_descriptor
from ..conformance.cases import example_tiles, legal, reshape, with_dtypes
from ..conformance.data import make_inputs
from ..conformance.shaping import example_target, shaper
from ..errors import PtospecError
from ..executor import execute, view_elements, view_offsets
from ..memo import PerDatabase
from ..model import Database, Mode, OpSpec
from ..storage import box_shape, element_offsets, storage_order_name
from ..tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from ..validator import failing_rules, validate
from .labels import label

# Small valid-region targets, tried in order: (rows, cols) of the destination's valid region.
TARGETS = ((3, 5), (3, 6), (2, 5), (4, 4), (3, 8), (2, 8), (1, 5), (5, 1), (2, 16), (4, 16))
# Physical-shape roundings tried (rows to 2**kr, cols to 2**kc): small grids first.
ROUNDINGS = ((2, 3), (1, 3), (0, 3), (2, 4), (2, 5), (1, 5), (3, 3), (0, 5), (2, 2), (3, 4))
# Element types that print shortest first (integers, then floats); ties broken by table order.
READABLE = ("i32", "i16", "i8", "u32", "u16", "u8", "f32", "f16", "bf16")
MAX_CELLS = 16  # a grid wider or taller than this is drawn cropped

CELL = 30
SMALL_CELL = 20  # the cells of a grid with more than SMALL_ABOVE rows or columns
SMALL_ABOVE = 8
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
    shape = shaper(db.isa, base, target, partial, mode.shapes)
    for kr, kc in ROUNDINGS:
        tiles = shape(kr, kc)
        if _legal(db, op, mode, profile, tiles):
            return tiles
    return None


def _legal(db: Database, op: OpSpec, mode: Mode, profile: str, tiles) -> bool:
    """``validate``'s verdict, legal or not; a candidate with a tile (or view) that breaks a well-formedness
    rule is not legal, known without judging the instruction's own rules (most candidates of a search are
    such, and those verdicts are remembered per tile)."""
    if failing_rules(db, op, mode, profile, tiles, ()):  # None (a dynamic value) or nothing: validate decides
        return False
    return legal(validate(db, op.name, mode.name, profile, tiles))


# the worked cases of the last two databases (as ``build.generate`` keeps their pages)
_COMPUTED: PerDatabase[dict[tuple[str, str | None], Worked]] = PerDatabase(2)


def compute(db: Database, op: OpSpec, mode: Mode | None = None) -> Worked:
    """The first small legal case (partial valid region preferred) the executor runs without error, else
    one at the example's valid region.  Remembered for the last database (each language's page shows the
    same case): its arrays are read-only."""
    memo = _COMPUTED.get(db, None, dict)
    key = (op.name, mode.name if mode is not None else None)
    if memo.get(key) is None or db.ops.get(op.name) is not op:
        memo[key] = _frozen(_compute(db, op, mode))
    return memo[key]


def _frozen(w: Worked) -> Worked:
    for values in (w.inputs, w.before, w.after):
        for array in values.values():
            if isinstance(array, np.ndarray):
                array.flags.writeable = False
    return w


def _compute(db: Database, op: OpSpec, mode: Mode | None) -> Worked:
    mode = mode or next((m for m in op.modes if m.worked is not None), op.modes[0])
    seed = zlib.crc32(f"worked:{op.name}:{mode.name}".encode())
    if mode.worked is not None:  # chosen by the spec (lint checks it is legal); its outputs still computed here
        tiles = {n: parse_descriptor(t, db.isa) for n, t in mode.worked.tiles.items()}
        data = make_inputs(db, op, mode, tiles, seed, "ties")
        before = {o.name: np.array(data[o.name]) for o in mode.operands if o.role == "out"}
        return Worked(op.name, mode.name, mode.worked.profile, tiles, data, before,
                      execute(db, op.name, mode.name, mode.worked.profile, tiles, data))
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
    cell, font = (CELL, 11) if max(rows, cols) <= SMALL_ABOVE else (SMALL_CELL, 9)  # two 16 x 16 tiles side by side
    vr, vc = min(desc.valid_row or 0, rows), min(desc.valid_col or 0, cols)
    width, height = cols * cell + 2, rows * cell + 2
    parts = [f'<rect class="pw-outside" x="1" y="1" width="{cols * cell}" height="{rows * cell}"/>']
    if vr and vc:
        parts.append(f'<rect class="pw-valid" x="1" y="1" width="{vc * cell}" height="{vr * cell}"/>')
    texts = []
    for i in range(rows):
        for j in range(cols):
            x, y = 1 + j * cell, 1 + i * cell
            if kind == "in":
                shown = whole or (i < vr and j < vc)
            else:
                shown = written is not None and bool(written[i, j])
                if shown:
                    parts.append(f'<rect class="pw-written" x="{x}" y="{y}" width="{cell}" height="{cell}"/>')
            if shown:
                txt = _fmt(values[i, j])
                size = "" if len(txt) <= (4 if cell == CELL else 2) else f' font-size="{font - 2}"'
                texts.append(f'<text x="{x + cell // 2}" y="{y + cell // 2 + 4}"{size}>{escape(txt)}</text>')
    lines = "".join(f"M1 {1 + i * cell}h{cols * cell}" for i in range(rows + 1))
    lines += "".join(f"M{1 + j * cell} 1v{rows * cell}" for j in range(cols + 1))
    parts.append(f'<path class="pw-lines" d="{lines}"/>')
    if vr and vc:
        parts.append(f'<rect class="pw-region" x="1" y="1" width="{vc * cell}" height="{vr * cell}"/>')
    crop = desc.rows > rows or desc.cols > cols
    caption = (f"{name}: {desc.rows}×{desc.cols} {desc.dtype}, {label('valid_region', lang)} "
               f"{desc.valid_row or 0}×{desc.valid_col or 0}"
               + (f", {label('pad_value', lang)} {desc.pad}" if desc.pad != "Null" else "")
               + (f" ({label('cropped', lang)})" if crop else ""))
    role = label("worked_input" if kind == "in" else "worked_output", lang)
    return (f'<figure class="pw-tile"><svg role="img" aria-label="{escape(role)} {escape(caption)}" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-size="{font}">'
            + "".join(parts) + "".join(texts) + f"</svg><figcaption>{escape(caption)}</figcaption></figure>")


def _as_grid(desc: GlobalDesc):
    """A view shown as a grid: its outer dimensions flattened into rows, the last one as columns."""
    cols = desc.shape[-1] or 1
    rows = int(np.prod(desc.shape[:-1])) if desc.rank > 1 else 1
    grid = TileDesc("Vec", desc.dtype, rows, cols, rows, cols)

    def view(buffer: np.ndarray) -> np.ndarray:
        return view_elements(desc, buffer).reshape(rows, cols)

    return grid, view


def _strided(desc: GlobalDesc) -> bool:
    """A two-dimensional view that is a window of a wider buffer (a row stride above its width, or an
    origin other than 0), its buffer known and small enough to draw."""
    return (desc.rank == 2 and desc.strides[1] == 1 and None not in (*desc.shape, *desc.strides, desc.size)
            and (desc.strides[0] != desc.shape[1] or desc.offset) and desc.strides[0] <= 2 * MAX_CELLS
            and desc.size is not None and desc.size <= 2 * MAX_CELLS * MAX_CELLS)


def _buffer_grid(name: str, desc: GlobalDesc, buffer: np.ndarray, lang: str) -> str:
    """A strided view in its buffer: the buffer in rows of the view's row stride, the view's elements white
    with their values, the rest of the buffer shaded (not read)."""
    width = int(desc.strides[0])
    rows = -(-int(desc.size) // width)
    seen = np.zeros(rows * width, dtype=bool)
    seen[view_offsets(desc).ravel()] = True
    flat = np.asarray(buffer).ravel()
    parts, texts = [], []
    for k in range(rows * width):
        i, j = divmod(k, width)
        x, y = 1 + j * CELL, 1 + i * CELL
        inside = k < desc.size
        parts.append(f'<rect class="{"pw-valid" if seen[k] else "pw-outside"}" x="{x}" y="{y}" '
                     f'width="{CELL}" height="{CELL}"/>' if inside else "")
        if seen[k]:
            texts.append(f'<text x="{x + CELL // 2}" y="{y + CELL // 2 + 4}">{escape(_fmt(flat[k]))}</text>')
        elif inside and j == 0:
            texts.append(f'<text class="pw-index" x="{x + CELL // 2}" y="{y + CELL // 2 + 4}">{k}</text>')
    w, h = width * CELL + 2, rows * CELL + 2
    lines = "".join(f"M1 {1 + i * CELL}h{width * CELL}" for i in range(rows + 1))
    lines += "".join(f"M{1 + j * CELL} 1v{rows * CELL}" for j in range(width + 1))
    parts.append(f'<path class="pw-lines" d="{lines}"/>')
    r0, c0 = divmod(int(desc.offset), width)
    parts.append(f'<rect class="pw-region" x="{1 + c0 * CELL}" y="{1 + r0 * CELL}" width="{desc.shape[1] * CELL}" '
                 f'height="{desc.shape[0] * CELL}"/>')
    caption = label("buffer_caption", lang).format(
        name=name, size=desc.size, dtype=desc.dtype, width=width, rows=desc.shape[0], cols=desc.shape[1],
        offset=desc.offset, strides="×".join(str(x) for x in desc.strides))
    return (f'<figure class="pw-tile"><svg role="img" aria-label="{escape(caption)}" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" font-size="11">' + "".join(parts) + "".join(texts)
            + f"</svg><figcaption>{escape(caption)}</figcaption></figure>")


STORE_CELL = 7  # the storage pictures' cells: a 2 x 2-box tile of 16 x 16 boxes is 224 pixels wide
BOX_CLASSES = 4


def storage_picture(db: Database, desc: TileDesc, lang: str) -> str:
    """How a boxed tile type is stored: a tile of 2 x 2 boxes of its type, each box shaded and numbered by
    its place in storage, and a line through the elements of the first two boxes in storage order. Drawn
    from ``tile_storage`` (the same placement the executor uses), with its offset formula as caption."""
    br, bc = box_shape(db.isa, desc)
    shown = desc.with_(rows=2 * br, cols=2 * bc, valid_row=2 * br, valid_col=2 * bc)
    offsets = element_offsets(db.isa, shown)
    box = offsets // (br * bc)
    s = STORE_CELL
    rows, cols = shown.rows, shown.cols
    parts = [f'<rect class="pw-box{int(box[i, j]) % BOX_CLASSES}" x="{1 + j * s}" y="{1 + i * s}" '
             f'width="{bc * s}" height="{br * s}"/>' for i in range(0, rows, br) for j in range(0, cols, bc)]
    lines = "".join(f"M1 {1 + i * s}h{cols * s}" for i in range(rows + 1))
    lines += "".join(f"M{1 + j * s} 1v{rows * s}" for j in range(cols + 1))
    parts.append(f'<path class="pw-lines pw-thin" d="{lines}"/>')
    order = np.argsort(offsets, axis=None)[: 2 * br * bc]
    points = " ".join(f"{1 + (k % cols) * s + s // 2},{1 + (k // cols) * s + s // 2}" for k in order)
    parts.append(f'<polyline class="pw-order" points="{points}"/>')
    for b in range(4):
        i, j = np.argwhere(box == b)[0]
        x, y = 1 + (j + bc / 2) * s, 1 + (i + br / 2) * s + 6
        parts.append(f'<text class="pw-boxno" x="{x:g}" y="{y:g}">{b}</text>')
    w, h = cols * s + 2, rows * s + 2
    name = storage_order_name(db.isa, desc)
    formula = db.isa.tile_storage.texts.get((desc.blayout, desc.slayout), "") if db.isa.tile_storage else ""
    caption = label("storage_caption", lang).format(
        loc=desc.loc, order=name.upper(), dtype=desc.dtype, br=br, bc=bc,
        fractal=desc.fractal)
    return (f'<figure class="pw-tile pw-storage"><svg role="img" aria-label="{escape(caption)}" width="{w}" '
            f'height="{h}" viewBox="0 0 {w} {h}" font-size="15">' + "".join(parts)
            + f"</svg><figcaption>{escape(caption)}"
            + (f"<br><code>offset(r, c) = {escape(formula)}</code>" if formula else "") + "</figcaption></figure>")


def storage_pictures(db: Database, worked: Worked, lang: str) -> str:
    """One storage picture per boxed tile type of the example (Left, Right, Acc of a matrix multiply), or ''."""
    seen: dict[tuple, str] = {}
    for name, desc in worked.tiles.items():
        if isinstance(desc, TileDesc) and desc.slayout != "NoneBox":
            key = (desc.loc, desc.dtype, desc.blayout, desc.slayout, desc.fractal)
            seen.setdefault(key, f'<div class="pw-store"><p><code>{escape(name)}</code></p>'
                                 + storage_picture(db, desc, lang) + "</div>")
    if not seen:
        return ""
    return (f'<p class="pw-legend">{label("storage_intro", lang)}</p><div class="pw-row">'
            + "".join(seen.values()) + "</div>")


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
        elif isinstance(desc, GlobalDesc) and o.role == "in" and _strided(desc):  # a window of its buffer
            ins.append(_buffer_grid(o.name, desc, np.asarray(worked.inputs[o.name]), lang))
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
    parts.append(storage_pictures(db, worked, lang))
    parts.append("</div>")
    return "".join(parts)
