"""The NumPy reference executor: runs an op's semantics on concrete tiles.

Tiles are logical ``rows x cols`` arrays; where their bytes live (``tile_storage``, ptospec/storage.py)
matters only to byte views (``t.byte[k]``) and to outputs that alias another operand's storage.  Only what
the statements write changes (the destination's valid region unless a statement says ``writes: tile``);
everything else of an output keeps its initial contents.  Invocations the validator rejects are refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from . import storage
from .errors import InvocationError, TileError
from .expr.ast import Index, walk
from .expr.evaluate import Scope, evaluate
from .expr.numpy_types import numpy_dtype_of
from .model import Database, Operand
from .statements import execute_statement
from .tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from .validator import Report, make_scope, plain_operands, require_legal, resolve, state_reads, validate


def numpy_dtype(db: Database, dtype: str) -> np.dtype:
    """NumPy dtype (ml_dtypes for bfloat16 and fp8) of an ISA dtype name."""
    return numpy_dtype_of(db.isa, dtype)


def _with_dtype(db: Database, name: str, dtype: str, array, cast: bool, what: str) -> np.ndarray:
    """``array`` as ``dtype``'s NumPy type.  The only reinterpretation is the raw bytes ``np.save`` writes for
    ml_dtypes types (bfloat16, fp8): an unstructured void array of the same item size.  Any other dtype is
    an error, unless ``cast`` asks for a numeric conversion (values that do not fit wrap or round as NumPy's
    ``astype`` does)."""
    want = numpy_dtype(db, dtype)
    arr = np.asarray(array)
    if arr.dtype == want:
        return arr
    if arr.dtype.kind == "V" and arr.dtype.fields is None and arr.dtype.itemsize == want.itemsize \
            and want.kind == "V":
        return arr.view(want)  # raw bytes saved by np.save for ml_dtypes types
    if cast and arr.dtype.kind in "biuf" and arr.dtype.fields is None:
        with np.errstate(all="ignore"):
            return arr.astype(want)
    hint = "" if cast else " (convert it, or ask for a conversion: --cast)"
    raise TileError(f"{name}: array dtype {arr.dtype} does not match {what} dtype {dtype}{hint}", rule="run.dtype")


def coerce_array(db: Database, name: str, desc: TileDesc, array, cast: bool = False) -> np.ndarray:
    """Check an input array against its tile: same shape, same element type (see ``_with_dtype``)."""
    arr = _with_dtype(db, name, desc.dtype, array, cast, "tile")
    if arr.shape != desc.shape:
        raise TileError(f"{name}: array shape {arr.shape} does not match tile shape {desc.shape}",
                        rule="run.shape")
    return arr


MAX_MADE_BUFFER_BYTES = 64 << 20  # a global buffer the executor makes itself (zeros); as large as `run` reads


def _zero_buffer(name: str, desc: GlobalDesc, dtype: np.dtype) -> np.ndarray:
    """The zeros of a view's whole buffer (``desc.size`` elements), refused beyond ``MAX_MADE_BUFFER_BYTES``: a
    descriptor's size or offset is a number the caller wrote, not memory anyone gave."""
    nbytes = desc.size * dtype.itemsize
    if nbytes > MAX_MADE_BUFFER_BYTES:
        raise InvocationError(f"{name}: the view's buffer holds {desc.size} elements ({nbytes} bytes); the executor "
                              f"makes buffers of at most {MAX_MADE_BUFFER_BYTES} bytes (give the whole buffer as data)",
                              rule="run.too-large")
    return np.zeros(desc.size, dtype=dtype)


def coerce_buffer(db: Database, name: str, desc: GlobalDesc, array, cast: bool = False) -> np.ndarray:
    """The buffer behind a global view: ``array`` is either the whole buffer (1-D, ``desc.size`` elements)
    or the view's elements (shaped like the view), placed into a zero buffer of ``desc.size`` elements.
    Its dtype must be the view's (see ``_with_dtype``)."""
    arr = _with_dtype(db, name, desc.dtype, array, cast, "the view's")
    if arr.ndim == 1 and arr.shape[0] == desc.size:
        return arr
    if arr.shape == desc.shape:
        buffer = _zero_buffer(name, desc, arr.dtype)
        buffer[view_offsets(desc)] = arr
        return buffer
    shape = "x".join(map(str, desc.shape))
    raise TileError(f"{name}: array shape {arr.shape} is neither the view's shape {shape} nor its buffer "
                    f"({desc.size} elements)", rule="run.shape")


def view_offsets(desc: GlobalDesc) -> np.ndarray:
    """Buffer offsets of every element of a (fully known) view, shaped like the view."""
    grids = np.meshgrid(*(np.arange(d) for d in desc.shape), indexing="ij")
    flat = desc.offset + sum(g * s for g, s in zip(grids, desc.strides, strict=True))
    return np.asarray(flat, dtype=np.int64).reshape(desc.shape)


def view_elements(desc: GlobalDesc, buffer: np.ndarray) -> np.ndarray:
    """The elements a view sees in its buffer, shaped like the view."""
    return buffer[view_offsets(desc)]


def _shown(value) -> str:
    """A scalar for a message: integers beyond 30 digits by their magnitude (repr fails beyond 4300 digits)."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"{'-' if value < 0 else ''}2**{abs(value).bit_length() - 1}.."
    return repr(value)


def scalar_value(db: Database, name: str, dtype: str, value) -> np.generic:
    """``value`` as a scalar of ``dtype``, refusing values the type cannot hold exactly (1.5 for i32, -1 for u64)."""
    np_type = numpy_dtype(db, dtype)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvocationError(f"scalar {name} must be a number, got {type(value).__name__}", rule="run.scalar")
    if np_type.kind in "iu":
        info = np.iinfo(np_type)
        if isinstance(value, float) and not value.is_integer():
            raise InvocationError(f"scalar {name} = {value!r} is not an integer ({dtype})", rule="run.scalar")
        if not info.min <= value <= info.max:
            raise InvocationError(f"scalar {name} = {_shown(value)} is outside the range of {dtype} "
                                  f"[{info.min}, {info.max}]", rule="run.scalar")
        return np_type.type(int(value))
    try:
        number = float(value)  # an integer beyond any float (2**1024) is out of range too
    except OverflowError:
        number = math.inf
    with np.errstate(all="ignore"):
        converted = np_type.type(number)
    if math.isinf(float(converted)) and not (isinstance(value, float) and math.isinf(value)):
        raise InvocationError(f"scalar {name} = {_shown(value)} is outside the range of {dtype}", rule="run.scalar")
    return converted


def _share_storage(db: Database, o: Operand, operands, arrays: dict[str, np.ndarray], scope,
                   written: dict[str, np.ndarray] | None) -> None:
    """An out tile that is another tile's storage (``alias``) from byte ``at`` on starts with those bytes, read
    through its own type and layout; elements whose bytes lie beyond that storage keep their initial
    contents.  The elements it takes from the shared storage count as written."""
    at = evaluate(o.alias_at, scope)
    if isinstance(at, np.integer | np.ndarray) and np.ndim(at) == 0 and np.asarray(at).dtype.kind in "iu":
        at = int(at)  # computed from a scalar operand's value
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise InvocationError(f"{o.name} aliases {o.alias_of} at byte {at!r}, not a byte of it", rule="run.alias")
    src_desc, desc = operands[o.alias_of], operands[o.name]
    shared = storage.to_bytes(db.isa, src_desc, arrays[o.alias_of])
    dest = arrays[o.name]
    raw = storage.to_bytes(db.isa, desc, dest)
    n = max(0, min(raw.size, shared.size - at))
    raw[:n] = shared[at:at + n]
    dest[...] = storage.from_bytes(db.isa, desc, raw, dest.dtype)
    if written is not None:
        width = dest.dtype.itemsize
        inside = (storage.element_offsets(db.isa, desc) + 1) * width <= n
        mask = written.setdefault(o.name, np.zeros(dest.shape, dtype=bool))
        mask |= inside


_READS: dict[int, tuple[object, frozenset[str]]] = {}  # id(mode) -> (mode, operands its semantics read)


def read_operands(mode) -> frozenset[str]:
    """The operands whose elements a mode's statements read (values, filters, computed targets; remembered)."""
    known = _READS.get(id(mode))
    if known is not None and known[0] is mode:
        return known[1]
    names = set()
    for stmt in mode.semantics:
        stmt = stmt.expanded()
        for part in (stmt.value, stmt.where, *stmt.target.indices):
            if part is not None:
                names |= {n.base for n in walk(part) if isinstance(n, Index)}
    _READS[id(mode)] = (mode, frozenset(names))
    return _READS[id(mode)][1]


def state_inputs(db: Database, op_name: str, mode, data: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """The configuration registers a mode reads, given in ``data`` under their names, each a mapping of every
    field of the register (``state`` in isa.yaml) to a number.  ``execute`` refuses an invocation reading, on
    its profile, a register ``data`` lacks (``exec.state-unset``)."""
    out: dict[str, dict[str, object]] = {}
    for reg in mode.reads_state:
        if reg not in data:
            continue
        value = data[reg]
        fields = db.isa.state[reg].fields
        if not isinstance(value, Mapping) or set(value) != set(fields) or not all(
                isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
                for v in value.values()):
            raise InvocationError(f"{op_name}: state register {reg} must map each of its fields "
                                  f"({', '.join(fields)}) to a number", rule="run.state")
        out[reg] = dict(value)
    return out


def configure(
    db: Database,
    op_name: str,
    mode_name: str | None,
    profile: str,
    operands: Mapping[str, TileDesc | ScalarDesc | GlobalDesc | AttrDesc],
    data: Mapping[str, object],
) -> dict[str, dict[str, object]]:
    """The state registers a configuration instruction writes (its effect's ``sets``), computed from its
    operands (scalar values from ``data``); an empty mapping for any other instruction.  Legal invocations
    only, like ``execute``."""
    op, mode = resolve(db, op_name, mode_name, profile, operands)
    require_legal(validate(db, op.name, mode.name, profile, operands))
    return register_values(db, op, mode, profile, operands, data)


def register_values(db: Database, op, mode, profile: str, operands: Mapping, data: Mapping[str, object]
                    ) -> dict[str, dict[str, object]]:
    """What a configuration mode's ``effect.sets`` evaluates to on these operands (not validated)."""
    if mode.effect is None or not mode.effect.sets:
        return {}
    scope = make_scope(db, op, mode, profile, operands)
    for o in mode.operands:
        desc = operands[o.name]
        if isinstance(desc, ScalarDesc):
            if o.name not in data:
                raise InvocationError(f"missing value for scalar operand {o.name}", rule="run.missing-input")
            scope.values[o.name] = scalar_value(db, o.name, desc.dtype, data[o.name])
    out: dict[str, dict[str, object]] = {}
    for reg, fields in mode.effect.sets.items():
        values = {}
        for fname, (node, _text) in fields.items():
            value = evaluate(node, scope)
            values[fname] = value.item() if isinstance(value, np.generic) else value
        out[reg] = values
    return out


def setters(db: Database, register: str) -> list[tuple]:
    """The (op, mode) pairs whose configuration effect sets ``register``, in database order."""
    return [(op, mode) for op in db.ops.values() for mode in op.modes
            if mode.effect is not None and register in mode.effect.sets]


def derived_state(db: Database, mode, operands: Mapping, data: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """The registers ``mode`` reads as the instructions setting them would leave them when given this
    invocation's own operands of the same names (SETFMATRIX with TIMG2COL's ConvTile fields): the state a
    generated case runs with.  A register no setter can be given from these operands is left out."""
    out: dict[str, dict[str, object]] = {}
    for register in mode.reads_state:
        for op, setter in setters(db, register):
            names = [o.name for o in setter.operands]
            if not all(n in operands for n in names) or any(
                    n not in data for n in names if isinstance(operands[n], ScalarDesc)):
                continue
            given = {n: operands[n] for n in names}
            values = register_values(db, op, setter, setter.example.profile, given, data)
            out[register] = values[register]
            break
    return out


def execute(
    db: Database,
    op_name: str,
    mode_name: str | None,
    profile: str,
    operands: Mapping[str, TileDesc | ScalarDesc | GlobalDesc],
    data: Mapping[str, object],
    written: dict[str, np.ndarray] | None = None,
    report: Report | None = None,
    cast: bool = False,
) -> dict[str, np.ndarray]:
    """Run the op; ``data`` holds arrays for tiles and global buffers (outputs optional: their initial
    contents) and numbers for scalars.  Returns the output tiles and buffers, whole.  Arrays must have
    their operand's dtype unless ``cast``; names that are no operand of the mode are errors.  ``written``,
    when given, receives a mask per output of the elements the semantics wrote.  ``report``: the
    validator's report on exactly these operands, when the caller has it already (not computed again).
    A mode without data semantics (``mode.effect``: synchronisation, configuration, debug output,
    placement) is validated and runs no statement: every output is returned with its initial contents
    and ``written`` marks nothing; callers tell it from an executed instruction by ``mode.effect`` (what a
    configuration writes to state registers is ``configure``'s answer).  A mode that reads state registers
    (``mode.reads_state``) takes each from ``data`` under the register's name (see ``state_inputs``).  A
    cross-core FIFO instruction (effect ``cross-core``) is validated and then refused (``exec.cross-core``)."""
    operands = plain_operands(operands)
    op, mode = resolve(db, op_name, mode_name, profile, operands)
    state = state_inputs(db, op.name, mode, data)
    if report is None or (report.op, report.mode, report.profile) != (op.name, mode.name, profile) or (
            state and report.unchecked):
        report = validate(db, op.name, mode.name, profile, operands, state=state)
    require_legal(report)
    _require_runnable(db, op, mode, profile, operands, data, state, report)
    scope = make_scope(db, op, mode, profile, operands)
    scope.state = state
    arrays, outputs = _operand_arrays(db, mode, operands, data, scope, cast)
    for o in mode.operands:
        if o.alias_of:
            _share_storage(db, o, operands, arrays, scope, written)
    # Semantics read the inputs as they were before any output is written (an output no statement reads
    # needs no copy: a large global buffer a store writes is not copied twice).
    read = read_operands(mode)
    snapshot = {n: (a.copy() if n in outputs and n in read else a) for n, a in arrays.items()}
    for stmt in mode.semantics:
        if stmt.when is not None and not evaluate(stmt.when, scope):
            continue
        execute_statement(stmt, scope, snapshot, outputs, written)
    return outputs


def compact_modelled(db: Database, desc: TileDesc, profile: str) -> bool:
    """Whether the executor runs ``desc``'s compact mode as it is (``compact_modes.modelled`` of specs/isa.yaml),
    remembered per tile and profile (every run asks it of every tile operand)."""
    if not _MODELLED or _MODELLED[0][0] is not db.isa or len(_MODELLED[0][1]) >= 4096:
        _MODELLED[:] = [(db.isa, {})]
    memo = _MODELLED[0][1]
    found = memo.get((desc, profile))
    if found is None:
        scope = Scope(isa=db.isa, tiles={"t": desc}, profile_constants=db.isa.profiles[profile].constants)
        found = memo[desc, profile] = bool(evaluate(db.isa.compact_modelled, scope))
    return found


_MODELLED: list[tuple[object, dict[tuple[TileDesc, str], bool]]] = []  # the last ISA's answers (one slot)


def _require_runnable(db: Database, op, mode, profile: str, operands, data: Mapping[str, object], state: dict,
                      report: Report) -> None:
    """A legal invocation the executor still cannot run: one side of a FIFO, registers not given, valid shapes
    not known, or data for names that are no operand."""
    if mode.cross_core:
        raise InvocationError(
            f"{op.name} {mode.name} is one side of a cross-core FIFO: its peer (the pop or push of the other "
            "core's kernel) is not part of a single instruction, so the executor runs no cross-core instruction "
            "alone (the invocation is legal)", rule="exec.cross-core")
    missing = [r for r in state_reads(db, op, mode, profile, operands) if r not in state]
    if missing:
        raise InvocationError(f"{op.name} {mode.name} reads the configuration register(s) {', '.join(missing)} on "
                              f"{profile}: give each as an input (what an earlier instruction set)",
                              rule="exec.state-unset")
    compact = [f"{o.name} ({operands[o.name].compact})" for o in mode.operands
               if isinstance(operands.get(o.name), TileDesc) and not compact_modelled(db, operands[o.name], profile)]
    if compact:
        raise InvocationError(
            f"{op.name} {mode.name}: the compact mode of {', '.join(compact)} places a boxed tile's elements in a "
            "way the executor does not model (compact_modes of specs/isa.yaml; the invocation is legal)",
            rule="exec.compact")
    if report.deferred:
        raise InvocationError(
            f"cannot execute with unknown valid shapes; give concrete valid=RxC ({', '.join(report.deferred)})",
            rule="run.dynamic",
        )
    unknown = sorted(str(n) for n in data if n not in {o.name for o in mode.operands} | set(mode.reads_state))
    if unknown:
        raise InvocationError(f"{op.name} {mode.name} has no operand(s) {', '.join(unknown)} (its operands: "
                              f"{', '.join(o.name for o in mode.operands)})", rule="run.unknown-input")


def _operand_arrays(db: Database, mode, operands, data: Mapping[str, object], scope, cast: bool
                    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The arrays of every tile and buffer operand (scalars go into ``scope``), and those of the outputs:
    their initial contents, or zeros."""
    arrays: dict[str, np.ndarray] = {}
    outputs: dict[str, np.ndarray] = {}
    for o in mode.operands:
        desc = operands[o.name]
        if isinstance(desc, AttrDesc):
            continue  # in scope.attrs
        if isinstance(desc, ScalarDesc):
            if o.name not in data:
                raise InvocationError(f"missing value for scalar operand {o.name}", rule="run.missing-input")
            scope.values[o.name] = scalar_value(db, o.name, desc.dtype, data[o.name])
            continue
        if isinstance(desc, GlobalDesc):
            if not desc.known:
                raise InvocationError(f"{o.name}: give the view's shape, strides, offset and buffer size to execute",
                                      rule="run.dynamic")
            initial = data.get(o.name)
            if initial is None and o.role != "out":
                raise InvocationError(f"missing input data for {o.name}", rule="run.missing-input")
            arr = _zero_buffer(o.name, desc, numpy_dtype(db, desc.dtype)) if initial is None \
                else coerce_buffer(db, o.name, desc, initial, cast)
            if o.role == "out" and initial is not None:
                arr = arr.copy()  # the caller's buffer stays as it was; an input buffer is only read
            arrays[o.name] = arr
            if o.role == "out":
                outputs[o.name] = arr
            continue
        if o.role == "out":
            initial = data.get(o.name)
            arr = (np.zeros(desc.shape, numpy_dtype(db, desc.dtype)) if initial is None
                   else coerce_array(db, o.name, desc, initial, cast).copy())
            outputs[o.name] = arr
            arrays[o.name] = arr
        elif o.role == "tmp":
            arrays[o.name] = np.zeros(desc.shape, numpy_dtype(db, desc.dtype))
        else:
            if o.name not in data:
                raise InvocationError(f"missing input data for {o.name}", rule="run.missing-input")
            arrays[o.name] = coerce_array(db, o.name, desc, data[o.name], cast)
    return arrays, outputs
