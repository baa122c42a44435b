"""Seeded fuzzing (bounded to a few seconds): mutated spec files, expressions, descriptors, assembly
lines and executions.  Only ``PtospecError`` may escape; nothing may take long.

Every spec that survives the loader and lint must also survive the later stages: the assembly
printer and parser, the LaTeX renderer, the site's op page and the executor.
"""

from __future__ import annotations

import contextlib
import random
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from hostile import deep_expressions, mutate_data, mutate_program, mutate_text, random_expression

from ptospec.asm.forms import FORMS, parse_line, print_form
from ptospec.asm.types import parse_descriptor
from ptospec.errors import PtospecError
from ptospec.executor import execute, numpy_dtype
from ptospec.expr.evaluate import Scope, evaluate
from ptospec.expr.latex import statement_latex, to_latex
from ptospec.expr.parser import parse_expr
from ptospec.lint import check_examples
from ptospec.loader import load_isa, load_op
from ptospec.model import Database
from ptospec.tile import ScalarDesc, TileDesc
from ptospec.validator import validate

ROOT = Path(__file__).resolve().parent.parent
SLOW = 2.0  # seconds any single input may take (generous: the machine is shared)


def only_ptospec_errors(fn, *args) -> None:
    start = time.perf_counter()
    try:
        fn(*args)
    except PtospecError as exc:
        assert exc.rule, f"{exc!r} has no rule id"
    elapsed = time.perf_counter() - start
    assert elapsed < SLOW, f"{elapsed:.1f}s for {args!r:.300}"


def later_stages(db: Database, op) -> None:
    """What runs on a spec after lint: asm round trip, LaTeX, the site page, the executor."""
    from ptospec.docs.pages import op_page

    for mode in op.modes:
        tiles = {n: parse_descriptor(t, db.isa) for n, t in mode.example.tiles.items()}
        for form in FORMS:
            parse_line(db, print_form(db, op, mode, form, tiles), mode.name)
        for stmt in mode.semantics:
            statement_latex(stmt)
        data = {}
        for o in mode.operands:
            desc = tiles[o.name]
            if isinstance(desc, TileDesc) and o.role == "in":
                data[o.name] = np.ones(desc.shape, numpy_dtype(db, desc.dtype))
            elif isinstance(desc, ScalarDesc):
                data[o.name] = 1
        with contextlib.suppress(PtospecError):  # e.g. a dynamic valid shape in the example
            execute(db, op.name, mode.name, mode.example.profile, tiles, data)
    for lang in ("en", "zh"):
        op_page(db, op, lang)


@pytest.mark.parametrize("seed", range(3))
def test_mutated_op_files(db, tmp_path, seed):
    rng = random.Random(seed)
    files = sorted((ROOT / "specs" / "ops").glob("*.yaml"))
    for k in range(25):
        source = rng.choice(files)
        text = source.read_text(encoding="utf-8")
        if k % 2:
            text = yaml.safe_dump(mutate_data(yaml.safe_load(text), rng, rng.randint(1, 3)), allow_unicode=True)
        else:
            lines = text.splitlines()
            i = rng.randrange(len(lines))
            lines[i] = mutate_text(lines[i], rng)
            text = "\n".join(lines)
        path = tmp_path / source.name
        path.write_text(text, encoding="utf-8")

        def load_and_use(path=path):
            op = load_op(path, db.isa, str(path), db.kinds)
            if not check_examples(op, db.isa):
                later_stages(Database(isa=db.isa, ops={**db.ops, op.name: op}, root=db.root, kinds=db.kinds), op)

        only_ptospec_errors(load_and_use)


def test_mutated_isa(db, tmp_path):
    rng = random.Random(11)
    data = yaml.safe_load((ROOT / "specs" / "isa.yaml").read_text(encoding="utf-8"))
    op = db.ops["tcolargmax"]
    for _ in range(15):
        path = tmp_path / "isa.yaml"
        path.write_text(yaml.safe_dump(mutate_data(data, rng, rng.randint(1, 2)), allow_unicode=True),
                        encoding="utf-8")

        def load_and_use(path=path):
            isa = load_isa(path)
            mutated = load_op(ROOT / "specs" / "ops" / "tcolargmax.yaml", isa, None, db.kinds)
            if not check_examples(mutated, isa):
                later_stages(Database(isa=isa, ops={op.name: mutated}, root=db.root, kinds=db.kinds), mutated)

        only_ptospec_errors(load_and_use)


def test_hostile_expressions(db):
    rng = random.Random(5)
    texts = deep_expressions() + [random_expression(rng) for _ in range(300)]
    texts += [mutate_text(rng.choice(deep_expressions()), rng) for _ in range(100)]
    scope = Scope(isa=db.isa, tiles={"t": parse_descriptor("vec,16x16xf32", db.isa)},
                  profile_constants=db.isa.profiles["a5"].constants, values={"x": 3})

    def parse_render_evaluate(text):
        node = parse_expr(text)
        to_latex(node)
        evaluate(node, scope)

    for text in texts:
        only_ptospec_errors(parse_render_evaluate, text)


def test_hostile_descriptors_and_assembly_lines(db):
    rng = random.Random(7)
    seeds = ["vec,16x16xf32,valid=15x16", "mat, 16x32xf16, valid=?x?, blayout=col_major, slayout=row_major, "
             "fractal=512, pad=zero", "f32, 16, 16, RowMajor, NoneBox, None, Null", "f32", "LT"]
    for _ in range(300):
        only_ptospec_errors(parse_descriptor, mutate_text(rng.choice(seeds), rng, rng.randint(1, 3)), db.isa)
    ops = sorted(db.ops.values(), key=lambda o: o.name)

    def parse_and_check(line, mode, profile):
        parsed = parse_line(db, line, mode)
        validate(db, parsed.op, parsed.mode, profile, parsed.operands)

    for _ in range(300):
        op = rng.choice(ops)
        mode = rng.choice(op.modes)
        tiles = {n: parse_descriptor(t, db.isa) for n, t in mode.example.tiles.items()}
        line = mutate_text(print_form(db, op, mode, rng.choice(FORMS), tiles), rng, rng.randint(1, 3))
        only_ptospec_errors(parse_and_check, line, rng.choice([None, mode.name, "bogus", ""]),
                            rng.choice([*db.isa.profiles, "bogus"]))


def test_hostile_executions(db):
    rng = random.Random(3)
    ops = sorted(db.ops.values(), key=lambda o: o.name)
    for _ in range(60):
        op = rng.choice(ops)
        mode = rng.choice(op.modes)
        descs = {n: mutate_text(t, rng, 1) if rng.random() < 0.4 else t for n, t in mode.example.tiles.items()}

        def run(descs=descs, mode=mode, op=op):
            tiles = {n: parse_descriptor(t, db.isa) for n, t in descs.items()}
            data = {}
            for o in mode.operands:
                desc = tiles.get(o.name)
                if isinstance(desc, ScalarDesc):
                    data[o.name] = rng.choice([1, 1.5, -1, 2**70, float("nan"), "x", None])
                elif isinstance(desc, TileDesc) and o.role == "in":
                    shape = desc.shape if rng.random() < 0.8 else (desc.rows + 1, desc.cols)
                    dtype = rng.choice([np.float32, np.int32, np.uint8, np.float64, np.bool_, np.float16])
                    data[o.name] = np.ones(shape, dtype)
            execute(db, op.name, mode.name, rng.choice([*db.isa.profiles, "bogus"]), tiles, data,
                    cast=rng.random() < 0.5)

        only_ptospec_errors(run)


def test_hostile_programs(db):
    """Mutated kernels (the cross-core pair and the loop kernel of test_programs), checked and run: only
    PtospecError, quickly (loops are bounded by the step limit, refused up front when they would exceed it)."""
    from test_programs import LOOP_KERNEL

    from ptospec.program.api import check_program, run_kernels, run_program
    from ptospec.program.syntax import parse_program

    rng = random.Random(7)  # the main branch before the red-team pass failed 7 of these 150 inputs
    fifo = (ROOT / "tests" / "programs" / "fifo_roundtrip.pto").read_text(encoding="utf-8")
    buffers = {"x": np.ones(512, np.float32), "y": np.zeros(512, np.float32), "z": np.zeros(512, np.float32),
               "eye": np.eye(16, dtype=np.float32).ravel(), "tiles": 2}
    loop_args = {**{f"arg{k}": np.ones(256, np.float32) for k in range(3)}, "n": 3}
    start = time.perf_counter()
    for k in range(150):
        if time.perf_counter() - start > 6:
            break
        text = mutate_program(fifo if k % 2 else LOOP_KERNEL, rng, rng.randint(1, 3))

        def check_and_run(text=text, k=k):
            program = parse_program(text, "k.pto")
            check_program(db, program)
            if k % 2:
                try:
                    run_kernels(db, program, dict(buffers), ["cube", "vector"], 2, max_steps=200_000)
                except PtospecError as exc:  # a kernel's thread failing with anything else is wrapped so
                    assert exc.rule != "program.kernel-error", exc
                    raise
            else:
                run_program(db, program, dict(loop_args), max_steps=200_000)

        only_ptospec_errors(check_and_run)
