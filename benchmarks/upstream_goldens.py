"""Upstream's NumPy goldens as a second oracle for the executor.

    pip install -e '.[goldens]'   # en_dtypes: the narrow float types some upstream scripts import
    python benchmarks/upstream_goldens.py --pto-isa-root /tmp/pto-isa [--ops tadd] [--dirs tcolgather] [--json out.json]

Runs the ``gen_data.py`` of every upstream test directory (``tests/npu/{a2a3,a5}/src/st/testcase/<dir>``,
``tests/cpu/st/testcase/<dir>``) in a scratch directory (nothing is copied into the repository). What a
directory's cases exercise is data, ``specs/goldens.yaml`` (``ptospec.goldens``): the op and mode, which file
is which operand, the types, shapes, attributes and global views, or why the cases cannot be compared. This
adapter configures each case as its entry says, lets the validator judge it, runs the executor and compares.

Outcomes: ``agree``; ``recorded`` (a disagreement an op's ``differences`` entry records for the script);
``spec-rejects`` (the rules that reject); ``nan``, ``tolerance`` or ``value`` disagreements; ``not-mapped``
(the entry's reason); ``not-run`` (a directory whose one entry marks every case not mapped: its script is not
run, and it counts once); ``no-entry`` (a directory or case no entry describes);
``script-error``. Groups of each
are printed at the end; docs/goldens.md says more.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import json
import os
import random
import re
import runpy
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ptospec.asm.views import packed_strides
from ptospec.conformance.cases import example_tiles, with_dtypes
from ptospec.conformance.shaping import roundup
from ptospec.errors import PtospecError
from ptospec.executor import execute
from ptospec.expr.evaluate import evaluate
from ptospec.goldens import GoldenDir, entry_for, load_goldens, parse_extent
from ptospec.loader import load_database
from ptospec.model import Database, Mode, OpSpec
from ptospec.tile import AttrDesc, GlobalDesc, ScalarDesc, TileDesc
from ptospec.validator import make_scope, validate

DISAGREEMENTS = ("value", "tolerance", "nan")
PLATFORMS = {"a2a3": "tests/npu/a2a3/src/st/testcase", "a5": "tests/npu/a5/src/st/testcase",
             "cpu": "tests/cpu/st/testcase"}


@dataclass
class Case:
    """One case a script wrote: its directory name, files (stem -> bytes) and parameters."""

    name: str
    files: dict[str, bytes]
    params: dict[str, object] = field(default_factory=dict)

    def words(self) -> list[str]:
        """Upper-case words of the case's string parameters (``CmpMode::EQ`` -> ``EQ``) and name, for the
        ``word`` selectors of entries."""
        out = []
        for value in self.params.values():
            if isinstance(value, str):
                out += [w.upper() for w in re.split(r"::|\W+", value) if w]
        out += [w.upper() for w in re.split(r"[_\W]+", self.name.split(".", 1)[-1]) if w]
        return out

    def plain_params(self) -> dict[str, object]:
        """The parameters with element types as NumPy names (``np.float16`` -> ``float16``), the numbers of the
        name (``case_u32_1x128_b3``: 1, 128) as ``name1``, ``name2``, ... (split at _ and x), and the integers and
        element types of a parameter holding a sequence as ``<name>_0``, ``<name>_1`` (of a sequence of
        sequences as ``<name>_0_0``, ...)."""
        numbers = [int(t) for t in re.split(r"[_x]", self.name.split(".", 1)[-1]) if t.isdigit()]
        named = {f"name{i}": n for i, n in enumerate(numbers, 1)}
        parts = {name: value for k, v in self.params.items() for name, value in _sequence_parts(k, v)}
        return {**named, **parts, **{k: _numpy_name(v) or v for k, v in self.params.items()}}


def _sequence_parts(name: str, value: object, depth: int = 2) -> list[tuple[str, object]]:
    """The integers and element types of a (nested) sequence parameter, each named by its position."""
    if depth == 0 or not isinstance(value, tuple | list):
        return []
    out: list[tuple[str, object]] = []
    for i, n in enumerate(value):
        if (isinstance(n, int) and not isinstance(n, bool)) or _numpy_name(n):
            out.append((f"{name}_{i}", _numpy_name(n) or n))
        out += _sequence_parts(f"{name}_{i}", n, depth - 1)
    return out


def _numpy_name(value: object) -> str | None:
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.dtype):
        return value.name
    return None


SCRIPT_SEED = 0  # the seed of both random generators when a script starts (its own seed() calls still win)


def run_script(path: Path) -> tuple[list[tuple[str, dict[str, bytes]]], dict, str | None]:
    """Run one gen_data.py in a scratch directory; return the files each case directory received (in the
    order the script entered them), the script's globals and an error, if any."""
    order: list[str] = []
    real_chdir, real_makedirs = os.chdir, os.makedirs

    home = str(path.parent.resolve()) + os.sep

    def redirect(target):  # a case directory the script places beside itself goes to the scratch directory
        full = os.path.realpath(target)  # home is resolved too: a root reached through a link
        return os.path.join(scratch, full[len(home):]) if (full + os.sep).startswith(home) else target

    def chdir(target):
        real_chdir(redirect(target))
        here = os.getcwd()
        if here not in order:
            order.append(here)

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:

        def makedirs(target, *args, **kwargs):  # nothing is created beside the script (the checkout is shared)
            target = redirect(target)
            if os.path.abspath(target).startswith(os.path.realpath(scratch) + os.sep) or \
                    os.path.abspath(target).startswith(scratch + os.sep):
                real_makedirs(target, *args, **kwargs)

        real_chdir(scratch)
        os.chdir, os.makedirs = chdir, makedirs
        helpers = [str(path.parent), *(str(p) for p in path.parents if (p / "utils.py").is_file())][:2]
        # the checkout's root too, for scripts importing their helpers as ``tests.cpu.st.utils``
        helpers += [str(p.parent) for p in path.parents if p.name == "tests"][:1]
        sys.path[:0] = helpers
        # a ``tests`` package already imported (this project's own) would hide the checkout's ``tests.*``
        shadowed = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "tests" or k.startswith("tests.")}
        saved_modules = set(sys.modules)
        state, py_state = np.random.get_state(), random.getstate()
        # the same data every run: scripts that draw unseeded random inputs (the A2/A3 tsort32, whose golden
        # orders equal values at random) would otherwise move between outcomes from run to run
        np.random.seed(SCRIPT_SEED)
        random.seed(SCRIPT_SEED)
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = runpy.run_path(str(path), run_name="__main__")
            error = None
        except BaseException as exc:  # a script's own failure is a result, not a crash of this tool
            found, error = {}, f"{type(exc).__name__}: {exc}"
        finally:
            os.chdir, os.makedirs = real_chdir, real_makedirs
            for entry in helpers:
                sys.path.remove(entry)
            for name in set(sys.modules) - saved_modules:  # each script gets its own helper modules
                del sys.modules[name]
            sys.modules.update(shadowed)
            np.random.set_state(state)
            random.setstate(py_state)
            real_chdir(here)
        dirs = [d for d in order if d != scratch and Path(d).is_dir()]
        if not dirs:  # scripts that write their files without entering a directory per case
            dirs = [scratch]
        cases = [(Path(d).name, {f.stem: f.read_bytes() for f in Path(d).glob("*.bin")}) for d in dirs]
    return [c for c in cases if c[1]], found, error


def case_params(found: dict, names: list[str]) -> list[dict[str, object]]:
    """Each case's parameters: the attributes of the script's parameter object for it, found by the
    object's ``name``/``case_name``/``testname`` (in any of its lists of objects), by a function of the script
    whose name says it names cases (``generate_case_name(param)``), by a list of case names the
    script keeps alongside its list of objects, by a list of ``(case name, object)`` pairs, by a list of
    ``(case name, generator, *arguments)`` tuples (the
    arguments bound to the generator's parameter names, an object's attributes merged, and ``generator`` its
    name), by a list of ``(case name, arguments)`` pairs or a list of names beside one list of argument tuples as long
    (``case_list``: that list's name, ``args``: the tuple), or else by position in the list of objects (when there is
    one per case)."""
    lists = [v for k, v in found.items() if isinstance(v, list) and v and all(hasattr(p, "__dict__") for p in v)
             and not k.startswith("_")]
    lists.sort(key=lambda v: (len(v) != len(names), 0 if v is found.get("case_params_list") else 1))
    objects = lists[0] if lists else []
    by_name: dict[str, dict] = {}
    for p in (p for v in lists for p in v):  # an object naming its case, in any list of objects
        for attr in ("name", "case_name", "testname", "test_name"):
            value = getattr(p, attr, None)
            if isinstance(value, str):
                by_name[value] = vars(p)
    namers = [f for k, f in found.items() if "name" in k.lower() and inspect.isfunction(f)]
    for p in (p for v in lists for p in v):  # an object a naming function of the script names (generate_case_name)
        for namer in namers:
            with contextlib.suppress(Exception):
                named = namer(p)
                if isinstance(named, str) and named not in by_name:
                    by_name[named] = vars(p)
    for v in found.values():
        if isinstance(v, list) and len(v) == len(objects) and v and all(isinstance(x, str) for x in v):
            by_name.update({x: vars(p) for x, p in zip(v, objects, strict=True) if x not in by_name})
        elif isinstance(v, list) and v and all(isinstance(t, tuple) and len(t) > 1 and isinstance(t[0], str)
                                               and callable(t[1]) for t in v):
            by_name.update({t[0]: generator_params(t[1], t[2:]) for t in v if t[0] not in by_name})
        elif isinstance(v, list) and v and all(isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str)
                                               and hasattr(t[1], "__dict__") and not callable(t[1]) for t in v):
            by_name.update({t[0]: vars(t[1]) for t in v if t[0] not in by_name})  # (case name, object) pairs
    for k, v in found.items():  # a list of (case name, arguments) pairs: the arguments by position, and the list's name
        if isinstance(v, list) and v and all(isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str)
                                             and isinstance(t[1], tuple) for t in v):
            by_name.update({t[0]: {"case_list": k, "args": t[1]} for t in v if t[0] not in by_name})
    tuples = {k: v for k, v in found.items() if isinstance(v, list) and v and all(isinstance(t, tuple) for t in v)}
    for v in found.values():  # a list of case names beside the one list of argument tuples as long as it
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            same = [k for k, t in tuples.items() if len(t) == len(v)]
            if len(same) == 1:
                by_name.update({x: {"case_list": same[0], "args": t} for x, t in zip(v, tuples[same[0]], strict=True)
                                if x not in by_name})
    out = []
    for i, name in enumerate(names):
        p = by_name.get(name) or (vars(objects[i]) if len(objects) == len(names) else None)
        out.append({k.lower(): v for k, v in p.items()} if p is not None else {})
    return out


def generator_params(function, args: tuple) -> dict[str, object]:
    """A generator's arguments by its parameter names, an argument object's attributes merged in."""
    try:
        bound = inspect.signature(function).bind(*args).arguments
    except (TypeError, ValueError):
        return {}
    out: dict[str, object] = {"generator": getattr(function, "__name__", "")}
    for key, value in bound.items():
        out.update(vars(value) if hasattr(value, "__dict__") and not isinstance(value, type) else {key: value})
    return out


def binding(db: Database, type_names: dict[str, str], entry: GoldenDir, mode: Mode, case: Case,
            params: dict[str, object]) -> dict[str, str] | str:
    """The type variables the entry binds (``types``: a dtype, a parameter naming one, or another type variable
    whose type it shares; ``type_words``: the type words of the case's name, in order, read through
    ``type_names``); a message when one is missing."""
    by_numpy = {np.dtype(s.numpy).name: d for d, s in db.isa.dtypes.items() if s.numpy}

    def dtype(word: object) -> str | None:
        word = type_names.get(str(word).lower(), str(word).lower())
        return word if word in db.isa.dtypes else by_numpy.get(word)

    out: dict[str, str] = {}
    for var, given in entry.types.items():
        if given in mode.type_vars:  # the type of another variable, bound below
            continue
        value = given if given in db.isa.dtypes else params.get(given.lower())
        if value is None:
            return f"the case has no parameter {given}"
        if dtype(value) is None:
            return f"{given} = {value} names no element type of the database"
        out[var] = dtype(value)
    words = [type_names[w] for w in re.split(r"[_\W]+", case.name.split(".", 1)[-1].lower()) if w in type_names]
    for var, word in zip(entry.type_words, words, strict=False):
        out.setdefault(var, word)
    for var, given in entry.types.items():
        if given in mode.type_vars and given in out:
            out[var] = out[given]
    missing = [v for v in mode.type_vars if v not in out]
    return f"the entry binds no type to {', '.join(missing)}" if missing else out


def attributes(db: Database, entry: GoldenDir, mode: Mode, case: Case,
               params: dict[str, object]) -> dict[str, object] | str:
    """Each attribute operand's value: the entry's (``attrs``), a parameter's (``attr_params``: an enumerator
    spelt as its last ``::`` part, or a flag or number), the enumerator that is a word of the case's name or
    string parameters (``attr_words``), else the value the assembler assumes when the kernel leaves it out
    (``dialect.default``); a message when none gives one."""
    out: dict[str, object] = {}
    for a in mode.attrs:
        if a.name in entry.attrs:
            out[a.name] = entry.attrs[a.name]
        elif a.name in entry.attr_words and a.enum:
            words = set(case.words())
            found = [v for v in db.isa.enums[a.enum].values if v.upper() in words]
            if len(found) != 1:
                return f"the case's words name {len(found)} values of {a.name} ({a.enum})"
            out[a.name] = found[0]
        elif a.name in entry.attr_params:
            value = params.get(entry.attr_params[a.name].lower())
            if a.enum:
                word = str(value).split("::")[-1].split(".")[-1].upper()
                value = next((v for v in db.isa.enums[a.enum].values if v.upper() == word), None)
            elif a.attr_type == "bool" and value in (0, 1):
                value = bool(value)
            if value is None:
                return f"the case's {entry.attr_params[a.name]} gives no value of {a.name}"
            out[a.name] = value
        elif a.dialect_default is not None:
            out[a.name] = a.dialect_default
        else:
            return f"the entry gives no value of the attribute {a.name}"
    return out


def configure(db: Database, entry: GoldenDir, mode: Mode, bound: dict[str, str], attrs: dict[str, object],
              params: dict[str, object], block_bytes: int) -> tuple[dict, dict[str, GlobalDesc]] | str:
    """The mode's example tiles with the entry's types, attributes, shapes and layouts, and the global views
    its files hold; a message when a parameter the entry names is missing."""
    tiles = with_dtypes(db, mode, example_tiles(db, mode), bound)
    tiles = {n: AttrDesc(attrs[n]) if n in attrs else t for n, t in tiles.items()}
    shapes = entry.shapes_for(params, {o.name for o in mode.operands})
    if shapes is None:
        return "a parameter the entry's shapes name is missing from the case"
    for name, given in shapes.items():
        t = tiles[name]
        vr, vc = given.get("valid", (t.valid_row, t.valid_col))
        t = t.with_(valid_row=vr, valid_col=vc, **entry.layouts.get(name, {}))
        # a tile shape not given: the valid region, rounded up to a whole block along the layout
        unit = max(1, block_bytes // max(1, db.isa.dtypes[t.dtype].bytes))
        rows, cols = given.get("tile", (roundup(vr, unit), vc) if t.blayout == "ColMajor" else (vr, roundup(vc, unit)))
        tiles[name] = t.with_(rows=rows, cols=cols)
    views = {}
    for name, view in entry.views.items():
        dims = view.dims(params)
        if dims is None:
            return f"a parameter the view of {name} names is missing from the case"
        shape, buffer = dims
        views[name] = GlobalDesc(tiles[name].dtype, shape, packed_strides(db.isa, buffer, view.layout), view.layout,
                                 0, int(np.prod(buffer)))
        if isinstance(tiles[name], GlobalDesc):
            tiles[name] = views[name]
    return tiles, views


def read_files(db: Database, entry: GoldenDir, mode: Mode, profile: str, case: Case, tiles: dict,
               views: dict[str, GlobalDesc], params: dict[str, object]) -> tuple[dict, dict] | str:
    """(inputs, expected outputs) from the case's files as the entry assigns them: a global operand's file is
    its view's buffer; a tile operand's holds its tile, its valid region or the entry's ``file_shapes``, or is
    loaded by TLOAD through its view; a scalar's holds one value. An input without a file is zeros (as is a
    global output: upstream's start as zeros)."""
    roles = {o.name: o.role for o in mode.operands}
    data: dict[str, object] = {}
    wants: dict[str, np.ndarray] = {}
    for stem, name in entry.files.items():
        if name is None:
            continue
        if stem not in case.files:
            return f"the case has no file {stem}.bin"
        t = tiles[name]
        expected = roles[name] == "out" and stem not in entry.initial
        if isinstance(t, ScalarDesc):
            data[name] = scalar_value(case.files[stem], np.dtype(db.isa.dtypes[t.dtype].numpy))
            continue
        values = file_values(db, t.dtype, case.files[stem])
        if isinstance(t, GlobalDesc):
            if values.size != t.size:
                return f"{stem}.bin holds {values.size} elements, the view's buffer {t.size}"
            if expected:
                wants[name] = values.reshape(1, -1)
            else:
                data[name] = values
            continue
        if name in views:  # an output's golden is read back through the view it is stored by
            loaded = loaded_tile(db, profile, t, views[name], values)
            if isinstance(loaded, str):
                return loaded
            if expected:
                wants[name] = loaded[:t.valid_row, :t.valid_col]
            else:
                data[name] = loaded
            continue
        shapes = [(t.rows, t.cols), (t.valid_row, t.valid_col)]
        if stem in entry.file_shapes:
            shape = tuple(e.value(params) for e in entry.file_shapes[stem])
            shapes.insert(0, shape)
        matrix = next((values[:r * c].reshape(r, c) for r, c in shapes
                       if r is not None and c is not None and values.size == r * c), None)
        if matrix is None or matrix.shape[0] < t.valid_row or matrix.shape[1] < t.valid_col:
            return (f"{stem}.bin holds {values.size} elements, neither {name}'s tile ({t.rows}x{t.cols}) "
                    f"nor its valid region ({t.valid_row}x{t.valid_col})")
        if expected:
            wants[name] = matrix[:t.valid_row, :t.valid_col]
        else:
            data[name] = np.zeros((t.rows, t.cols), values.dtype)
            data[name][:t.valid_row, :t.valid_col] = matrix[:t.valid_row, :t.valid_col]
    for name, text in entry.scalars.items():
        value = entry_value(text, params)
        if value is None:
            return f"the case has no parameter for {name} ({text})"
        data[name] = np.array(value).astype(np.dtype(db.isa.dtypes[tiles[name].dtype].numpy))[()]
    for name, t in tiles.items():
        if name in data or roles.get(name) not in ("in", "out"):
            continue
        if isinstance(t, GlobalDesc):
            data[name] = np.zeros(t.size, np.dtype(db.isa.dtypes[t.dtype].numpy))
        elif isinstance(t, TileDesc) and roles[name] == "in":
            data[name] = np.zeros((t.rows, t.cols), np.dtype(db.isa.dtypes[t.dtype].numpy))
    return data, wants


def entry_value(text: str, params: dict[str, object]) -> int | float | None:
    """A scalar's value: a parameter's own (a float too), or an integer expression of parameters."""
    value = params.get(text.lower())
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return parse_extent(text).value(params)


def compare(db: Database, type_names: dict[str, str], entry: GoldenDir, profile: str, case: Case,
            script: str) -> tuple[str, str]:
    """(outcome, detail) of one case, configured as its entry says, judged by the validator, run, compared."""
    if entry.unmapped:
        return "not-mapped", entry.unmapped
    op = db.ops[entry.op]
    mode = next(m for m in op.modes if m.name == entry.mode_for(case.words()))
    params = case.plain_params()
    bound = binding(db, type_names, entry, mode, case, params)
    if isinstance(bound, str):
        return "not-mapped", bound
    attrs = attributes(db, entry, mode, case, params)
    if isinstance(attrs, str):
        return "not-mapped", attrs
    # c0_<v>: how many elements of type variable v fill a block (C0: the kernels' alignment unit)
    block_bytes = int(db.isa.profiles[profile].constants["block_bytes"])
    params = {**params, **{f"c0_{v.lower()}": max(1, block_bytes // db.isa.dtypes[d].bytes) for v, d in bound.items()}}
    configured = configure(db, entry, mode, bound, attrs, params, block_bytes)
    if isinstance(configured, str):
        return "not-mapped", configured
    tiles, views = configured
    report = validate(db, op.name, mode.name, profile, tiles)
    if not report.ok:
        return "spec-rejects", (f"{mode.name}: " + "; ".join(v.one_line() for v in report.violations)
                                + f" {{{rejection_record(op, mode, profile, bound, report.violations)}}}")
    read = read_files(db, entry, mode, profile, case, tiles, views, params)
    if isinstance(read, str):
        return "not-mapped", read
    data, wants = read
    with np.errstate(all="ignore"):
        got = execute(db, op.name, mode.name, profile, tiles, data)
    for name, want in wants.items():
        t = tiles[name]
        result = got[name].reshape(1, -1) if isinstance(t, GlobalDesc) else got[name][:t.valid_row, :t.valid_col]
        outcome = judge(op, t.dtype, result, want)
        if outcome[0] != "agree":
            known = recorded_difference(db, op, mode, profile, tiles, script)
            if known is not None:
                return "recorded", f"{known} ({outcome[0]}: {mode.name} {name}: {outcome[1]})"
            return outcome[0], f"{mode.name} {name}: {outcome[1]}"
    return "agree", mode.name


def file_values(db: Database, dtype: str, raw: bytes) -> np.ndarray:
    """A file's elements of ``dtype``; a packed type (two 4-bit codes a byte) unpacked, the low bits first."""
    spec = db.isa.dtypes[dtype]
    if spec.per_byte == 1:
        return np.frombuffer(raw[:len(raw) - len(raw) % spec.bytes], dtype=np.dtype(spec.numpy)).copy()
    codes = np.frombuffer(raw, np.uint8)
    bits = 8 // spec.per_byte
    parts = [(codes >> (bits * k)) & ((1 << bits) - 1) for k in range(spec.per_byte)]
    return np.stack(parts, axis=-1).reshape(-1).astype(np.uint8).view(np.dtype(spec.numpy))


def loaded_tile(db: Database, profile: str, tile: TileDesc, view: GlobalDesc, buffer: np.ndarray) -> np.ndarray | str:
    """The contents TLOAD gives ``tile`` from ``view`` over ``buffer`` (into a Mat tile of its shape when the
    operand lives where TLOAD does not write, as a TMOV then moves it): the kernel's own path."""
    loc = tile.loc if tile.loc in ("Vec", "Mat") else "Mat"
    report = None
    # the view may hold the tile's valid region, or whole rows or columns of it (zero-padded blocks)
    for vr, vc in ((tile.valid_row, tile.valid_col), (tile.valid_row, tile.cols), (tile.rows, tile.valid_col),
                   (tile.rows, tile.cols)):
        target = tile.with_(loc=loc, valid_row=vr, valid_col=vc)
        report = validate(db, "tload", "default", profile, {"dst": target, "src": view})
        if report.ok:
            got = execute(db, "tload", "default", profile, {"dst": target, "src": view}, {"src": buffer})["dst"]
            out = np.zeros((tile.rows, tile.cols), got.dtype)
            out[:tile.valid_row, :tile.valid_col] = got[:tile.valid_row, :tile.valid_col]
            return out
    return "no TLOAD reads the file's view into the tile: " + "; ".join(v.one_line() for v in report.violations)


def recorded_difference(db: Database, op: OpSpec, mode: Mode, profile: str, tiles: dict, script: str) -> str | None:
    """The id of the op's difference that records this disagreement: one with a claim from a source of
    kind ``test`` naming ``script``, and an ``observed`` entry of the profile (category ``wrong-value``)
    for the mode whose ``when`` holds for the case's tiles."""
    named = {s.id for s in op.sources.values() if s.kind == "test" and s.ref == script}
    scope = None
    for diff in op.differences:
        if not named & {source for source, _ in diff.claims}:
            continue
        for obs in diff.observed:
            if obs.profile != profile or obs.category != "wrong-value" or (obs.modes and mode.name not in obs.modes):
                continue
            if obs.when is None:
                return diff.id
            scope = scope or make_scope(db, op, mode, profile, tiles)
            if evaluate(obs.when, scope):
                return diff.id
    return None


def rejection_record(op: OpSpec, mode: Mode, profile: str, bound: dict[str, str], violations) -> str:
    """What stands behind a rejection, for the reader who checks it: each ``dtype.<var>`` violation's recorded
    omission (the op's difference whose ``omits`` says the header admits the type the table leaves out), or
    that the table and its header agree (no omission recorded); any other rule is the spec's own (its id)."""
    out = []
    for v in violations:
        var = next((t for t in mode.type_vars if v.rule == f"dtype.{t.lower()}"), None)
        if var is None:
            out.append(f"rule {v.rule}")
            continue
        dtype = bound.get(var)
        ids = [d.id for d in op.differences for o in d.omits
               if o.profile == profile and o.var == var and dtype in o.dtypes and (not o.modes or mode.name in o.modes)]
        table = op.dtypes.get(profile)
        listed = table is not None and any(dtype in r.types.get(var, ()) for r in table.rows
                                           if not r.modes or mode.name in r.modes)
        out.append(f"{var}={dtype}: an omission the differences record ({', '.join(ids)})" if ids
                   else f"{var}={dtype}: a combination the table does not pair (no omission can record one)" if listed
                   else f"{var}={dtype}: outside the table, no omission recorded")
    return "; ".join(dict.fromkeys(out))


def scalar_value(raw: bytes, dtype: np.dtype) -> int | float:
    """A scalar file's value: the scripts write the scalar's own type or a float32 (``struct.pack('f')``)
    whatever the type; a float32 is taken when the size says so, or when the bytes read as the (integer)
    type are out of float32's exact integer range while as a float32 they are an integer the type holds."""
    own = np.frombuffer(raw, dtype=dtype)[0].item() if len(raw) == dtype.itemsize else None
    as_f32 = np.frombuffer(raw, dtype=np.float32)[0].item() if len(raw) == 4 else None
    if own is None:
        if as_f32 is None:
            raise ValueError(f"a scalar file of {len(raw)} bytes for {dtype.name}")
        return as_f32 if dtype.kind == "f" else int(as_f32)
    if dtype.kind in "iu" and as_f32 is not None and abs(own) >= 1 << 24 and np.isfinite(as_f32) \
            and as_f32 == int(as_f32) and np.iinfo(dtype).min <= as_f32 <= np.iinfo(dtype).max:
        if abs(as_f32) > 1 << 24:  # the script's golden uses the exact integer, which the float32 lost
            raise ValueError(f"the scalar file is a float32 ({as_f32:.0f}), which holds {dtype.name} values "
                             "beyond 2^24 only rounded, while the golden uses the exact value")
        return int(as_f32)
    return own


def judge(op: OpSpec, dtype: str, got: np.ndarray, want: np.ndarray) -> tuple[str, str]:
    """Compare under the op's tolerance for ``dtype``; classify a disagreement."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    tol = op.numerics.tolerance.get(dtype)
    with np.errstate(all="ignore"):
        close = (g == w) | (np.isnan(g) & np.isnan(w))
        if tol is not None:
            close |= np.isclose(g, w, rtol=tol.rtol, atol=tol.atol)
    if close.all():
        return "agree", ""
    bad = ~close
    i, j = map(int, np.argwhere(bad)[0])
    detail = (f"{int(bad.sum())} of {bad.size} differ, first at [{i}, {j}]: executor {got[i, j]!r}, "
              f"golden {want[i, j]!r}")
    if (np.isnan(g[bad]) | np.isnan(w[bad])).all():
        return "nan", detail
    with np.errstate(all="ignore"):
        if np.isclose(g[bad], w[bad], rtol=1e-2, atol=1e-6).all():
            return "tolerance", detail
    return "value", detail


def test_dirs(root: Path) -> list[tuple[str, str, Path]]:
    """(platform, directory, script) for every upstream test directory with a gen_data.py."""
    return [(platform, script.parent.name, script) for platform, rel in PLATFORMS.items()
            for script in sorted((root / rel).glob("*/gen_data.py"))]


def run_directory(db: Database, goldens, platform: str, directory: str, script: Path, rel: str) -> list[dict]:
    """Every case of one directory: its row (op, platform, case, outcome, detail)."""
    entries = goldens.entries.get((platform, directory))
    row = {"dir": directory, "profile": platform}
    if not entries:
        return [{**row, "op": "-", "outcome": "no-entry",
                 "detail": "no entry of specs/goldens.yaml names the directory"}]
    if all(e.unmapped and e.word is None and not e.when and not e.cases for e in entries):
        # one entry marks every case of the directory not mapped: its script is not run
        return [{**row, "op": entries[0].op, "outcome": "not-run", "detail": entries[0].unmapped}]
    found_cases, found, error = run_script(script)
    if error and not found_cases:
        return [{**row, "op": entries[0].op, "outcome": "script-error", "detail": error}]
    rows = []
    for (name, files), p in zip(found_cases, case_params(found, [n for n, _ in found_cases]), strict=True):
        case = Case(name, files, p)
        entry = entry_for(goldens.entries, platform, directory, name, case.words(), case.plain_params())
        if entry is None:
            outcome, detail = "no-entry", "no entry of the directory selects the case"
        else:
            try:
                outcome, detail = compare(db, goldens.type_names, entry, platform, case, rel)
            except PtospecError as exc:
                outcome, detail = "not-mapped", exc.message
            except ValueError as exc:  # a file this adapter cannot read
                outcome, detail = "not-mapped", str(exc)
        rows.append({**row, "op": entry.op if entry else "-", "case": name, "outcome": outcome, "detail": detail})
    return rows


def report(rows: list[dict]) -> None:
    """Every case that does not agree, then the groups of each outcome."""
    for row in rows:
        if row["outcome"] != "agree":
            print(f"  {row['outcome']:<12} {row['op']:<10} {row['profile']:<5} {row['dir']}/{row.get('case', '*')}: "
                  f"{row['detail']}")
    disagree = Counter((r["op"], r["profile"], r["outcome"]) for r in rows if r["outcome"] in DISAGREEMENTS)
    recorded = Counter((r["op"], r["profile"], r["detail"].split(" ", 1)[0])
                       for r in rows if r["outcome"] == "recorded")
    unmapped = Counter((r["op"], r["profile"], r["detail"]) for r in rows if r["outcome"] in ("not-mapped", "no-entry"))
    not_run = Counter((r["op"] or r["dir"], r["detail"]) for r in rows if r["outcome"] == "not-run")
    rejected = Counter((r["op"], r["profile"], " ".join(sorted(set(re.findall(r"\[([\w.-]+)\]", r["detail"])))),
                        re.sub(r"\w+=\w+: ", "", r["detail"].rsplit(" {", 1)[-1].rstrip("}")))
                       for r in rows if r["outcome"] == "spec-rejects")
    for title, counts in (("unclassified disagreements (neither fixed nor recorded)", disagree),
                          ("recorded as differences", recorded),
                          ("spec-rejects, by the rules that reject {and what stands behind them}", rejected),
                          ("not mapped, by reason", unmapped),
                          ("directories not run (each entry says why), by reason", not_run)):
        print(f"{title}: {sum(counts.values())}"
              + "".join(f"\n  {n:>4}  {' '.join(k)}" for k, n in sorted(counts.items(), key=lambda g: (-g[1], g[0]))))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        usage="pip install -e '.[goldens]'  # en_dtypes, which some upstream scripts import\n"
              "       python benchmarks/upstream_goldens.py --pto-isa-root PATH [--ops OP ...] [--dirs DIR ...]\n"
              "       [--json OUT]")
    ap.add_argument("--pto-isa-root", required=True, type=Path, help="a pto-isa checkout (its tests/ directory)")
    ap.add_argument("--specs", default=None, help="the spec database (default: the installed one)")
    ap.add_argument("--ops", nargs="*", default=None, help="only the directories whose entries name these ops")
    ap.add_argument("--dirs", nargs="*", default=None, help="only these test directories (tcolgather, ...)")
    ap.add_argument("--json", type=Path, default=None, help="write every case's outcome here")
    args = ap.parse_args()
    if not (args.pto_isa_root / "tests").is_dir():
        ap.error(f"{args.pto_isa_root} has no tests/ directory (a pto-isa checkout is needed)")
    if importlib.util.find_spec("en_dtypes") is None:
        print("warning: en_dtypes is missing (pip install -e '.[goldens]'): the scripts importing it end as "
              "script-error", file=sys.stderr)
    start = time.perf_counter()
    db = load_database(args.specs) if args.specs else load_database()
    goldens = load_goldens(db)
    dirs = test_dirs(args.pto_isa_root)
    if args.ops:
        dirs = [d for d in dirs if {e.op for e in goldens.entries.get(d[:2], ())} & set(args.ops)]
    if args.dirs:
        dirs = [d for d in dirs if d[1] in args.dirs]
    rows: list[dict] = []
    for i, (platform, directory, script) in enumerate(dirs, 1):
        print(f"\r[{i}/{len(dirs)}] {platform}/{directory}".ljust(60), end="", file=sys.stderr, flush=True)
        rows += run_directory(db, goldens, platform, directory, script,
                              script.relative_to(args.pto_isa_root).as_posix())
    print(file=sys.stderr)
    totals = Counter(r["outcome"] for r in rows)
    compared = sum(v for k, v in totals.items() if k not in ("not-mapped", "not-run", "no-entry", "script-error"))
    print(f"{len(dirs)} upstream test directories; {compared} golden cases compared: "
          + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())) + f" ({time.perf_counter() - start:.0f} s)")
    report(rows)
    if args.json:
        args.json.write_text(json.dumps({"totals": dict(totals), "cases": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
