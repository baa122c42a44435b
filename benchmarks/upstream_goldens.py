"""Upstream's NumPy goldens as a second oracle for the executor.

    pip install -e '.[goldens]'   # en_dtypes: the narrow float types some upstream scripts import
    python benchmarks/upstream_goldens.py --pto-isa-root /tmp/pto-isa [--ops tadd tmax] [--json out.json]

Runs every upstream ``gen_data.py`` whose directory is named after an op of the database in a scratch
directory (nothing is copied into the repository), relates each case it writes to a configuration of the op
and compares its golden with the executor's result. What a directory exercises (its mode, which file is which
operand, which parameters give types and shapes, why a case cannot be compared) is data:
``specs/goldens.yaml`` (``ptospec.goldens``). An entry that says everything is read by ``compare_entry``
alone; the rest goes through the name matching below (``compare_case``), narrowed by any entry. The outcomes,
the entries' keys and the name-matching conventions are described in docs/goldens.md.

Outcomes: ``agree``; ``recorded`` (a disagreement an op's ``differences`` entry records for the script);
``spec-rejects`` (the rules that reject); ``nan``, ``tolerance`` or ``value`` disagreements; ``not-mapped``
(with the reason); ``script-error``. Groups of each are printed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import itertools
import json
import os
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
from ptospec.conformance.cases import (
    SCALES,
    example_target,
    example_tiles,
    layout_variants,
    reshape,
    roundup,
    with_dtypes,
)
from ptospec.conformance.views import shaped_view
from ptospec.errors import PtospecError
from ptospec.executor import execute
from ptospec.expr.evaluate import evaluate
from ptospec.goldens import GoldenDir, entry_for, load_goldens
from ptospec.loader import load_database
from ptospec.model import Database, Mode, OpSpec
from ptospec.tile import AttrDesc, GlobalDesc, TileDesc
from ptospec.validator import Report, make_scope, validate

DISAGREEMENTS = ("value", "tolerance", "nan")
PLATFORMS = {"a2a3": "tests/npu/a2a3/src/st/testcase", "a5": "tests/npu/a5/src/st/testcase",
             "cpu": "tests/cpu/st/testcase"}

# Type names in case names and parameter strings -> NumPy names (the database maps NumPy names to its own).
TYPE_WORDS = {
    "float": "float32", "fp32": "float32", "f32": "float32", "float32": "float32",
    "half": "float16", "fp16": "float16", "f16": "float16", "float16": "float16",
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    **{w: w for w in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")},
    "s8": "int8", "u8": "uint8", "s16": "int16", "u16": "uint16", "s32": "int32", "u32": "uint32",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u64": "uint64",
    "float4_e2m1": "float4_e2m1fn",  # en_dtypes' name of the e2m1 pair's values
}
# Upstream element types the database has no dtype for: a case naming one is not mapped.
FOREIGN_TYPE_WORDS = ("fp4", "s4", "int4", "hif8", "e2m1", "e1m2")
# Upstream's file names for operands whose names differ (file stem -> operand name, lower case).
FILE_ALIASES = {"indices": "idx", "indexes": "idx", "mask": "selmask"}
# Parameter names of a case's valid region (iteration domain), most specific first; then its shape.
ROW_KEYS = ("valid_row", "valid_rows", "validrows", "h_valid", "valid_m", "src_valid_row", "dst_valid_row",
            "row", "rows", "m", "src_row", "src0_row", "dst_row", "tile_row", "src_tile_row", "src0_tile_row",
            "dst_tile_row", "global_row", "h")
COL_KEYS = ("valid_col", "valid_cols", "validcols", "w_valid", "valid_n", "src_valid_col", "dst_valid_col",
            "col", "cols", "n", "src_col", "src0_col", "dst_col", "tile_col", "src_tile_col", "src0_tile_col",
            "dst_tile_col", "global_col", "w")


@dataclass
class Case:
    """One case a script wrote: its directory name, files (stem -> bytes) and parameters."""

    name: str
    files: dict[str, bytes]
    params: dict[str, object] = field(default_factory=dict)

    def numbers(self) -> list[int]:
        """Every positive integer of the case: parameter values, then the numbers in its name (a case's
        ordinal, ``case2`` or ``test0``, is no extent)."""
        found = [v for v in self.params.values() if isinstance(v, int) and not isinstance(v, bool) and v > 0]
        stem = re.sub(r"(?:^|(?<=_))(?:case|test)\d+(?=_|$)", "", self.name.split(".", 1)[-1], flags=re.I)
        found += [int(x) for x in re.findall(r"\d+", stem)]
        return [n for n in dict.fromkeys(found) if n > 0]

    def shapes(self) -> tuple[tuple[int, int], ...]:
        """The shapes the case gives: each row parameter followed by a column parameter (``in_row``,
        ``in_col``), then the ``RxC`` of its name, in order."""
        items = [(k, v) for k, v in self.params.items() if isinstance(v, int) and not isinstance(v, bool)]
        pairs = [(r, c) for (kr, r), (kc, c) in itertools.pairwise(items)
                 if "row" in kr and "col" in kc and kr.replace("row", "col") == kc]
        # an operand given rows but no columns (``dst_row`` alone) is one column wide
        keys = dict(items)
        columns = [(v, 1) for k, v in items if k.endswith("_row") and k.removesuffix("_row") + "_col" not in keys
                   and not k.startswith(("valid", "src_valid"))]
        named = [(int(r), int(c)) for r, c in re.findall(r"(\d+)x(\d+)", self.name.split(".", 1)[-1])]
        return tuple(dict.fromkeys([*pairs, *named, *columns]))

    def type_names(self) -> list[str]:
        """NumPy names of the element types the case names (parameters first, then its name), in order."""
        out: list[str] = []
        for value in self.params.values():
            name = _numpy_name(value)
            if name:
                out.append(name)
            elif isinstance(value, str) and (pair := re.fullmatch(r"([a-z]+\d+)2([a-z]+\d+)", value.lower())):
                # a conversion named by its type pair: "f322f16", "s162s8"
                out += [TYPE_WORDS[w] for w in pair.groups() if w in TYPE_WORDS]
        for word in re.split(r"[_\W]+", self.name.split(".", 1)[-1].lower()):
            if word in TYPE_WORDS:
                out.append(TYPE_WORDS[word])
        return list(dict.fromkeys(out))

    def words(self) -> list[str]:
        """Upper-case words of the case's string parameters (``CmpMode::EQ`` -> ``EQ``) and name."""
        out = []
        for value in self.params.values():
            if isinstance(value, str):
                out += [w.upper() for w in re.split(r"::|\W+", value) if w]
        out += [w.upper() for w in re.split(r"[_\W]+", self.name.split(".", 1)[-1]) if w]
        return out


def _numpy_name(value: object) -> str | None:
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.dtype):
        return value.name
    return None


def run_script(path: Path) -> tuple[list[tuple[str, dict[str, bytes]]], dict, str | None]:
    """Run one gen_data.py in a scratch directory; return the files each case directory received (in the
    order the script entered them), the script's globals and an error, if any."""
    order: list[str] = []
    real_chdir, real_makedirs = os.chdir, os.makedirs

    def chdir(target):
        real_chdir(target)
        here = os.getcwd()
        if here not in order:
            order.append(here)

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:

        def makedirs(target, *args, **kwargs):  # nothing is created beside the script (the checkout is shared)
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
        state = np.random.get_state()
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
            real_chdir(here)
        dirs = [d for d in order if d != scratch and Path(d).is_dir()]
        if not dirs:  # scripts that write their files without entering a directory per case
            dirs = [scratch]
        cases = [(Path(d).name, {f.stem: f.read_bytes() for f in Path(d).glob("*.bin")}) for d in dirs]
    return [c for c in cases if c[1]], found, error


def case_params(found: dict, names: list[str]) -> list[dict[str, object]]:
    """Each case's parameters: the attributes of the script's parameter object for it, found by the
    object's ``name``/``case_name``/``testname`` (in any of its lists of objects), by a list of case names the
    script keeps alongside its list of objects, or else by position in the list of objects (when there is one
    per case)."""
    lists = [v for k, v in found.items() if isinstance(v, list) and v and all(hasattr(p, "__dict__") for p in v)
             and not k.startswith("_")]
    lists.sort(key=lambda v: (len(v) != len(names), 0 if v is found.get("case_params_list") else 1))
    objects = lists[0] if lists else []
    by_name: dict[str, object] = {}
    for p in (p for v in lists for p in v):  # an object naming its case, in any list of objects
        for attr in ("name", "case_name", "testname", "test_name"):
            value = getattr(p, attr, None)
            if isinstance(value, str):
                by_name[value] = p
    for v in found.values():
        if isinstance(v, list) and len(v) == len(objects) and v and all(isinstance(x, str) for x in v):
            by_name.update({x: p for x, p in zip(v, objects, strict=True) if x not in by_name})
    out = []
    for i, name in enumerate(names):
        p = by_name.get(name) or (objects[i] if len(objects) == len(names) else None)
        out.append({k.lower(): v for k, v in vars(p).items()} if p is not None else {})
    return out


def inner_extent(case: Case) -> int | None:
    """The contraction extent K a matrix multiply's case names (its ``k`` parameter), for ``inner`` shapes."""
    k = case.params.get("k")
    return int(k) if isinstance(k, int) and not isinstance(k, bool) else None


def valid_region(case: Case) -> tuple[int, int] | None:
    """The case's iteration domain: its first row and column parameters (valid ones first), else the
    first ``RxC`` of its name, else one row of the first number standing alone in its name."""
    rows = next((case.params[k] for k in ROW_KEYS if isinstance(case.params.get(k), int)), None)
    cols = next((case.params[k] for k in COL_KEYS if isinstance(case.params.get(k), int)), None)
    if rows and cols:
        return int(rows), int(cols)
    match = re.search(r"(\d+)x(\d+)", case.name)
    if match:
        return int(match[1]), int(match[2])
    match = re.search(r"_(\d+)(?:_|$)", case.name)  # a count alone: one row of it
    return (1, int(match[1])) if match else None


def file_matrix(values: np.ndarray, region: tuple[int, int], numbers: list[int],
                shapes: tuple[tuple[int, int], ...] = ()) -> np.ndarray | None:
    """``values`` as a row-major matrix holding a ``region`` (rows x cols) in its top-left corner: the
    column count of a shape the case names (``16x1``) that the file fills exactly, as values or as bits,
    else the largest of
    ``numbers`` (or the region's own) that fits; None if none does."""
    rows, cols = region
    named = [c for r, c in shapes if r * c == values.size and r >= rows and c >= cols]
    bits = values.itemsize * 8  # a named shape's bits packed into the file (np.packbits of a mask): integers only
    named += [c // bits for r, c in shapes if values.dtype.kind in "iu" and r * c == values.size * bits
              and c % bits == 0 and r >= rows and c // bits >= cols]
    for width in [*named, *sorted({*numbers, cols}, reverse=True)]:
        if width >= cols and values.size % width == 0 and values.size // width >= rows:
            return values.reshape(values.size // width, width)
    return None


@dataclass(frozen=True)
class Assignment:
    """Which file feeds which operand of a mode."""

    mode: Mode
    outputs: dict[str, str]  # operand -> golden file
    sources: dict[str, str]  # tile operand -> input file
    scalars: dict[str, str]  # scalar operand -> one-element file
    scalar_params: dict[str, str] = field(default_factory=dict)  # scalar operand -> case parameter


def _bare_name(name: str) -> str:
    """A name without case and underscores: ``block_len`` and ``blockLen`` are one name."""
    return name.lower().replace("_", "")


def assign_files(op: OpSpec, sizes: dict[str, int], itemsizes: list[int],
                 params: dict[str, object] | None = None) -> list[Assignment]:
    """Every mode of ``op`` whose operands take exactly the files (stem -> bytes): goldens to the outputs
    (by name suffix, ``golden_val`` -> ``dstVal``, else in order), one-element files to scalars, the
    rest to the tile sources (a file named like an operand goes to it, numbered input files to the numbered
    sources in numeric order, the others in order); one more
    tile file than sources is the initial contents of the output (operands in C++ order take the files
    in order). A scalar without a file takes the integer case parameter of its name (``block_len`` for
    ``blockLen``), when ``params`` has one."""
    found = []
    every = sizes
    by_plain = {_bare_name(k): k for k, v in (params or {}).items() if isinstance(v, int) and not isinstance(v, bool)}
    for mode in op.modes:
        outs = [o.name for o in mode.operands if o.role == "out"]
        ins = [o.name for o in mode.operands if o.role == "in"]
        # a file named after a scratch operand (input_tmp.bin: upstream's zeros for tmp) is set aside: no
        # result depends on a scratch tile's contents
        scratch = {o.name.lower() for o in mode.operands if o.role == "tmp"}
        sizes = {s: n for s, n in every.items() if s.lower().removeprefix("input_") not in scratch}
        # besides golden*, a file named after the end of an output's name and of no input's (idx.bin for
        # dstIdx) is an expected output
        named_out = {s for s in sizes if not s.startswith("golden") and any(o.lower().endswith(s.lower()) for o in outs)
                     and not any(s.lower() in (i.lower(), FILE_ALIASES.get(s.lower())) for i in ins)}
        goldens = sorted(s for s in sizes if s.startswith("golden") or s in named_out)
        small = [s for s in sorted(sizes) if s not in goldens and sizes[s] in itemsizes]
        from_params = {o.name: by_plain[_bare_name(o.name)] for o in mode.operands
                       if o.role == "scalar" and _bare_name(o.name) in by_plain}
        scalars = [o.name for o in mode.operands if o.role == "scalar" and o.name not in from_params]
        scalar_files = small[:len(scalars)]
        tile_files = [s for s in sorted(sizes) if s not in goldens and s not in scalar_files]
        if len(outs) == 1 and len(tile_files) == len(ins) + 1:
            ins = [o.name for o in mode.operands if o.role in ("in", "out")]
        if (len(outs), len(ins), len(scalars)) != (len(goldens), len(tile_files), len(scalar_files)):
            continue
        numbered = {**_numbered_pairs(outs, goldens, "dst", "golden"),
                    **_numbered_pairs(ins, tile_files, "src", "input"), **_worded_pairs(ins, tile_files)}
        outputs = _match(outs, goldens,
                         lambda o, f: (f != "golden" and o.lower().endswith(f.lower().removeprefix("golden_")))
                         or numbered.get(o) == f)  # noqa: B023 (called here, in this iteration)
        sources = _match(ins, tile_files, lambda o, f: o.lower() in (f.lower(), f.lower().removeprefix("input_"),
                                                                     FILE_ALIASES.get(f.lower()))
                         or numbered.get(o) == f)  # noqa: B023 (called here, in this iteration)
        found.append(Assignment(mode, outputs, sources, dict(zip(scalars, scalar_files, strict=True)), from_params))
    return found


def _numbered_pairs(operands: list[str], files: list[str], op_prefix: str, file_prefix: str) -> dict[str, str]:
    """Numbered files (``input0``, ``input1`` or ``input1``, ``input2``; ``golden0``, ``golden1``) to the
    numbered operands (``src0``, ``src1``; ``dst0``, ``dst1``) in numeric order, when there are at least two
    and as many of each: TINTERLEAVE reads the first input into src0 and compares the first golden with
    dst0, which its C++ order lists after src1 and dst1."""
    def number(name: str, prefix: str) -> int | None:
        rest = name.lower().removeprefix(prefix)
        return int(rest) if name.lower().startswith(prefix) and rest.isdigit() else None

    srcs = sorted((n, o) for o in operands if (n := number(o, op_prefix)) is not None)
    inputs = sorted((n, f) for f in files if (n := number(f, file_prefix)) is not None)
    if len(srcs) < 2 or len(srcs) != len(inputs):
        return {}
    return {o: f for (_, o), (_, f) in zip(srcs, inputs, strict=True)}


def _worded_pairs(operands: list[str], files: list[str]) -> dict[str, str]:
    """Files named by a number and a word (``input0_idx``, ``input1_val``) to the operands of that number
    whose name ends in the word (``src0Idx``), or, for a word no operand ends in (``val``), to the plain
    operand of that number (``src0``); only when every file finds exactly one operand of its own."""
    def parts(name: str) -> tuple[str, str] | None:
        m = re.fullmatch(r"[a-z]+?(\d+)_?([a-z]*)", name.lower())
        return (m[1], m[2]) if m else None

    ops = {o: p for o in operands if (p := parts(o))}
    words = {w for _, w in ops.values() if w}
    out: dict[str, str] = {}
    for f in files:
        m = re.fullmatch(r"[a-z]+_?(\d+)_([a-z]+)", f.lower())
        if not m:
            return {}
        number, word = m[1], m[2]
        hits = [o for o, (n, w) in ops.items() if n == number and (w == word or (not w and word not in words))]
        if len(hits) != 1 or hits[0] in out:
            return {}
        out[hits[0]] = f
    return out


def _match(operands: list[str], files: list[str], same) -> dict[str, str]:
    out = {o: f for o in operands for f in files if same(o, f)}
    rest = [f for f in files if f not in out.values()]
    for o in operands:
        if o not in out:
            out[o] = rest.pop(0)
    return out


def bindings(db: Database, op: OpSpec, a: Assignment, profile: str, case: Case) -> list[dict[str, str]]:
    """Type-variable bindings for the case: every binding of the op's table on the profile in which each
    operand with a file has a type the case names and the file's size fits (a type variable that admits
    none of the named types on any row while another does, e.g. an index, may take any type that fits);
    else the case's first named type for every variable (for the validator to judge)."""
    order = case.type_names()
    named = sorted((d for d, s in db.isa.dtypes.items() if np.dtype(s.numpy).name in order),
                   key=lambda d: order.index(np.dtype(db.isa.dtypes[d].numpy).name))
    files = {**a.outputs, **a.sources, **a.scalars}
    table = op.dtypes.get(profile)
    rows = [r for r in (table.rows if table else ()) if a.mode.name in r.modes]
    admitted = {v: {d for r in rows for d in r.types.get(v, ())} for v in a.mode.type_vars}
    # a type only scratch tiles use changes no result: one value, preferably one another variable has
    scratch = {v for v in a.mode.type_vars if all(o.role == "tmp" for o in a.mode.operands if o.dtype == v)}
    # a scratch variable admitting a named type frees no other variable
    taken = {v for v in a.mode.type_vars if admitted[v] & set(named) and v not in scratch}
    free = {v for v in a.mode.type_vars if v not in taken} if taken else set()
    # portable types: those every profile admits for a variable
    portable = {v: set.intersection(*({d for r in t.rows if a.mode.name in r.modes for d in r.types.get(v, ())}
                                      for t in op.dtypes.values())) for v in a.mode.type_vars} if op.dtypes else {}
    # variables of inputs whose values the op reads as positions (an input with a domain, e.g. an index):
    # when the case names none of their portable types they may take one, and prefer one (int32 indices)
    index_like = {v for v in portable if all(o.role == "in" and o.domain is not None
                                             for o in a.mode.operands if o.dtype == v)
                  and any(o.dtype == v for o in a.mode.operands)}
    out = []
    for row in rows:
        for choice in _row_bindings(a.mode, row.types):
            ok = all(len(case.files[files[o.name]]) % db.isa.dtypes[choice[o.dtype]].bytes == 0
                     and (choice[o.dtype] in named or o.dtype in free
                          or (o.dtype in index_like and choice[o.dtype] in portable[o.dtype]
                              and not portable[o.dtype] & set(named)))
                     for o in a.mode.operands if o.name in files and o.role != "scalar")
            if ok and not any(all(c[v] == choice[v] for v in a.mode.type_vars if v not in scratch) for c in out):
                data_types = [choice[v] for v in a.mode.type_vars if v not in scratch]
                for v in scratch:
                    choice[v] = next((d for d in data_types if d in row.types[v]), choice[v])
                out.append(choice)
    if not out and named:
        out.append({v: named[0] for v in a.mode.type_vars})
    # the bindings that give operands the types parameters named after them (``dst_dtype``, ``srctype``,
    # ``dtype_mask``) and
    # that use most named types come first
    by_operand = {}
    for key, value in case.params.items():
        name = _numpy_name(value)
        for o in a.mode.operands:
            if name and o.dtype and (key.startswith(o.name.lower()) or key.endswith("_" + o.name.lower())):
                by_operand[o.name] = name

    def rank(c: dict[str, str]) -> tuple[int, int, int]:
        agree = sum(np.dtype(db.isa.dtypes[c[o.dtype]].numpy).name == t for o in a.mode.operands
                    if (t := by_operand.get(o.name)) and o.dtype in c)
        return (-agree, -len(set(c.values()) & set(named)),
                -sum(c.get(v) in portable[v] for v in index_like), -sum(c.get(v) in named for v in a.mode.type_vars))


    out.sort(key=rank)
    # a case that names one type per variable (``case_float_uint16``: data, then index) while no binding of
    # the table has them all is those types, for the validator to judge: the variables parameters name
    # take theirs (``idx_type``), the others the remaining named types in order; not when a parameter gives
    # the type of an operand of another mode only (``src_type`` for TGATHER's index form: not its case)
    data_vars = [v for v in a.mode.type_vars if v not in scratch]
    others = {o.name.lower() for m in op.modes for o in m.operands} - {o.name.lower() for o in a.mode.operands}
    elsewhere = any(re.fullmatch(r"(.+?)_?d?type", k) and re.fullmatch(r"(.+?)_?d?type", k)[1] in others
                    for k, v in case.params.items() if _numpy_name(v))
    if len(named) == len(data_vars) > 1 and not elsewhere \
            and not any(set(named) <= {c[v] for v in data_vars} for c in out):
        own = {o.dtype: d for o in a.mode.operands if o.name in by_operand
               for d, s in db.isa.dtypes.items() if np.dtype(s.numpy).name == by_operand[o.name]}
        rest = [d for d in named if d not in own.values()]
        if len(own) + len(rest) == len(data_vars):
            choice = {v: own[v] if v in own else rest.pop(0) for v in data_vars}
            return [{**choice, **{v: choice[data_vars[0]] for v in scratch}}]
    # a binding that contradicts a type the parameters give an operand by name is not this case
    exact = [c for c in out if rank(c)[0] == -sum(o.name in by_operand for o in a.mode.operands if o.dtype in c)]
    if exact or not by_operand:
        return exact or out
    # no row of the table has the parameters' types: those types, for the validator to judge
    given = {o.dtype: d for o in a.mode.operands if o.name in by_operand
             for d, s in db.isa.dtypes.items() if np.dtype(s.numpy).name == by_operand[o.name]}
    if all(v in given for v in a.mode.type_vars if v not in scratch):
        return [{v: given.get(v, named[0] if named else next(iter(given.values()))) for v in a.mode.type_vars}]
    return out


def _row_bindings(mode: Mode, types: dict[str, tuple[str, ...]]) -> list[dict[str, str]]:
    combos: list[dict[str, str]] = [{}]
    for v in mode.type_vars:
        combos = [{**c, v: d} for c in combos for d in types.get(v, ())]
    return combos


def attributes(db: Database, mode: Mode, case: Case, defaults: bool,
               given: dict | None = None) -> dict[str, str] | None:
    """Each attribute operand's value: the first word of the case that is an enumerator of its enum; else the
    value the assembler assumes when it is absent (``dialect.default``, GATHER_ROW); else, when ``defaults``, the
    enum's first enumerator (the C++ default template argument, e.g. ``GatherOOB::Undefined``), else None."""
    out = {}
    words = case.words()
    params = {_bare_name(k): v for k, v in case.params.items()}
    for a in mode.attrs:
        if given and a.name in given:  # the directory's entry says
            out[a.name] = given[a.name]
            continue
        if not a.enum:  # a typed attribute (a flag or a number): only a case parameter of its name gives it
            if _bare_name(a.name) not in params:
                return None
            value = params[_bare_name(a.name)]
            out[a.name] = bool(value) if a.attr_type == "bool" and value in (0, 1) else value  # a flag given as 0/1
            continue
        values = db.isa.enums[a.enum].values
        value = next((v for w in words for v in values if v.upper() == w), None)
        if value is None:  # a word ending in an enumerator of more than two letters: ATOMICADD -> Add
            value = next((v for w in words for v in values if len(v) > 2 and w.endswith(v.upper())), None)
        if value is None and a.dialect_default is not None and _bare_name(a.name) not in params:
            value = a.dialect_default  # the value a kernel leaving it out gets (no parameter names another)
        if value is None:
            if not defaults:
                return None
            value = values[0]
        out[a.name] = value
    return out


def configure(db: Database, op: OpSpec, mode: Mode, profile: str, binding: dict[str, str],
              attrs: dict[str, str], target: tuple[int, int],
              globals_: dict[str, list[tuple[int, int]]] | None = None, derived: bool | str = False,
              named: dict[str, dict[int, int]] | None = None,
              shapes: dict[str, dict[str, tuple[int, int]]] | None = None,
              inner: int | None = None) -> tuple[list[dict], Report]:
    """The legal configurations of the mode at valid region ``target``: the first the example's layout
    variants give (smallest physical rounding first); when ``derived == "plain"``, the plainest one
    (``_plain``) if legal; when ``derived``, the first for each set of
    derived extents (``derived_extents``) of the example's own layouts; and the report on the plainest
    one. ``globals_`` gives the shapes a global operand may take (those its file can hold); ``named``, the
    extents the case's parameters give operands (``operand_extents``); ``shapes``, the valid and tile shapes
    it gives single operands (``named_shapes``), which the first configuration takes when they are legal."""
    base = with_dtypes(db, mode, example_tiles(db, mode), binding)
    base = {n: AttrDesc(attrs[n]) if n in attrs else t for n, t in base.items()}
    variants = list(layout_variants(db, base))
    plain_tiles = _plain(db, variants[0], target)
    plain = validate(db, op.name, mode.name, profile, plain_tiles)
    if any(v.rule.startswith(("dtype.", "profile.")) for v in plain.violations):
        return [], plain  # no shape or layout makes these types or this mode legal
    found = []
    if not derived:
        for variant in variants if not globals_ else ():
            # the case names one valid region, the source's: every operand's follows it (derived extents cover
            # the rest), or a transposing mode's destination has it transposed
            if any(s.transposed for s in mode.shapes.values()):
                tiles = reshape(db, op, mode, profile, variant, target[::-1], False, lambda r: r.ok)
            else:
                tiles = reshape(db, op, mode, profile, variant, target, False, lambda r: r.ok, inner=inner)
            if tiles is not None:
                # the shapes the case gives single operands (a smaller source, upstream's tile shapes) win
                named_tiles = with_named_shapes(db, tiles, shapes, target) if shapes else None
                if named_tiles is not None and validate(db, op.name, mode.name, profile, named_tiles).ok:
                    tiles = named_tiles
                found.append(tiles)
                break
        return found, plain
    if derived == "plain":
        return ([plain_tiles] if plain.ok and not globals_ else []), plain
    shapes = [dict(zip(globals_, combo, strict=True)) for combo in itertools.product(*globals_.values())] \
        if globals_ else [{}]
    for extents in derived_extents(variants[0], target, with_default=bool(globals_), named=named):
        for views_ in shapes:
            for kr, kc in SCALES:
                tiles = _with_extents(db, variants[0], extents, views_, kr, kc)
                if validate(db, op.name, mode.name, profile, tiles).ok:
                    found.append(tiles)
                    break
    return found, plain


def derived_extents(base: dict, target: tuple[int, int], with_default: bool = False,
                    named: dict[str, dict[int, int]] | None = None) -> list[dict[str, tuple[int, int]]]:
    """Valid shapes for operands whose example extent is neither 1 nor the example's iteration domain (a
    block per row, a bit-packed mask): each such extent either stays as in the example or scales with the
    target, or (one per row or column of the example) follows the target's other extent; the other extents
    follow the target as in ``reshape``, or takes the extent the case names for that operand (``named``:
    ``src1_col = 16`` for a block of f16). Every combination, for the validator; ``with_default`` puts the
    plain mapping first (it is what ``reshape`` tries)."""
    ex_rows, ex_cols = example_target(base)
    ex = (ex_rows, ex_cols)
    options: list[list[tuple[str, int, int]]] = []
    for name, t in base.items():
        if not isinstance(t, TileDesc):
            continue
        for axis, extent in ((0, t.valid_row), (1, t.valid_col)):
            if extent in (1, ex[axis]):
                continue
            choices = [(name, axis, extent), (name, axis, max(1, -(-extent * target[axis] // ex[axis])))]
            if with_default:
                choices.insert(0, (name, axis, target[axis]))
            if extent == ex[1 - axis]:
                choices.append((name, axis, target[1 - axis]))
            given = (named or {}).get(name, {}).get(axis)
            if given and (name, axis, given) not in choices:
                choices.append((name, axis, given))
            options.append(choices)
    if not options and not with_default:
        return []
    combos = []
    for choice in itertools.product(*options):
        extents: dict[str, tuple[int, int]] = {}
        for name, t in base.items():
            if isinstance(t, TileDesc):
                extents[name] = (1 if t.valid_row == 1 else target[0], 1 if t.valid_col == 1 else target[1])
        for name, axis, value in choice:
            extents[name] = (value, extents[name][1]) if axis == 0 else (extents[name][0], value)
        if extents not in combos:
            combos.append(extents)
    return combos


def _with_extents(db: Database, base: dict, extents: dict[str, tuple[int, int]],
                  views_: dict[str, tuple[int, int]], kr: int, kc: int) -> dict:
    out = {}
    for name, t in base.items():
        if name in views_:
            out[name] = shaped_view(db.isa, t, *views_[name], False)
        elif name in extents:
            vr, vc = extents[name]
            out[name] = t.with_(rows=roundup(vr, 1 << kr), cols=roundup(vc, 1 << kc), valid_row=vr, valid_col=vc)
        else:
            out[name] = t
    return out


def _plain(db: Database, base: dict, target: tuple[int, int]) -> dict:
    """``base`` on ``target`` with the extent along the tile's layout (columns of a row-major tile, rows
    of a column-major one) rounded up to 32 bytes and the other as valid."""
    out = {}
    for name, t in base.items():
        if not isinstance(t, TileDesc):
            out[name] = t
            continue
        vr = 1 if t.valid_row == 1 else target[0]
        vc = 1 if t.valid_col == 1 else target[1]
        unit = max(1, 32 // max(1, db.isa.dtypes[t.dtype].bytes))
        if t.blayout == "ColMajor":
            out[name] = t.with_(rows=-(-vr // unit) * unit, cols=vc, valid_row=vr, valid_col=vc)
        else:
            out[name] = t.with_(rows=vr, cols=-(-vc // unit) * unit, valid_row=vr, valid_col=vc)
    return out


def variant_op(db: Database, op: OpSpec, case: Case) -> OpSpec:
    """The op a case of ``op``'s directory is about: a variant the case names (``TMATMULBIASTest.case8``,
    ``TMATMULTest.case_bias_gemm``: ``tmatmul_bias``), when the database has one, else ``op`` itself."""
    test_class = case.name.split(".", 1)[0].lower().removesuffix("_test").removesuffix("test")
    for other in db.ops.values():
        if other.name.startswith(op.name + "_") and (
                test_class == other.name.replace("_", "") or other.name[len(op.name) + 1:].upper() in case.words()):
            return other
    return op


def directory_entry(db: Database, profile: str, script: str, case: Case) -> GoldenDir | None:
    """The ``specs/goldens.yaml`` entry of the script's directory on this platform that selects the case."""
    if not script:
        return None
    return entry_for(load_goldens_cached(db), profile, Path(script).parent.name, case.words(), plain_params(case))


def plain_params(case: Case) -> dict[str, object]:
    """The case's parameters with element types as NumPy names (``np.float16`` -> ``float16``), and the
    numbers of its name (``case_u32_1x128_b3``: 1, 128) as ``name1``, ``name2``, ... (split at _ and x), and
    the integers of a parameter holding a shape as ``<name>_0``, ``<name>_1``."""
    numbers = [int(t) for t in re.split(r"[_x]", case.name.split(".", 1)[-1]) if t.isdigit()]
    named = {f"name{i}": n for i, n in enumerate(numbers, 1)}
    # a parameter holding a shape, (4, 8), gives <name>_0 and <name>_1
    parts = {f"{k}_{i}": n for k, v in case.params.items() if isinstance(v, tuple | list)
             for i, n in enumerate(v) if isinstance(n, int) and not isinstance(n, bool)}
    return {**named, **parts, **{k: _numpy_name(v) or v for k, v in case.params.items()}}


_GOLDENS: dict[int, dict] = {}


def load_goldens_cached(db: Database) -> dict:
    if id(db) not in _GOLDENS:
        _GOLDENS[id(db)] = load_goldens(db)
    return _GOLDENS[id(db)]


def entry_binding(db: Database, entry: GoldenDir, mode: Mode, case: Case) -> dict[str, str] | str:
    """The type variables an entry binds (``types``: a parameter or a dtype; ``type_words``: the type words of
    the case's name in order); a message when a named type is not in the database."""
    by_numpy = {np.dtype(s.numpy).name: d for d, s in db.isa.dtypes.items() if s.numpy}
    params = plain_params(case)
    words = [TYPE_WORDS[w] for w in re.split(r"[_\W]+", case.name.split(".", 1)[-1].lower()) if w in TYPE_WORDS]
    out: dict[str, str] = {}
    for var, given in entry.types.items():
        name = given if given in db.isa.dtypes else params.get(given.lower())
        if name not in db.isa.dtypes:
            name = by_numpy.get(TYPE_WORDS.get(str(name), str(name)))
        if name is None:
            value = params.get(given.lower())
            return (f"the case has no parameter {given}" if value is None else
                    f"{given} = {value} names no element type of the database")
        out[var] = name
    for var, word in zip(entry.type_words, words, strict=False):
        out.setdefault(var, by_numpy[word])
    return out


def compare_entry(db: Database, entry: GoldenDir, profile: str, case: Case, script: str) -> tuple[str, str]:
    """A case whose entry says everything (mode, files, types, shapes or views): configured as it says,
    judged by the validator, run and compared; no name matching."""
    op = db.ops[entry.op]
    mode = next(m for m in op.modes if m.name == entry.mode_for(case.words()))
    binding = entry_binding(db, entry, mode, case)
    if isinstance(binding, str):
        return "not-mapped", binding
    missing = [v for v in mode.type_vars if v not in binding]
    if missing:
        return "not-mapped", f"the entry binds no type to {', '.join(missing)}"
    attrs = attributes(db, mode, case, defaults=True, given=entry.attrs) or {}
    tiles = with_dtypes(db, mode, example_tiles(db, mode), binding)
    tiles = {n: AttrDesc(attrs[n]) if n in attrs else t for n, t in tiles.items()}
    # c0_<v>: how many elements of type variable v fill 32 bytes (a C0 block: the kernels' alignment unit)
    c0 = {f"c0_{v.lower()}": max(1, 32 // db.isa.dtypes[d].bytes) for v, d in binding.items()}
    params = {**plain_params(case), **c0}
    shapes = entry.shapes_for(params, {o.name for o in mode.operands})
    if shapes is None:
        return "not-mapped", "a parameter the entry's shapes name is missing from the case"
    for name, given in shapes.items():
        t = tiles[name]
        vr, vc = given.get("valid", (t.valid_row, t.valid_col))
        t = t.with_(valid_row=vr, valid_col=vc, **entry.layouts.get(name, {}))
        # a tile shape not given: the valid region, rounded up to 32 bytes along the layout
        unit = max(1, 32 // max(1, db.isa.dtypes[t.dtype].bytes))
        rows, cols = given.get("tile", (roundup(vr, unit), vc) if t.blayout == "ColMajor" else (vr, roundup(vc, unit)))
        tiles[name] = t.with_(rows=rows, cols=cols)
    views = {}
    for name, view in entry.views.items():
        dims = view.dims(params)
        if dims is None:
            return "not-mapped", f"a parameter the view of {name} names is missing from the case"
        shape, buffer = dims
        views[name] = GlobalDesc(tiles[name].dtype, shape, packed_strides(db.isa, buffer, view.layout), view.layout,
                                 0, int(np.prod(buffer)))
        if isinstance(tiles[name], GlobalDesc):
            tiles[name] = views[name]
    report = validate(db, op.name, mode.name, profile, tiles)
    if not report.ok:
        return "spec-rejects", f"{mode.name}: " + "; ".join(v.one_line() for v in report.violations)
    data, wants = {}, {}
    roles = {o.name: o.role for o in mode.operands}
    for stem, name in entry.files.items():
        if name is None:
            continue
        if stem not in case.files:
            return "not-mapped", f"the case has no file {stem}.bin"
        t = tiles[name]
        values = file_values(db, t.dtype, case.files[stem])
        if isinstance(t, GlobalDesc):
            if values.size != t.size:
                return "not-mapped", f"{stem}.bin holds {values.size} elements, the view's buffer {t.size}"
            (wants if roles[name] == "out" else data)[name] = values.reshape(1, -1) if roles[name] == "out" else values
        elif name in views:
            loaded = loaded_tile(db, profile, t, views[name], values)
            if isinstance(loaded, str):
                return "not-mapped", loaded
            data[name] = loaded
        else:
            matrix = next((values[:r * c].reshape(r, c) for r, c in ((t.rows, t.cols), (t.valid_row, t.valid_col))
                           if values.size == r * c), None)
            if matrix is None:
                return "not-mapped", (f"{stem}.bin holds {values.size} elements, neither {name}'s tile "
                                      f"({t.rows}x{t.cols}) nor its valid region ({t.valid_row}x{t.valid_col})")
            if roles[name] == "out":
                wants[name] = matrix[:t.valid_row, :t.valid_col]
            else:
                data[name] = np.zeros((t.rows, t.cols), values.dtype)
                data[name][:t.valid_row, :t.valid_col] = matrix[:t.valid_row, :t.valid_col]
    for name, t in tiles.items():  # a global output without a file starts as zeros, as upstream's do; so does
        # an input the entry sets its file aside for (one the semantics does not read in these cases)
        if isinstance(t, GlobalDesc) and roles.get(name) == "out" and name not in data:
            data[name] = np.zeros(t.size, np.dtype(db.isa.dtypes[t.dtype].numpy))
        elif isinstance(t, TileDesc) and roles.get(name) == "in" and name not in data and name not in entry.views:
            data[name] = np.zeros((t.rows, t.cols), np.dtype(db.isa.dtypes[t.dtype].numpy))
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
        return np.frombuffer(raw, dtype=np.dtype(spec.numpy)).copy()
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
    for valid in itertools.product((tile.valid_row, tile.rows), (tile.valid_col, tile.cols)):
        target = tile.with_(loc=loc, valid_row=valid[0], valid_col=valid[1])
        report = validate(db, "tload", "default", profile, {"dst": target, "src": view})
        if report.ok:
            got = execute(db, "tload", "default", profile, {"dst": target, "src": view}, {"src": buffer})["dst"]
            out = np.zeros((tile.rows, tile.cols), got.dtype)
            out[:tile.valid_row, :tile.valid_col] = got[:tile.valid_row, :tile.valid_col]
            return out
    return "no TLOAD reads the file's view into the tile: " + "; ".join(v.one_line() for v in report.violations)


def entry_assignments(db: Database, op: OpSpec, entry: GoldenDir, case: Case,
                      found: list[Assignment]) -> list[Assignment]:
    """The assignments a directory entry allows: its mode for the case's words, its files' operands."""
    mode_name = entry.mode_for(case.words())
    if mode_name is not None:
        found = [a for a in found if a.mode.name == mode_name] or [
            a for a in assign_files(op, {k: len(v) for k, v in case.files.items()},
                                    sorted({s.bytes for s in db.isa.dtypes.values()}), case.params)
            if a.mode.name == mode_name]
        mode = next((m for m in op.modes if m.name == mode_name), None)
        roles = {o.name: o.role for o in mode.operands} if mode is not None else {}
        # the entry names every file of the case; a file of another mode's operand is set aside (the sym
        # cases of TQUANT write an unused offset file)
        files = {f: o for f, o in entry.files.items() if f in case.files and o in roles}  # None: set aside
        if files and set(case.files) <= set(entry.files):
            found = [Assignment(mode, {o: f for f, o in files.items() if roles[o] == "out"},
                                {o: f for f, o in files.items() if roles[o] == "in"},
                                {o: f for f, o in files.items() if roles[o] == "scalar"})]
    return found


def entry_configuration(db: Database, op: OpSpec, mode: Mode, profile: str, binding: dict[str, str],
                        attrs: dict[str, str], shapes: dict[str, dict[str, tuple[int, int]]],
                        target: tuple[int, int]) -> tuple[list[dict], Report]:
    """The example's tiles with the types bound and the shapes a directory entry gives: legal or not."""
    base = with_dtypes(db, mode, example_tiles(db, mode), binding)
    base = {n: AttrDesc(attrs[n]) if n in attrs else t for n, t in base.items()}
    tiles = with_named_shapes(db, base, shapes, target)
    if tiles is None:
        return [], Report(op.name, mode.name, profile, (), ())
    report = validate(db, op.name, mode.name, profile, tiles)
    return ([tiles] if report.ok else []), report


def compare_case(db: Database, op: OpSpec, profile: str, case: Case, script: str = "") -> tuple[str, str]:
    """(outcome, detail) of one case: agree | recorded | spec-rejects | nan | tolerance | value | not-mapped.
    ``script`` is the gen_data.py's path in the checkout, which a recorded difference names, and whose
    directory may have an entry in ``specs/goldens.yaml``."""
    entry = directory_entry(db, profile, script, case)
    if entry is not None and entry.unmapped:
        return "not-mapped", entry.unmapped
    if entry is not None and entry.files and entry.modes and (entry.types or entry.type_words) \
            and set(case.files) <= set(entry.files):
        return compare_entry(db, entry, profile, case, script)
    if entry is not None and entry.op != op.name:
        op = db.ops[entry.op]
    foreign = [w for w in re.split(r"[_\W]+", case.name.lower()) if w.startswith(FOREIGN_TYPE_WORDS)]
    if foreign:
        return "not-mapped", f"element type {foreign[0]} is not in the database"
    target = valid_region(case)
    if target is None:
        return "not-mapped", "no valid region in the case's parameters or name"
    itemsizes = sorted({s.bytes for s in db.isa.dtypes.values()})
    sizes = {k: len(v) for k, v in case.files.items()}
    assignments = assign_files(op, sizes, itemsizes, case.params)
    if entry is not None:
        assignments = entry_assignments(db, op, entry, case, assignments)
    if not assignments:
        return "not-mapped", f"no mode of {op.name} takes the files {sorted(sizes)}"
    effects = [a.mode for a in assignments if a.mode.effect is not None]
    assignments = [a for a in assignments if a.mode.effect is None]
    if not assignments:  # the executor returns such a mode's outputs as they were: it predicts no value
        return "not-mapped", (f"{effects[0].name} has no data semantics (effect: {effects[0].effect.kind}): "
                              "the executor computes no value a golden could be compared with")
    unread: list[str] = []
    has_globals = any(isinstance(t, GlobalDesc) for a in assignments for t in example_tiles(db, a.mode).values())
    named_modes = [a for a in assignments if a.mode.name in {w.lower() for w in case.words()}]
    candidates = []
    # a mode whose every attribute the case names (``SatMode::ON``) before one that leaves them out
    ordered = sorted(named_modes or assignments,
                     key=lambda a: -len(a.mode.attrs) if attributes(db, a.mode, case, defaults=False) else 0)
    for a in ordered:
        attrs = attributes(db, a.mode, case, defaults=has_globals, given=entry.attrs if entry else None)
        if attrs is None:
            unread.append(f"{a.mode.name}: no {', '.join(x.enum for x in a.mode.attrs)} value in the case")
            continue
        given = entry_binding(db, entry, a.mode, case) if entry is not None and (entry.types or entry.type_words) \
            else None
        if isinstance(given, str):
            return "not-mapped", given
        if given is not None and set(a.mode.type_vars) <= set(given):
            candidates.append((a, attrs, {v: given[v] for v in a.mode.type_vars}))
            continue
        candidates += [(a, attrs, binding) for binding in bindings(db, op, a, profile, case)]
    # first the mapping of the example, then derived extents, then the plainest configuration: the first
    # configuration no file overflows runs;
    # else the one with the fewest overflowing files
    rejected: dict[tuple, str] = {}
    later = []
    any_legal = False
    # when several modes take the same files and the case names none (TDIVS tile/scalar or scalar/tile),
    # a disagreement of one mode leaves the others to try: the first disagreement stands unless one agrees
    ambiguous = not named_modes and len({a.mode.name for a, _, _ in candidates}) > 1
    first: tuple[str, str] | None = None
    done_modes: set[str] = set()
    for derived in ("domain", False, True, "plain"):
        for a, attrs, binding in candidates:
            if a.mode.name in done_modes:
                continue
            if derived == "domain":  # a proportional mode: sources on the case's region, outputs from files
                tiles = domain_shaped(db, op, a, profile, binding, attrs, case, target)
                configs, report = ([tiles] if tiles is not None else []), Report(op.name, a.mode.name, profile, (), ())
            else:
                globals_ = global_shapes(db, a, case, binding, target)
                given = entry.shapes_for(case.params, {o.name for o in a.mode.operands}) \
                    if entry is not None and entry.shapes else None
                if given and derived is False:  # the directory's own shapes, as its entry gives them
                    configs, report = entry_configuration(db, op, a.mode, profile, binding, attrs, given, target)
                else:
                    configs, report = configure(db, op, a.mode, profile, binding, attrs, target, globals_, derived,
                                                operand_extents(a.mode, case), named_shapes(a.mode, case),
                                                inner_extent(case))
            if report.violations and not report.ok:
                rejected.setdefault((a.mode.name, tuple(binding.items())),
                                    f"{a.mode.name}: " + "; ".join(v.one_line() for v in report.violations))
            any_legal = any_legal or bool(configs)
            for tiles in configs:
                fit = overflow(db, a, case, tiles)
                if fit:
                    later.append((fit, a, tiles))
                    continue
                result = _run(db, op, a, profile, case, tiles, script)
                if result is not None and ambiguous and result[0] in (*DISAGREEMENTS, "recorded"):
                    first = first or result
                    done_modes.add(a.mode.name)
                    break
                if result is not None:
                    return result
                unread.append(f"{a.mode.name}: the files hold no {target[0]}x{target[1]} region")
    if later and first is None:
        # every configuration leaves a file over: each operand as wide as its file at the case's rows, taken
        # only when it agrees as it stands (no exchange of sources), else the configurations below judge
        for a, attrs, binding in candidates:
            tiles = file_shaped(db, op, a, profile, binding, attrs, case, target)
            if tiles is None or a.mode.name in done_modes:
                continue
            result = _run_once(db, op, a, profile, case, tiles, script)
            if result is not None and result[0] == "agree":
                return result
    for _, a, tiles in sorted(later, key=lambda c: c[0]):
        if a.mode.name in done_modes:
            continue
        result = _run(db, op, a, profile, case, tiles, script)
        if result is not None and ambiguous and result[0] in (*DISAGREEMENTS, "recorded"):
            first = first or result
            done_modes.add(a.mode.name)
            continue
        if result is not None:
            return result
    if first is not None:
        return first
    if rejected and not any_legal:
        return "spec-rejects", next(iter(rejected.values()))
    return "not-mapped", "; ".join(dict.fromkeys(unread)) or "no binding of the op's types fits the files"


def domain_shaped(db: Database, op: OpSpec, a: Assignment, profile: str, binding: dict[str, str],
                  attrs: dict[str, str], case: Case, target: tuple[int, int]) -> dict | None:
    """For a mode whose operands keep proportions its types decide (``shapes: share``: TSORT32's
    destination holds 8 bytes per source element), the case's region is its sources' valid region and each
    output is as wide as its golden file at the case's rows; the smallest rounding of the tiles' columns the
    validator accepts. None for any other mode, or when a golden does not divide or nothing is legal."""
    example = example_tiles(db, a.mode)
    shares = [n in a.mode.shapes and a.mode.shapes[n].shares for n, t in example.items() if isinstance(t, TileDesc)]
    if not all(shares) or any(isinstance(t, GlobalDesc) for t in example.values()):
        return None
    base = with_dtypes(db, a.mode, example, binding)
    base = {n: AttrDesc(attrs[n]) if n in attrs else t for n, t in base.items()}
    tiles = _plain(db, base, target)
    for name, stem in a.outputs.items():
        t = tiles[name]
        count = len(case.files[stem]) // db.isa.dtypes[t.dtype].bytes
        if not isinstance(t, TileDesc) or count % t.valid_row:
            return None
        tiles[name] = t.with_(valid_col=count // t.valid_row)
    for k in range(8):
        shaped = {}
        for name, t in tiles.items():
            if isinstance(t, TileDesc):
                unit = max(1 << k, 32 // max(1, db.isa.dtypes[t.dtype].bytes))
                t = t.with_(rows=t.valid_row, cols=roundup(t.valid_col, unit)) if t.blayout != "ColMajor" \
                    else t.with_(rows=roundup(t.valid_row, unit), cols=t.valid_col)
            shaped[name] = t
        if validate(db, op.name, a.mode.name, profile, shaped).ok:
            return shaped
    return None


def file_shaped(db: Database, op: OpSpec, a: Assignment, profile: str, binding: dict[str, str],
                attrs: dict[str, str], case: Case, target: tuple[int, int]) -> dict | None:
    """The mode's plain configuration at ``target`` with every tile operand that has a file as wide as the
    file is at the case's row count (TDEINTERLEAVE's single source, twice its destinations' width, when
    the case's ``col`` names the destinations'); None unless every file divides and the validator accepts."""
    base = with_dtypes(db, a.mode, example_tiles(db, a.mode), binding)
    base = {n: AttrDesc(attrs[n]) if n in attrs else t for n, t in base.items()}
    tiles = _plain(db, base, target)
    files = {**a.sources, **a.outputs}
    for name, stem in files.items():
        t = tiles[name]
        if not isinstance(t, TileDesc):
            return None
        count = len(case.files[stem]) // db.isa.dtypes[t.dtype].bytes
        rows = t.valid_row
        if count % rows:
            return None
        unit = max(1, 32 // max(1, db.isa.dtypes[t.dtype].bytes))
        cols = count // rows
        tiles[name] = t.with_(rows=rows, cols=-(-cols // unit) * unit, valid_row=rows, valid_col=cols)
    return tiles if validate(db, op.name, a.mode.name, profile, tiles).ok else None


def global_shapes(db: Database, a: Assignment, case: Case, binding: dict[str, str],
                  target: tuple[int, int]) -> dict[str, list[tuple[int, int]]]:
    """For each global operand, the 2-D shapes its file (its input, else its golden) can hold: a column
    count from the target or the case's numbers, else one row."""
    out = {}
    for o in a.mode.operands:
        stem = a.sources.get(o.name) or a.outputs.get(o.name)
        if stem is None or not isinstance(example_tiles(db, a.mode)[o.name], GlobalDesc):
            continue
        count = len(case.files[stem]) // db.isa.dtypes[binding[o.dtype]].bytes
        widths = [c for c in dict.fromkeys([target[1], *case.numbers()]) if 0 < c <= count and count % c == 0]
        out[o.name] = list(dict.fromkeys([*((count // c, c) for c in widths), (1, count)]))
    return out


def operand_extents(mode: Mode, case: Case) -> dict[str, dict[int, int]]:
    """Extents the case's parameters name per operand (``src1_row``, ``src1_col``: axis 0 and 1)."""
    out: dict[str, dict[int, int]] = {}
    for o in mode.operands:
        for axis, suffixes in ((0, ("_row", "_rows")), (1, ("_col", "_cols"))):
            for key, value in case.params.items():
                if isinstance(value, int) and not isinstance(value, bool) and value > 0 and any(
                        key.lower() == o.name.lower() + s for s in suffixes):
                    out.setdefault(o.name, {})[axis] = value
    return out


VALID_SUFFIXES = (("_vr", "_valid_row", "_valid_rows"), ("_vc", "_valid_col", "_valid_cols"))
TILE_SUFFIXES = (("_tr", "_tile_row", "_tile_rows"), ("_tc", "_tile_col", "_tile_cols"))


def named_shapes(mode: Mode, case: Case) -> dict[str, dict[str, tuple[int, int]]]:
    """The valid and tile shapes the case gives single operands (operand -> {"valid": .., "tile": ..}):
    parameters ``<operand>_vr``/``_vc`` (or ``_valid_row``/``_valid_col``) give its valid shape,
    ``<operand>_tr``/``_tc`` (or ``_tile_row``/``_tile_col``) its tile shape, and so do ``<operand>_row``/
    ``_col`` when the case names a valid region apart from them (``valid_row``: TTRANS's ``src_row`` is the
    source tile's rows); a ``<operand>_RxC`` in the case's name (``src1_32x32``) is its valid shape. An
    operand named after another plus a word (``src1Idx`` after ``src1``) takes that one's shapes unless it
    has its own."""
    params = {k.lower(): v for k, v in case.params.items()
              if isinstance(v, int) and not isinstance(v, bool) and v >= 0}
    names = [o.name for o in mode.operands if o.role in ("in", "out", "tmp")]
    valid_apart = any(k.startswith("valid") for k in params) or any(
        k.endswith(sfx) for k in params for pair in VALID_SUFFIXES for sfx in pair)
    tile_suffixes = [(*TILE_SUFFIXES[0], "_row", "_rows"), (*TILE_SUFFIXES[1], "_col", "_cols")] if valid_apart \
        else list(TILE_SUFFIXES)
    stem = case.name.split(".", 1)[-1].lower()
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for name in names:
        n = name.lower()
        for kind, suffixes in (("valid", VALID_SUFFIXES), ("tile", tile_suffixes)):
            axes = [next((params[n + s] for s in sfx if n + s in params), None) for sfx in suffixes]
            if None not in axes:
                out.setdefault(name, {})[kind] = (axes[0], axes[1])
        match = re.search(rf"(?:^|_){re.escape(n)}_(\d+)x(\d+)(?:_|$)", stem)
        if match and "valid" not in out.get(name, {}):
            out.setdefault(name, {})["valid"] = (int(match[1]), int(match[2]))
    for name in names:  # companions: src1Idx after src1
        owner = max((m for m in out if name != m and name.lower().startswith(m.lower())
                     and name[len(m):].isalpha()), key=len, default=None)
        if owner is not None:
            out[name] = {**out[owner], **out.get(name, {})}
    return out


def with_named_shapes(db: Database, tiles: dict, shapes: dict[str, dict[str, tuple[int, int]]],
                      target: tuple[int, int]) -> dict | None:
    """``tiles`` with the valid and tile shapes the case names (``named_shapes``); a tile shape not named
    is as large as the case's valid region (upstream allocates a smaller source at the destination's
    shape) and holds the named valid shape, rounded up along the layout to 32 bytes. None when a named
    extent is 0 (an empty source, which a descriptor does not describe)."""
    out = dict(tiles)
    for name, given in shapes.items():
        t = tiles.get(name)
        if not isinstance(t, TileDesc):
            continue
        if 0 in (*given.get("valid", ()), *given.get("tile", ())):
            return None
        vr, vc = given.get("valid", (t.valid_row, t.valid_col))
        if "tile" in given:
            rows, cols = given["tile"]
        else:
            unit = max(1, 32 // max(1, db.isa.dtypes[t.dtype].bytes))
            rows, cols = max(t.rows, vr, target[0]), max(t.cols, vc, target[1])
            if t.blayout == "ColMajor":
                rows = rows if rows == t.rows else -(-rows // unit) * unit
            else:
                cols = cols if cols == t.cols else -(-cols // unit) * unit
        out[name] = t.with_(rows=rows, cols=cols, valid_row=vr, valid_col=vc)
    return out


def overflow(db: Database, a: Assignment, case: Case, tiles: dict) -> int:
    """How many source files hold more elements than their operand's tile: the configuration that
    leaves none over (e.g. a one-column operand against a file with a block per row) fits the case best."""
    count = 0
    for name, stem in a.sources.items():
        t = tiles[name]
        if isinstance(t, TileDesc):
            count += len(case.files[stem]) > t.rows * t.cols * db.isa.dtypes[t.dtype].bytes
    return count


def _run(db, op, a: Assignment, profile, case: Case, tiles, script: str = "") -> tuple[str, str] | None:
    """Run one configuration; on a disagreement, when two tile sources of one type take files that name
    neither (input1, input2), also try them the other way round (both files and tiles exchanged, e.g. the
    full tile as src1 of TROWEXPANDDIV): the order the kernel passes them in is not in the files."""
    result = _run_once(db, op, a, profile, case, tiles, script)
    if result is None or result[0] not in (*DISAGREEMENTS, "recorded"):
        return result
    ins = [o for o in a.mode.operands if o.role == "in" and isinstance(tiles.get(o.name), TileDesc)]
    if len(ins) != 2 or ins[0].dtype != ins[1].dtype or tiles[ins[0].name] == tiles[ins[1].name] or any(
            a.sources[o.name].lower() in (o.name.lower(), FILE_ALIASES.get(a.sources[o.name].lower())) for o in ins):
        return result
    x, y = ins[0].name, ins[1].name
    swapped = {**tiles, x: tiles[y], y: tiles[x]}
    if not validate(db, op.name, a.mode.name, profile, swapped).ok:
        return result
    other = Assignment(a.mode, a.outputs, {**a.sources, x: a.sources[y], y: a.sources[x]}, a.scalars,
                       a.scalar_params)
    again = _run_once(db, op, other, profile, case, swapped, script)
    if again is not None and again[0] == "agree":
        return "agree", f"{again[1]} ({x} and {y} exchanged)"
    return result


def _run_once(db, op, a: Assignment, profile, case: Case, tiles, script: str = "") -> tuple[str, str] | None:
    numbers = case.numbers()
    if "NZ" in case.words():  # upstream's nd_to_nz files: row-major only while one fractal (32 bytes) wide
        cols = {n: t.shape[-1] if isinstance(t, GlobalDesc) else t.valid_col
                for n, t in tiles.items() if n in a.outputs}
        wide = [n for n, c in cols.items() if c is not None and c * db.isa.dtypes[tiles[n].dtype].bytes > 32]
        if wide:
            return ("not-mapped", f"the case's files are in NZ fractal order, which this adapter reads only when "
                                  f"one fractal (32 bytes) wide; {wide[0]} has {cols[wide[0]]} columns")
    given = named_shapes(a.mode, case)
    mirrored = tuple((c, r) for r, c in case.shapes()) if any(s.transposed for s in a.mode.shapes.values()) else ()

    def shapes(name: str, output: bool) -> tuple[tuple[int, int], ...]:
        # the operand's own tile shape first; a transposing mode's outputs hold the case's shapes mirrored
        own = (given[name]["tile"],) if "tile" in given.get(name, {}) else ()
        return (*own, *(mirrored if output else ()), *case.shapes())

    data: dict[str, object] = {}
    for name, t in tiles.items():  # a global output without an input file starts as zeros, as upstream's do
        if isinstance(t, GlobalDesc) and name in a.outputs and name not in a.sources:
            data[name] = np.zeros(t.size, np.dtype(db.isa.dtypes[t.dtype].numpy))
    for name, stem in a.sources.items():
        t = tiles[name]
        values = np.frombuffer(case.files[stem], dtype=np.dtype(db.isa.dtypes[t.dtype].numpy))
        if isinstance(t, GlobalDesc):
            if values.size != t.size:
                return None
            data[name] = values.copy()
            continue
        matrix = file_matrix(values, (t.valid_row, t.valid_col), numbers, shapes(name, False))
        if matrix is None:
            return None
        arr = np.zeros((t.rows, t.cols), values.dtype)
        arr[:t.valid_row, :t.valid_col] = matrix[:t.valid_row, :t.valid_col]
        data[name] = arr
    for name, stem in a.scalars.items():
        data[name] = scalar_value(case.files[stem], np.dtype(db.isa.dtypes[tiles[name].dtype].numpy))
    for name, key in a.scalar_params.items():
        data[name] = np.array(case.params[key]).astype(np.dtype(db.isa.dtypes[tiles[name].dtype].numpy))[()]
    wants = {}
    for name, stem in a.outputs.items():
        t = tiles[name]
        values = np.frombuffer(case.files[stem], dtype=np.dtype(db.isa.dtypes[t.dtype].numpy))
        if isinstance(t, GlobalDesc):
            if values.size != t.size:
                return None
            wants[name] = values.reshape(1, -1)
            continue
        matrix = file_matrix(values, (t.valid_row, t.valid_col), numbers, shapes(name, True))
        if matrix is None:
            return None
        wants[name] = matrix[:t.valid_row, :t.valid_col]
    with np.errstate(all="ignore"):
        got = execute(db, op.name, a.mode.name, profile, tiles, data)
    for name, want in wants.items():
        t = tiles[name]
        result = got[name].reshape(1, -1) if isinstance(t, GlobalDesc) else got[name][:t.valid_row, :t.valid_col]
        outcome = judge(op, t.dtype, result, want)
        if outcome[0] != "agree":
            known = recorded_difference(db, op, a.mode, profile, tiles, script)
            if known is not None:
                return "recorded", f"{known} ({outcome[0]}: {a.mode.name} {name}: {outcome[1]})"
            return outcome[0], f"{a.mode.name} {name}: {outcome[1]}"
    return "agree", a.mode.name


def recorded_difference(db: Database, op: OpSpec, mode: Mode, profile: str, tiles: dict, script: str) -> str | None:
    """The id of the op's difference that records this disagreement: one with a claim from a source of
    kind ``test`` naming ``script``, and an ``observed`` entry of the profile (category ``wrong-value``)
    for the mode whose ``when`` holds for the case's tiles."""
    if not script:
        return None
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
            if scope is None:
                scope = make_scope(db, op, mode, profile, tiles)
            if evaluate(obs.when, scope):
                return diff.id
    return None


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


def scripts_of(db: Database, root: Path) -> list[tuple[str, str, Path]]:
    """(op, profile, script) for every gen_data.py whose directory is named after an op of the database."""
    out = []
    for profile, rel in PLATFORMS.items():
        base = root / rel
        for name in sorted(db.ops):
            script = base / name / "gen_data.py"
            if script.is_file():
                out.append((name, profile, script))
    return out


def variant_dirs(db: Database, root: Path) -> list[tuple[str, str, str]]:
    """(op, profile, directory) for every other directory with a gen_data.py whose name starts with an op's
    name (``mgather_gm2l1``, ``tload_mix``, ``tmuls_trowsum``, ...): variant and combination tests, which
    this benchmark lists but does not run (their cases are not one op on the database's tiles)."""
    out = []
    for profile, rel in PLATFORMS.items():
        base = root / rel
        if not base.is_dir():
            continue
        for d in sorted(base.iterdir()):
            if d.name in db.ops or not (d / "gen_data.py").is_file():
                continue
            owner = max((n for n in db.ops if d.name.startswith(n)), key=len, default=None)
            if owner is not None:
                out.append((owner, profile, d.name))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        usage="pip install -e '.[goldens]'  # en_dtypes, which some upstream scripts import\n"
              "       python benchmarks/upstream_goldens.py --pto-isa-root PATH [--ops OP ...] [--json OUT]")
    ap.add_argument("--pto-isa-root", required=True, type=Path)
    ap.add_argument("--specs", default=None)
    ap.add_argument("--ops", nargs="*", default=None)
    ap.add_argument("--json", type=Path, default=None, help="write every case's outcome here")
    args = ap.parse_args()
    if not (args.pto_isa_root / "tests").is_dir():
        ap.error(f"{args.pto_isa_root} has no tests/ directory (a pto-isa checkout is needed)")
    if importlib.util.find_spec("en_dtypes") is None:
        print("warning: en_dtypes is missing (pip install -e '.[goldens]'): the scripts importing it end as "
              "script-error", file=sys.stderr)
    start = time.perf_counter()
    db = load_database(args.specs) if args.specs else load_database()
    totals: Counter[str] = Counter()
    rows: list[dict] = []
    scripts = 0
    for op_name, profile, script in scripts_of(db, args.pto_isa_root):
        if args.ops and op_name not in args.ops:
            continue
        op = db.ops[op_name]
        scripts += 1
        found_cases, found, error = run_script(script)
        if error and not found_cases:
            totals["script-error"] += 1
            rows.append({"op": op_name, "profile": profile, "outcome": "script-error", "detail": error})
            continue
        params = case_params(found, [name for name, _ in found_cases])
        for (name, files), p in zip(found_cases, params, strict=True):
            case = Case(name, files, p)
            case_op = variant_op(db, op, case)
            try:
                outcome, detail = compare_case(db, case_op, profile, case,
                                               script.relative_to(args.pto_isa_root).as_posix())
            except PtospecError as exc:
                outcome, detail = "not-mapped", exc.message
            except ValueError as exc:  # a file this adapter cannot read
                outcome, detail = "not-mapped", str(exc)
            totals[outcome] += 1
            rows.append({"op": case_op.name, "profile": profile, "case": name, "outcome": outcome, "detail": detail})
    variants = [v for v in variant_dirs(db, args.pto_isa_root) if not args.ops or v[0] in args.ops]
    compared = sum(v for k, v in totals.items() if k not in ("not-mapped", "script-error"))
    print(f"{scripts} gen_data.py scripts for database ops; {compared} golden cases compared: "
          + ", ".join(f"{k} {v}" for k, v in sorted(totals.items()))
          + f" ({time.perf_counter() - start:.0f} s)")
    print(f"{len(variants)} directories named after an op plus a suffix (other instructions, variants, "
          "combinations) listed, not run: "
          + ", ".join(f"{profile}/{name}" for _, profile, name in variants))
    for row in rows:
        if row["outcome"] != "agree":
            print(f"  {row['outcome']:<12} {row['op']:<10} {row['profile']:<5} {row.get('case', '')}: {row['detail']}")
    groups = Counter((r["op"], r["profile"], r["outcome"]) for r in rows if r["outcome"] in DISAGREEMENTS)
    recorded = Counter((r["op"], r["profile"], r["detail"].split(" ", 1)[0])
                       for r in rows if r["outcome"] == "recorded")
    unmapped = Counter((r["op"], r["profile"], re.sub(r"\d+", "N", r["detail"]))
                       for r in rows if r["outcome"] == "not-mapped")
    rejected = Counter((r["op"], r["profile"], " ".join(sorted(set(re.findall(r"\[([\w.-]+)\]", r["detail"])))))
                       for r in rows if r["outcome"] == "spec-rejects")
    for title, counts in (("unclassified disagreements (neither fixed nor recorded)", groups),
                          ("recorded as differences", recorded),
                          ("spec-rejects, by the rules that reject", rejected),
                          ("not mapped, by reason", unmapped)):
        print(f"{title}: {sum(counts.values())}"
              + "".join(f"\n  {n:>4}  {' '.join(k)}" for k, n in sorted(counts.items(), key=lambda g: (-g[1], g[0]))))
    if args.json:
        args.json.write_text(json.dumps({"totals": dict(totals), "cases": rows, "scripts": scripts,
                                         "variants_not_run": [list(v) for v in variants]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
