"""Hostile input (issue 17, Hardening): each defect found, as a regression test.

Every bad input through the public API or the CLI ends in one ``PtospecError`` with a rule id,
quickly and in bounded memory; writers stay inside their output folder.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from ptospec.asm.forms import parse_line
from ptospec.asm.types import parse_descriptor
from ptospec.cli import main
from ptospec.errors import PtospecError
from ptospec.executor import execute
from ptospec.expr.evaluate import Scope, evaluate
from ptospec.expr.latex import to_latex
from ptospec.expr.parser import parse_expr, parse_statement
from ptospec.loader import DatabaseErrors, load_isa, load_op
from ptospec.validator import validate
from ptospec.yamlsource import parse_yaml

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parent.parent
ISA = ROOT / "specs" / "isa.yaml"


def rules_of(exc: PtospecError) -> set[str]:
    errors = exc.errors if isinstance(exc, DatabaseErrors) else [exc]
    return {e.rule for e in errors}


def isa_with(tmp_path: Path, old: str, new: str) -> Path:
    text = ISA.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "isa.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def op_with(tmp_path: Path, op: str, old: str, new: str, append: str = "") -> Path:
    text = (ROOT / "specs" / "ops" / f"{op}.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{op}.yaml"
    path.write_text(text.replace(old, new, 1) + append, encoding="utf-8")
    return path


def load_fails(db, path: Path) -> set[str]:
    with pytest.raises(PtospecError) as info:
        load_op(path, db.isa, str(path), db.kinds)
    return rules_of(info.value)


# --------------------------------------------------------------------------- names that become paths
@pytest.mark.parametrize("name", ["../../../../tmp/x", "a/b", "cpu\n", "x" * 65, "Elementwise", "é"])
def test_family_and_profile_names_are_identifiers(tmp_path, name):
    for old in ("  elementwise-tile-tile:\n", "  a5:\n"):
        path = isa_with(tmp_path, old, f"  {name!r}:\n".replace("'", '"'))
        with pytest.raises(DatabaseErrors) as info:
            load_isa(path)
        assert "schema.pattern" in rules_of(info.value) or "schema.maxLength" in rules_of(info.value)


@pytest.mark.parametrize("old, new", [
    ("op: tadd", "op: ../tadd"),
    ("op: tadd", "op: \"tadd\\n\""),
    ("kind: binary-elementwise", "kind: ../binary-elementwise"),
    ("kind: binary-elementwise", "kind: binary-elementwise\nfamily: ../../../../tmp/x"),
])
def test_op_family_and_kind_names_are_identifiers(db, tmp_path, old, new):
    assert load_fails(db, op_with(tmp_path, "tadd", old, new))


def test_mode_names_are_identifiers(db, tmp_path):
    assert load_fails(db, op_with(tmp_path, "tcvt", "\n  round:", "\n  ../round:"))


# --------------------------------------------------------------------------- YAML limits
def test_billion_laughs_is_refused_quickly(db, tmp_path):
    laughs = "\nlol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 11))
    path = op_with(tmp_path, "tadd", "op: tadd", "op: tadd", append=laughs)
    start = time.perf_counter()
    assert "yaml.too-large" in load_fails(db, path)
    assert time.perf_counter() - start < 2


@pytest.mark.parametrize("text, rule", [
    ("a: &a [*a]", "yaml.recursive"),
    ("[" * 200 + "]" * 200, "yaml.too-deep"),
    ("a: 1\n" + "b: " + "x" * (1 << 20) + "\n", "yaml.too-large"),
    ("1: one", "yaml.key"),
    ("? [a, b]\n: c", "yaml.syntax"),
    ("null: x", "yaml.key"),
])
def test_hostile_yaml(text, rule):
    with pytest.raises(PtospecError) as info:
        parse_yaml(text, "x.yaml")
    assert info.value.rule == rule


def test_anchors_within_limits_still_work():
    src = parse_yaml("a: &x [1, 2]\nb: *x\n", "x.yaml")
    assert src.data == {"a": [1, 2], "b": [1, 2]}


# --------------------------------------------------------------------------- isa.yaml fields
@pytest.mark.parametrize("old, new", [
    ('asm: "#pto.cmp<{}>"', 'asm: "#pto.cmp<{}>{}"'),
    ('asm: "#pto.cmp<{}>"', 'asm: "#pto.cmp<{0}{x}>"'),
    ("numpy: float32}", "numpy: float64}"),
    ("numpy: float32}", "numpy: object}"),
    ("numpy: float32}", "numpy: no_such_type}"),
    ("numpy: int8}", "numpy: bool}"),
    ('pad: "Null"}', "pad: Nothing}"),
    ("fractal: 512,", "fractal: 0,"),
    ("block_bytes: 32, repeat_bytes: 256, load_pad_whole_tile: 0, random_interleaved: 0, fillpad_whole_tile: 0, "
     "fillpad_block_tail: 1,",
     "block_bytes: 32, repeat_bytes: " + "9" * 401 + ", load_pad_whole_tile: 0, random_interleaved: 0, "
     "fillpad_whole_tile: 0, fillpad_block_tail: 1,"),
    ('check: "t.rows > 0 and t.cols > 0"', 'check: "t.rows > 0 and t.bogus > 0"'),
    ('check: "t.rows > 0 and t.cols > 0"', 'check: "u.rows > 0"'),
    ("cpp: half,", "cpp: 'half; system(\"x\")',"),
])
def test_isa_fields_are_validated(tmp_path, old, new):
    with pytest.raises(PtospecError):
        load_isa(isa_with(tmp_path, old, new))


@pytest.mark.parametrize("tolerance", [".inf", ".nan", "-1", "1" + "0" * 400, "2"])
def test_tolerances_are_finite_and_bounded(db, tmp_path, tolerance):
    path = op_with(tmp_path, "tdiv", "f32: {rtol: 2.4e-07,", f"f32: {{rtol: {tolerance},")
    assert load_fails(db, path)


# --------------------------------------------------------------------------- kinds
@pytest.mark.parametrize("value", ["[{id: []}, {id: x}]", "3", "{en: [1]}", "null"])
def test_kind_params_of_the_wrong_type(db, tmp_path, value):
    """A param's value is text (or text per language): a list once crashed the site renderer after lint."""
    path = op_with(tmp_path, "trowexpandmin", "title_en: Row-broadcast minimum", f"title_en: {value}")
    assert load_fails(db, path)


def test_params_of_the_wrong_type(db, tmp_path):
    path = op_with(tmp_path, "trowexpandmin", "params:\n  fn:", "params: [1, 2]\nx_params:\n  fn:")
    assert load_fails(db, path)


def test_rules_with_unhashable_ids_are_schema_errors(db, tmp_path):
    path = op_with(tmp_path, "tadd", "\nrules:\n", "\nrules:\n  - {id: [x], sources: []}\n")
    assert load_fails(db, path)


# --------------------------------------------------------------------------- expressions
@pytest.mark.parametrize("text", [
    "(" * 500 + "1" + ")" * 500,
    "-" * 1500 + "1",
    "+".join(["1"] * 900),
    " and ".join(["t.rows > 0"] * 150),
    "sum(i < " * 300 + "1" + ": i)" * 300,
    "9" * 1999,
    "1e999",
    "x" * 2001,
    "1 + ١",
])
def test_expressions_beyond_the_limits_do_not_parse(text):
    with pytest.raises(PtospecError):
        parse_expr(text)


@pytest.mark.parametrize("text", [
    "ceil_div(t.rows, 0)", "1 // 0", "1 % 0", "t.rows / 0", "10 ** 100000", "2 ** 2 ** 2 ** 2 ** 2 ** 2",
    "2.0 ** 100000", "(0 - 8.0) ** 0.5", "18446744073709551615 * 18446744073709551615 * 4", "t + 1", "-t",
    "-t.dtype", "max(t, 1)", "compare(1, 2, 3)", "select(1, 2)", "bytes(1)", "abs(t.loc)",
    "0 ** (0 - 1)",
])
def test_evaluation_errors_are_expr_errors(db, text):
    scope = Scope(isa=db.isa, tiles={"t": parse_descriptor("vec,16x16xf32", db.isa)})
    node = parse_expr(text)
    to_latex(node)
    with pytest.raises(PtospecError):
        evaluate(node, scope)


def test_executor_limits_the_index_grid(db, tiles):
    """A statement whose ranges multiply to terabytes is refused before anything is allocated."""
    from ptospec.statements import execute_statement

    t = tiles(src="vec,16x16xf32", dst="vec,16x16xf32")
    stmt = parse_statement("dst[i, j] = sum(k < 1000000000000: src[0, 0]) for i < 16, j < 16")
    scope = Scope(isa=db.isa, tiles=t)
    data = {"src": np.zeros((16, 16), np.float32)}
    with pytest.raises(PtospecError) as info:
        execute_statement(stmt, scope, data, {"dst": np.zeros((16, 16), np.float32)})
    assert info.value.rule == "exec.range"


# --------------------------------------------------------------------------- descriptors and assembly
@pytest.mark.parametrize("text", [
    "vec,١٦x16xf32", "vec,16x16xf32\x00", "vec,16x16xf32,\x00", "vec,16x16xf32,blayout=col_major,row_major",
    "vec,16x16xf32,valid=" + "9" * 5000 + "x1", "vec,16x16xf32,valid=16x16\nfoo", "vec,99999999x16xf32",
    "f32,16,16,RowMajor,NoneBox,512,Null,extra", "vec,16x16xf32,fractal=１", "vec,16x16xf32,valid=１x1",
    "ｖec,16x16xf32",
])
def test_malformed_descriptors_are_rejected(db, text):
    with pytest.raises(PtospecError) as info:
        parse_descriptor(text, db.isa)
    assert info.value.rule and info.value.rule.startswith("tile.")


def test_a_tile_larger_than_every_buffer_is_illegal(db, tiles):
    t = tiles(src0="vec,1048576x1048576xf32", src1="vec,1048576x1048576xf32", dst="vec,1048576x1048576xf32")
    for profile in db.isa.profiles:
        report = validate(db, "tadd", None, profile, t)
        assert not report.ok and report.rule_ids == {"tile.capacity"}


def test_capacities_follow_the_profile(db, tiles):
    """192 KiB of UB on a2a3, 256 KiB on a5 (include/pto/common/buffer_limits.hpp)."""
    t = tiles(src0="vec,256x256xf32", src1="vec,1x8xf32", dst="vec,1x8xf32")  # 256 KiB
    assert "tile.capacity" in validate(db, "tadd", None, "a2a3", t).rule_ids
    assert "tile.capacity" not in validate(db, "tadd", None, "a5", t).rule_ids
    big = tiles(src0="vec,1024x1024xu8", src1="vec,1024x1024xu8", dst="vec,1024x1024xu8")  # 1 MiB
    assert "tile.capacity" in validate(db, "tadd", None, "cpu", big).rule_ids  # fits no buffer anywhere


def test_a_long_assembly_line_parses_in_linear_time(db):
    for line in ("%d = tadd " + "%a, " * 15000 + " : x", "pto.tadd ins(" + ")" * 60000 + " outs(",
                 "%" + "=" * 60000, "pto.tadd ins(" + "outs(" * 12000):
        start = time.perf_counter()
        with pytest.raises(PtospecError):
            parse_line(db, line)
        assert time.perf_counter() - start < 1
    with pytest.raises(PtospecError) as info:
        parse_line(db, "%d = tadd %a : " + "x" * 100000)
    assert info.value.rule == "asm.too-long"


def test_unknown_mode_in_an_assembly_line(db):
    line = ("pto.tadd ins(%a, %b : !pto.tile_buf<vec, 16x16xf32>, !pto.tile_buf<vec, 16x16xf32>) "
            "outs(%c : !pto.tile_buf<vec, 16x16xf32>)")
    with pytest.raises(PtospecError) as info:
        parse_line(db, line, "bogus")
    assert info.value.rule == "invocation.mode"


def test_check_asm_with_a_bogus_mode_is_one_line(capsys):
    line = ("pto.tadd ins(%a, %b : !pto.tile_buf<vec, 16x16xf32>, !pto.tile_buf<vec, 16x16xf32>) "
            "outs(%c : !pto.tile_buf<vec, 16x16xf32>)")
    code = main(["--specs", str(ROOT / "specs"), "check", "-p", "a5", "--mode", "bogus", "--asm", line])
    assert code == 2 and "[invocation.mode]" in capsys.readouterr().err


# --------------------------------------------------------------------------- run: data in and out
@pytest.fixture(autouse=True)
def loaded_once(db, monkeypatch):
    """The CLI commands use the session's database instead of loading it again for every call."""
    from ptospec.commands import check, export, run

    for module in (check, export, run):
        monkeypatch.setattr(module, "database", lambda _args: db)


def run_cli(capsys, *args) -> tuple[int, str]:
    code = main(["--specs", str(ROOT / "specs"), "run", *args])
    out = capsys.readouterr()
    return code, out.out + out.err


TADD = ["tadd", "-p", "a5"]


def test_run_refuses_a_dtype_mismatch_unless_cast(tmp_path, capsys):
    for dtype in (np.float64, np.uint64, np.bool_, np.int32):
        np.save(tmp_path / "a.npy", np.ones((16, 16), dtype))
        code, out = run_cli(capsys, *TADD, "-i", f"src0={tmp_path / 'a.npy'}", "-i", f"src1={tmp_path / 'a.npy'}",
                            "-t", "src0=vec,16x16xf32", "-t", "src1=vec,16x16xf32", "-t", "dst=vec,16x16xf32",
                            "-o", str(tmp_path / "o.npz"))
        assert code == 2 and "[run.dtype]" in out and "--cast" in out
    code, out = run_cli(capsys, *TADD, "-i", f"src0={tmp_path / 'a.npy'}", "-i", f"src1={tmp_path / 'a.npy'}",
                        "-t", "src0=vec,16x16xf32", "-t", "src1=vec,16x16xf32", "-t", "dst=vec,16x16xf32",
                        "--cast", "-o", str(tmp_path / "o.npz"))
    assert code == 0
    assert np.load(tmp_path / "o.npz")["dst"][0, 0] == 2


def test_run_refuses_structured_arrays(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.zeros((16, 16), dtype=[("a", "<f2"), ("b", "<f2")]))
    code, out = run_cli(capsys, *TADD, "-i", f"src0={tmp_path / 's.npy'}", "-i", f"src1={tmp_path / 's.npy'}",
                        "-t", "src0=vec,16x16xf32", "-t", "src1=vec,16x16xf32", "-t", "dst=vec,16x16xf32")
    assert code == 2 and "[run.dtype]" in out


def test_run_refuses_unknown_input_names(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.ones((16, 16), np.float32))
    code, out = run_cli(capsys, *TADD, "-i", f"src0={tmp_path / 'a.npy'}", "-i", f"src1={tmp_path / 'a.npy'}",
                        "-i", f"srcl={tmp_path / 'a.npy'}", "-t", "dst=vec,16x16xf32", "-o", str(tmp_path / "o.npz"))
    assert code == 2 and "srcl" in out


@pytest.mark.parametrize("scalar, dtype", [("1.5", "i32"), ("-1", "u64"), ("١٦", "i32"), ("70000", "i16"),
                                           ("1e300", "f16"), ("0x10", "i32"), ("9" * 5000, "i64")])
def test_run_refuses_scalars_the_type_cannot_hold(tmp_path, capsys, scalar, dtype):
    np.save(tmp_path / "a.npy", np.ones((16, 16), np.dtype({"i32": "i4", "u64": "u8", "i16": "i2", "f16": "f2",
                                                            "i64": "i8"}[dtype])))
    code, out = run_cli(capsys, "tadds", "-p", "cpu", "-i", f"src0={tmp_path / 'a.npy'}", "-s", f"scalar={scalar}",
                        "-t", f"scalar={dtype}", "-o", str(tmp_path / "o.npz"))
    assert code == 2 and "Traceback" not in out, out


@pytest.mark.parametrize("content", [b"", b"garbage", b"PK\x03\x04garbage", b"\x93NUMPY\x01\x00"])
def test_run_unreadable_inputs(tmp_path, capsys, content):
    for suffix, flag in ((".npy", "-i"), (".npz", "--inputs")):
        path = tmp_path / f"x{suffix}"
        path.write_bytes(content)
        arg = f"src0={path}" if flag == "-i" else str(path)
        code, out = run_cli(capsys, *TADD, flag, arg)
        assert code == 2 and "[run.input]" in out


def test_run_never_unpickles(tmp_path, capsys):
    np.savez(tmp_path / "p.npz", src0=np.array([object()], dtype=object))
    code, out = run_cli(capsys, *TADD, "--inputs", str(tmp_path / "p.npz"))
    assert code == 2 and "[run.input]" in out and "pickle" in out


def test_run_output_errors_and_exact_path(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.ones((16, 16), np.float32))
    inputs = ["-i", f"src0={tmp_path / 'a.npy'}", "-i", f"src1={tmp_path / 'a.npy'}", "-t", "dst=vec,16x16xf32"]
    code, out = run_cli(capsys, *TADD, *inputs, "-o", "/nonexistent/x.npz")
    assert code == 2 and "[run.output]" in out
    code, out = run_cli(capsys, *TADD, *inputs, "-o", str(tmp_path / "result"))
    assert code == 0 and (tmp_path / "result").is_file() and not (tmp_path / "result.npz").exists()
    if Path("/dev/full").exists():
        code, out = run_cli(capsys, *TADD, *inputs, "-o", "/dev/full")
        assert code == 2 and "[run.output]" in out


def test_run_huge_tile_with_a_small_valid_region_is_refused_fast(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.ones((1, 8), np.float32))
    start = time.perf_counter()
    code, out = run_cli(capsys, *TADD, "-t", "src0=vec,65536x65536xf32,valid=1x8", "-t",
                        "src1=vec,65536x65536xf32,valid=1x8", "-t", "dst=vec,65536x65536xf32,valid=1x8",
                        "-i", f"src0={tmp_path / 'a.npy'}", "-i", f"src1={tmp_path / 'a.npy'}")
    assert code == 2 and "tile.capacity" in out
    assert time.perf_counter() - start < 5


def test_execute_refuses_what_run_refuses(db, tiles):
    t = tiles(src0="vec,16x16xi32", scalar="i32", dst="vec,16x16xi32")
    src = np.ones((16, 16), np.int32)
    with pytest.raises(PtospecError):
        execute(db, "tadds", None, "cpu", t, {"src0": src, "scalar": 1.5})
    with pytest.raises(PtospecError):
        execute(db, "tadds", None, "cpu", t, {"src0": src, "scalar": 2, "bogus": src})
    with pytest.raises(PtospecError):
        execute(db, "tadds", None, "cpu", t, {"src0": src.astype(np.int64), "scalar": 2})
    out = execute(db, "tadds", None, "cpu", t, {"src0": src.astype(np.int64), "scalar": 2}, cast=True)
    assert (out["dst"] == 3).all()


# --------------------------------------------------------------------------- the pytest plugin's options
@pytest.mark.parametrize("option, fragment", [
    ("--pto-backend=bogus", "--pto-backend"),
    ("--pto-profile=bogus", "unknown profile 'bogus'"),
    ("--pto-report=/nonexistent/dir/x.json", "--pto-report"),
])
def test_bad_plugin_options_stop_before_collection(pytester, option, fragment):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", option, f"--pto-specs={ROOT / 'specs'}")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, output
    assert fragment in output and "Traceback" not in output and "passed" not in output


# --------------------------------------------------------------------------- writers
def test_writers_refuse_paths_outside_their_folder(tmp_path):
    from ptospec.outputs import target, write_atomic

    for rel in ("../x", "a/../../x", "/tmp/x", ""):
        with pytest.raises(PtospecError):
            write_atomic(tmp_path / "out", rel, "x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "out").mkdir()
    os.symlink(outside, tmp_path / "out" / "link")
    with pytest.raises(PtospecError):
        target(tmp_path / "out", "link/x.md")
    assert not any(outside.iterdir())


def test_docs_writer_does_not_follow_a_dangling_symlink(tmp_path):
    from ptospec.docs.build import write
    from ptospec.docs.markdown import GENERATED

    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere.md", site / "docs" / "index.md")
    with pytest.raises(PtospecError):
        write({"docs/index.md": f"<!-- {GENERATED} -->\n"}, site)
    assert not (tmp_path / "elsewhere.md").exists()


def test_docs_check_sees_a_truncated_page(db, tmp_path):
    from ptospec.docs.build import mkdocs_config, stale, write
    from ptospec.docs.pages import op_page, op_path

    files = {f"docs/{op_path('en', 'tadd')}": op_page(db, db.ops["tadd"], "en"),
             "en/mkdocs.yml": mkdocs_config(db, "en")}
    write(files, tmp_path)
    rel = next(r for r in files if r.endswith("tadd.md"))
    (tmp_path / rel).write_text(files[rel][: len(files[rel]) // 2], encoding="utf-8")
    assert stale(files, tmp_path) == [rel]


@pytest.fixture
def small_suite(db, monkeypatch):
    """``sync`` over a one-op database with a fast stand-in renderer."""
    from ptospec.conformance import sync as sync_module
    from ptospec.conformance.generate import FINGERPRINT, HEADER
    from ptospec.model import Database

    one = Database(isa=db.isa, ops={"tadd": db.ops["tadd"]}, root=db.root, kinds=db.kinds)
    body = "".join(f"CASE_{i} = {i}\n" for i in range(200))
    monkeypatch.setattr(sync_module, "unit_search", lambda d, op, mode, profile: ([], [], []))
    monkeypatch.setattr(sync_module, "property_bindings", lambda d, op, mode, profile: [])
    monkeypatch.setattr(sync_module, "render_module",
                        lambda d, op, cases=None, bindings=None, ids=None:
                        f"{HEADER}\n{FINGERPRINT}{sync_module.fingerprint(d, op)}\n{body}")
    return one, sync_module


def test_gen_tests_check_sees_a_truncated_module_and_gen_tests_repairs_it(small_suite, tmp_path):
    one, sync_module = small_suite
    assert sync_module.sync(one, tmp_path, check=False).written == ["conftest.py", "test_tadd.py"]
    path = tmp_path / "test_tadd.py"
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole[: len(whole) // 2], encoding="utf-8")  # header and fingerprint intact
    result = sync_module.sync(one, tmp_path, check=True)
    assert result.out_of_date and "test_tadd.py" in result.stale
    assert sync_module.sync(one, tmp_path, check=False).written == ["test_tadd.py"]
    assert path.read_text(encoding="utf-8") == whole
    assert not sync_module.sync(one, tmp_path, check=True).out_of_date


def test_gen_tests_keeps_a_hand_edited_module_unless_forced(small_suite, tmp_path):
    one, sync_module = small_suite
    sync_module.sync(one, tmp_path, check=False)
    path = tmp_path / "test_tadd.py"
    whole = path.read_text(encoding="utf-8")
    edited = whole.replace("CASE_7 = 7", "CASE_7 = 8")
    path.write_text(edited, encoding="utf-8")
    assert sync_module.sync(one, tmp_path, check=True).modified == ["test_tadd.py"]
    result = sync_module.sync(one, tmp_path, check=False)
    assert result.modified == ["test_tadd.py"] and not result.written
    assert path.read_text(encoding="utf-8") == edited
    result = sync_module.sync(one, tmp_path, check=False, force=True)
    assert result.written == ["test_tadd.py"] and path.read_text(encoding="utf-8") == whole


def test_gen_tests_keeps_an_edited_module_of_a_removed_op(small_suite, tmp_path):
    one, sync_module = small_suite
    sync_module.sync(one, tmp_path, check=False)
    shutil.copy(tmp_path / "test_tadd.py", tmp_path / "test_gone.py")
    edited = tmp_path / "test_gone2.py"
    edited.write_text((tmp_path / "test_tadd.py").read_text(encoding="utf-8").replace("CASE_3", "MINE"))
    result = sync_module.sync(one, tmp_path, check=False)
    assert result.removed == ["test_gone.py"] and result.modified == ["test_gone2.py"] and edited.exists()


def test_gen_tests_leaves_symlinks_alone(small_suite, tmp_path):
    one, sync_module = small_suite
    out = tmp_path / "suite"
    out.mkdir()
    os.symlink(tmp_path / "elsewhere.py", out / "test_tadd.py")
    result = sync_module.sync(one, out, check=False)
    assert result.foreign == ["test_tadd.py"] and not (tmp_path / "elsewhere.py").exists()


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    from ptospec import outputs

    outputs.write_atomic(tmp_path, "f.txt", "old\n")

    def boom(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", boom)
    with pytest.raises(PtospecError) as info:
        outputs.write_atomic(tmp_path, "f.txt", "new\n" * 1000)
    assert info.value.rule == "output.write"
    assert (tmp_path / "f.txt").read_text() == "old\n" and os.listdir(tmp_path) == ["f.txt"]


# --------------------------------------------------------------------------- found while writing hostile input
def test_duplicate_attribute_is_an_error(db):
    line = ("pto.tcmp ins(%a, %b {cmpMode = #pto.cmp<LT>, cmpMode = #pto.cmp<GT>} : !pto.tile_buf<vec, 16x16xf16>, "
            "!pto.tile_buf<vec, 16x16xf16>) outs(%m : !pto.tile_buf<vec, 16x8xu32, valid=16x1>)")
    with pytest.raises(PtospecError) as info:
        parse_line(db, line)
    assert info.value.rule == "asm.attr"


@pytest.mark.parametrize("output", ["/nonexistent/x.json", "/dev/full"])
def test_export_output_errors_are_one_line(capsys, output):
    if output == "/dev/full" and not Path(output).exists():
        pytest.skip("no /dev/full here")
    code = main(["--specs", str(ROOT / "specs"), "export", "--json", "-o", output])
    err = capsys.readouterr().err
    assert code == 2 and "[export.output]" in err and "Traceback" not in err


def test_counts_are_bounded(db, tmp_path):
    """A file with thousands of modes would make lint (and every later stage) crawl."""
    modes = "".join(f"  m{i}: {{}}\n" for i in range(17))
    assert load_fails(db, op_with(tmp_path, "tcvt", "\nmodes:\n", f"\nmodes:\n{modes}"))


def test_placeholders_are_found_in_linear_time():
    from ptospec.kinds import PLACEHOLDER

    start = time.perf_counter()
    PLACEHOLDER.sub("", "{{a(" * 20000)
    assert time.perf_counter() - start < 0.5


def test_cpp_literals_are_ascii():
    from ptospec.model import CPP_LITERAL

    assert CPP_LITERAL.fullmatch("16") and CPP_LITERAL.fullmatch("-1.5f") and not CPP_LITERAL.fullmatch("١٦")


def test_lint_of_a_device_is_a_problem_not_a_hang(capsys):
    code = main(["--specs", str(ROOT / "specs"), "lint", "/dev/zero"])
    assert code == 1 and "[lint.path]" in capsys.readouterr().err


def test_validate_with_hand_built_hostile_tiles(db):
    from ptospec.tile import TileDesc

    huge = TileDesc("Vec", "f32", 2**70, 2**70, 2**70, 2**70)
    report = validate(db, "tadd", None, "a5", {"src0": huge, "src1": huge, "dst": huge})
    assert not report.ok
    with pytest.raises(PtospecError):
        validate(db, "tadd", None, "a5", {"src0": "vec,16x16xf32", "src1": huge, "dst": huge})
    with pytest.raises(PtospecError):
        validate(db, None, None, "a5", {})
