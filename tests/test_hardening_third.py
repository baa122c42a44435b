"""Third hardening pass (issue 29): nothing outside our files is touched, no foreign code is run, every bad
input ends in one line.  One regression test (or a few) per defect, numbered as in the issue."""

from __future__ import annotations

import os
import pickle
import stat
import sys
from pathlib import Path

import pytest

from ptospec import dbcache
from ptospec.backends.cpusim import cppgen
from ptospec.backends.cpusim.build import Builder, Stats
from ptospec.backends.cpusim.toolchain import Checkout, Compiler, ToolchainError
from ptospec.model import Database

DATA = Path(__file__).resolve().parent / "data" / "cpusim"


def _another_user(monkeypatch) -> None:
    """Files this process made now look like another user's (the tests run as one user, often root)."""
    monkeypatch.setattr(os, "getuid", lambda: os.stat(".").st_uid + 4242)


# ------------------------------------------------------------------ 2. the database cache


def test_2_the_database_cache_never_writes_into_a_directory_it_does_not_own(tmp_path, db, monkeypatch):
    cache = tmp_path / "shared"
    cache.mkdir(mode=0o700)
    _another_user(monkeypatch)
    assert isinstance(dbcache.load_database_cached(db.root, cache), Database)
    assert list(cache.iterdir()) == []  # nothing read from, nothing written into another user's directory


def test_2_the_database_cache_refuses_a_directory_others_may_write(tmp_path, db):
    cache = tmp_path / "open"
    cache.mkdir()
    cache.chmod(0o777)
    assert isinstance(dbcache.load_database_cached(db.root, cache), Database)
    assert list(cache.iterdir()) == []


def test_2_planted_links_in_the_database_cache_are_never_followed(tmp_path, db):
    cache = tmp_path / "cache"
    dbcache.load_database_cached(db.root, cache)
    (path,) = cache.glob("*.pickle")
    path.unlink()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    for name in (path.name, f"{path.name}.{os.getpid()}.tmp", f"{path.name}.tmp"):  # every name an attacker can guess
        (cache / name).unlink(missing_ok=True)
        (cache / name).symlink_to(victim)
    assert isinstance(dbcache.load_database_cached(db.root, cache), Database)
    assert victim.read_text() == "precious"
    assert not path.is_symlink() and isinstance(pickle.loads(path.read_bytes()), Database)


def test_16_the_database_cache_expands_a_tilde(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(dbcache.ENV_DIR, "~/x")
    assert dbcache.default_dir() == tmp_path / "x"


# ------------------------------------------------------------------ 3. the cpusim build cache


def _builder(tmp_path: Path, cache: Path | None = None) -> Builder:
    script = tmp_path / "fake-clang++"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {DATA / 'fake_clang.py'} \"$@\"\n")
    script.chmod(0o755)
    compiler = Compiler(str(script), 19, "clang version 19.1.7 (fake)")
    return Builder(compiler, Checkout(tmp_path / "checkout", "f" * 64), cache or tmp_path / "cache", Stats())


def _unit(db, tiles):
    from ptospec.conformance.backend import Invocation
    from ptospec.conformance.data import make_inputs

    parsed = tiles(dst="vec, 1x8xf32", src="vec, 4x8xf32")
    spec = db.op("tcolmin")
    data = make_inputs(db, spec, spec.mode("default"), parsed, seed=7, pattern="random")
    plan = cppgen.plan_variant(db, Invocation("tcolmin", "default", "cpu", parsed, data))
    return ["v0"], lambda names: cppgen.render_unit([plan], names)


def test_3_a_driver_others_could_have_written_is_rebuilt_not_run(tmp_path, db, tiles, monkeypatch):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_CLANG_LOG", str(log))
    names, render = _unit(db, tiles)
    built = _builder(tmp_path).build(names, render)
    assert built.binary is not None and not built.cached
    built.binary.write_text("#!/bin/sh\necho planted\n")
    built.binary.chmod(0o777)  # anyone may have replaced it
    log.write_text("")
    again = _builder(tmp_path).build(names, render)
    assert not again.cached and "full" in log.read_text()  # built afresh
    assert not again.binary.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert "planted" not in again.binary.read_text(errors="replace")


def test_3_an_entry_of_another_user_is_never_run(tmp_path, db, tiles, monkeypatch):
    monkeypatch.setenv("FAKE_CLANG_LOG", str(tmp_path / "calls.log"))
    names, render = _unit(db, tiles)
    first = _builder(tmp_path)
    first.build(names, render)
    _another_user(monkeypatch)  # the whole cache is now another user's
    with pytest.raises(ToolchainError) as info:
        _builder(tmp_path)
    assert info.value.rule == "cpusim.cache" and "another user" in str(info.value)


def test_3_a_cache_directory_others_may_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(ToolchainError) as info:
        _builder(tmp_path, shared)
    assert info.value.rule == "cpusim.cache" and "written by other users" in str(info.value)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    with pytest.raises(ToolchainError, match="symbolic link"):
        _builder(tmp_path, link)


# ------------------------------------------------------------------ 1. docs build replaces only what it built


def _fake_mkdocs(monkeypatch, fail: bool = False) -> None:
    """mkdocs stands in: each language gets one page (the swap logic is what is tested, not mkdocs)."""
    from ptospec.docs import build as docs_build

    def build_into(site, out, site_url, date):
        if fail:
            raise docs_build.DocsError("mkdocs build --strict failed: boom", rule="docs.mkdocs")
        for lang in ("en", "zh"):
            (out / lang).mkdir()
            (out / lang / "index.html").write_text(f"new {lang}")
        (out / "index.html").write_text("root")
        (out / docs_build.MANIFEST).write_text(f"# {docs_build.GENERATED}\nen/index.html\nzh/index.html\nindex.html\n")

    monkeypatch.setattr(docs_build, "_build_into", build_into)
    monkeypatch.setattr(docs_build.importlib.util, "find_spec", lambda name: object())


def test_1_docs_build_never_deletes_what_it_did_not_build(tmp_path, monkeypatch):
    from ptospec.docs.build import DocsError, build_html

    _fake_mkdocs(monkeypatch)
    site = tmp_path / "site"
    (site / "build" / "en").mkdir(parents=True)
    (site / "build" / "en" / "mine.txt").write_text("mine")  # no manifest: not ours
    with pytest.raises(DocsError, match="remove it once") as info:
        build_html(site)
    assert info.value.rule == "docs.foreign-file"
    assert (site / "build" / "en" / "mine.txt").read_text() == "mine"
    (site / "build" / "en" / "mine.txt").unlink()
    (site / "build" / "en").rmdir()
    build_html(site)
    assert (site / "build" / "en" / "index.html").read_text() == "new en"
    (site / "build" / "zh" / "notes.txt").write_text("mine")  # added after a build: not in its manifest
    with pytest.raises(DocsError, match=r"notes\.txt was not built by ptospec"):
        build_html(site)
    assert (site / "build" / "zh" / "notes.txt").read_text() == "mine"
    (site / "build" / "zh" / "notes.txt").unlink()
    (site / "build" / "en" / "index.html").write_text("old")
    build_html(site)  # everything listed: replaced
    assert (site / "build" / "en" / "index.html").read_text() == "new en"
    assert [p.name for p in site.iterdir() if p.name.startswith(".ptospec-staging")] == []


def test_1_docs_build_follows_no_link(tmp_path, monkeypatch):
    from ptospec.docs.build import build_html
    from ptospec.errors import PtospecError

    _fake_mkdocs(monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "en").mkdir(parents=True)
    (elsewhere / "en" / "keep.html").write_text("keep")
    site = tmp_path / "site"
    site.mkdir()
    (site / "build").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(PtospecError, match="symbolic link"):
        build_html(site)
    (site / "build").unlink()
    (site / "build").mkdir()
    (site / "build" / "en").symlink_to(elsewhere / "en", target_is_directory=True)
    (site / "build" / ".ptospec-build").write_text("# generated by ptospec — do not edit\nen/keep.html\n")
    with pytest.raises(PtospecError, match="en was not built by ptospec"):
        build_html(site)
    linked = tmp_path / "linked-site"
    linked.symlink_to(site, target_is_directory=True)
    with pytest.raises(PtospecError, match="symbolic link"):
        build_html(linked)
    assert (elsewhere / "en" / "keep.html").read_text() == "keep"


def test_1_a_failed_docs_build_keeps_the_old_site_and_leaves_nothing_behind(tmp_path, monkeypatch):
    from ptospec.docs.build import DocsError, build_html

    _fake_mkdocs(monkeypatch)
    site = tmp_path / "site"
    build_html(site)
    (site / ".ptospec-staging-killed").mkdir()  # a build a kill cut short
    _fake_mkdocs(monkeypatch, fail=True)
    with pytest.raises(DocsError, match="boom"):
        build_html(site)
    assert (site / "build" / "en" / "index.html").read_text() == "new en"
    assert [p.name for p in site.iterdir() if p.name.startswith(".ptospec-staging")] == []


def test_1_generated_files_are_never_written_into_a_linked_output_root(tmp_path, db):
    from ptospec.conformance.sync import sync
    from ptospec.errors import PtospecError

    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "generated_tests"
    link.symlink_to(real, target_is_directory=True)
    with pytest.raises(PtospecError, match="symbolic link"):
        sync(db, link, check=False)
    assert list(real.iterdir()) == []


def test_14_a_killed_writer_leaves_no_temporary_file_for_long(tmp_path):
    from ptospec.outputs import remove_temporaries, write_atomic

    write_atomic(tmp_path, "docs/a.md", "x")
    (tmp_path / "docs" / ".a.md.ab12cd_9.tmp").write_text("half")  # a kill between write and rename
    (tmp_path / "docs" / ".notes.md.ab12cd_9.tmp").write_text("not of a file of ours")
    assert remove_temporaries(tmp_path, ["docs/a.md"]) == ["docs/.a.md.ab12cd_9.tmp"]
    assert (tmp_path / "docs" / ".notes.md.ab12cd_9.tmp").exists()


# ------------------------------------------------------------------ 4, 8. gen-tests


def test_4_text_after_the_seal_line_is_an_edit(tmp_path):
    from ptospec.conformance.sync import seal, unseal

    sealed = seal("print(1)\n")
    assert unseal(sealed) == ("print(1)\n", True)
    assert unseal(sealed + "my_extra = 1\n")[1] is False
    assert unseal("print(1)\n")[1] is None  # no seal line at all: cut short


def test_4_gen_tests_keeps_a_module_with_text_after_its_seal(tmp_path, db, capsys):
    import shutil

    from ptospec.cli import main

    out = tmp_path / "gt"
    shutil.copytree(Path(db.root).parent / "generated_tests", out)
    module = out / "test_tadd.py"
    edited = module.read_text() + "def test_mine():\n    pass\n"
    module.write_text(edited)
    specs = ["--specs", str(db.root)]
    assert main([*specs, "gen-tests", "--check", "--out", str(out)]) == 1
    assert f"modified: {module}" in capsys.readouterr().out
    assert main([*specs, "gen-tests", "--out", str(out)]) == 1
    assert "kept it" in capsys.readouterr().out and module.read_text() == edited


def test_8_gen_tests_refuses_a_second_writer_and_a_non_directory(tmp_path, db, capsys):
    import fcntl

    from ptospec.cli import main

    specs = ["--specs", str(db.root)]
    out = tmp_path / "gt"
    out.mkdir()
    with open(out / ".ptospec-gen-tests.lock", "w") as held:  # another process's lock (another open file)
        fcntl.flock(held, fcntl.LOCK_EX)
        assert main([*specs, "gen-tests", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "[output.busy] another 'ptospec gen-tests'" in err and err.count("\n") == 1
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for flags in ([], ["--check"]):
        assert main([*specs, "gen-tests", *flags, "--out", str(fifo)]) == 2
        assert "not a directory" in capsys.readouterr().err


# ------------------------------------------------------------------ 5, 14. one atomic writer for every output


def test_5_every_argument_name_is_kept_in_the_npz(tmp_path):
    import numpy as np

    from ptospec.outputs import write_npz

    arrays = {"file": np.arange(3), "allow_pickle": np.ones(2, np.float32), "a.b": np.zeros((2, 2))}
    write_npz(tmp_path / "o", arrays)
    with np.load(tmp_path / "o") as loaded:  # exactly that path, no .npz appended
        assert sorted(loaded.files) == sorted(arrays)
        assert all(np.array_equal(loaded[k], v) for k, v in arrays.items())


def test_14_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    from ptospec.errors import PtospecError
    from ptospec.outputs import replace_file

    path = tmp_path / "out.json"
    path.write_text("old")
    real_write = os.fdopen

    class Full:
        def __init__(self, fd, mode):
            self.fh = real_write(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            self.fh.write(data[:3])
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", Full)
    with pytest.raises(PtospecError, match="No space left"):
        replace_file(path, "new and longer")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_14_export_writes_through_the_atomic_writer(tmp_path, db, capsys):
    from ptospec.cli import main

    target = tmp_path / "real.json"
    target.write_text("old")
    (tmp_path / "link.json").symlink_to(target)
    assert main(["--specs", str(db.root), "export", "--json", "-o", str(tmp_path / "link.json")]) == 0
    assert (tmp_path / "link.json").is_symlink() and target.read_text().startswith("{")
    assert main(["--specs", str(db.root), "export", "--json", "-o", str(tmp_path)]) == 2
    assert "[export.output]" in capsys.readouterr().err


# ------------------------------------------------------------------ 6. spec files: limits before reading


@pytest.mark.parametrize("plant", ["fifo", "zero", "loop", "sparse"])
def test_6_hostile_spec_files_are_one_line_and_quick(tmp_path, db, capsys, plant):
    import shutil
    import time

    from ptospec.cli import main

    specs = tmp_path / "specs"
    shutil.copytree(db.root, specs)
    bad = specs / "ops" / "zz.yaml"
    if plant == "fifo":
        os.mkfifo(bad)
    elif plant == "zero":
        bad.symlink_to("/dev/zero")
    elif plant == "loop":
        bad.symlink_to(bad.name)
    else:
        with open(bad, "wb") as fh:
            fh.truncate(5 << 30)
    start = time.perf_counter()
    assert main(["--specs", str(specs), "lint"]) == 1
    err = capsys.readouterr().err
    assert "zz.yaml: [yaml." in err and "internal error" not in err
    assert time.perf_counter() - start < 60


def test_6_lint_of_a_folder_does_not_walk_the_tree_below(tmp_path, capsys):
    from ptospec.cli import main

    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "x.yaml").write_text("name: x\n")
    assert main(["lint", str(tmp_path)]) == 1
    assert "[lint.path] no .yaml file in this directory" in capsys.readouterr().err


# ------------------------------------------------------------------ 7. a wall-clock budget for runs


def test_7_a_never_ending_while_stops_at_the_time_limit(db):
    import time

    import numpy as np

    from ptospec.errors import PtospecError
    from ptospec.program.api import run_program
    from ptospec.program.syntax import parse_program

    text = """module {
  func.func @k(%a: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.while (%x = %c0) : (index) -> index {
      %t = arith.cmpi sge, %x, %c0 : index
      scf.condition(%t) %x : index
    } do {
    ^bb0(%y: index):
      %z = arith.addi %y, %c1 : index
      scf.yield %z : index
    }
    return
  }
}
"""
    start = time.perf_counter()
    with pytest.raises(PtospecError) as info:
        run_program(db, parse_program(text, "w.pto"), {"a": np.ones(4, np.float32)}, "a5", max_seconds=0.5)
    assert info.value.rule == "program.time-limit" and time.perf_counter() - start < 10


def test_7_max_seconds_is_parsed_strictly(capsys):
    from ptospec.cli import main

    for bad in ("1_000", "inf", "0", "-3"):
        with pytest.raises(SystemExit):
            main(["run-program", "k.pto", "--max-seconds", bad])
        assert "--max-seconds" in capsys.readouterr().err


# ------------------------------------------------------------------ 10. array headers checked before allocation


def _npy(header: str) -> bytes:
    import struct

    raw = header.encode("latin1")
    raw += b" " * (64 - (10 + len(raw) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw)) + raw + b"\0" * 16


@pytest.mark.parametrize("header", [
    "{'descr': '<f4', 'fortran_order': False, 'shape': (10**30,), }",  # an expression
    "{'descr': '<f4', 'fortran_order': False, 'shape': (4,",  # cut
    "{'descr': '<f4', 'fortran_order': False, 'shape': (True, 4), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }",
])
def test_10_hostile_array_headers_are_one_line(tmp_path, header):
    import zipfile

    from ptospec.commands._arrays import load_arrays as _load
    from ptospec.errors import PtospecError

    (tmp_path / "a.npy").write_bytes(_npy(header))
    with zipfile.ZipFile(tmp_path / "a.npz", "w") as archive:
        archive.writestr("arg0", _npy(header))  # a member without the .npy suffix is an array to np.load too
    for name in ("a.npy", "a.npz"):
        with pytest.raises(PtospecError) as info:
            _load(str(tmp_path / name), "--input", 1 << 26)
        assert info.value.rule == "run.input"


# ------------------------------------------------------------------ 11. names that are not UTF-8


def test_11_a_file_name_that_is_not_utf8_prints_under_a_strict_utf8_stream(tmp_path, monkeypatch):
    import io

    from ptospec.cli import main

    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["lint", os.fsdecode(os.fsencode(tmp_path) + b"/spec\xff.yaml")]) == 1
    err.flush()
    assert b"spec\\udcff.yaml: [lint.path]" in err.buffer.getvalue()


# ------------------------------------------------------------------ 15. maximumf / minimumf and signed zeros


def test_15_maximumf_orders_negative_zero_below_positive_zero():
    import math

    from ptospec.program.arith import FLOAT_BINARY

    for a, b in ((-0.0, 0.0), (0.0, -0.0)):
        assert math.copysign(1, FLOAT_BINARY["maximumf"](a, b)) == 1
        assert math.copysign(1, FLOAT_BINARY["minimumf"](a, b)) == -1
    assert math.isnan(FLOAT_BINARY["maximumf"](math.nan, 1.0)) and FLOAT_BINARY["maxnumf"](math.nan, 1.0) == 1.0
    assert FLOAT_BINARY["maximumf"](-1.0, 2.0) == 2.0 and FLOAT_BINARY["minimumf"](-1.0, 2.0) == -1.0


# ------------------------------------------------------------------ 9. NumPy integers in hand-built descriptors


def test_9_numpy_extents_are_plain_ints_before_products_and_memo_keys(db):
    import numpy as np

    from ptospec.tile import TileDesc
    from ptospec.validator import validate

    huge = TileDesc("Vec", "f32", np.int64(2**58), np.int64(64), np.int64(2**58), np.int64(64))
    report = validate(db, "tadd", None, "a5", {"src0": huge, "src1": huge, "dst": huge})
    assert not report.ok and "tile.capacity" in {v.rule for v in report.violations}
    small = TileDesc("Vec", "f32", np.int32(16), 16, 16, 16)
    plain = TileDesc("Vec", "f32", 16, 16, 16, 16)
    assert validate(db, "tadd", None, "a5", {"src0": small, "src1": small, "dst": small}).ok
    assert validate(db, "tadd", None, "a5", {"src0": plain, "src1": plain, "dst": plain}).ok


# ------------------------------------------------------------------ 16. small ones


@pytest.mark.parametrize("port", ["1_000", "\u0661\u0660\u0660\u0660", "+80", "8e3"])
def test_16_docs_serve_reads_the_port_as_digits(capsys, port):
    from ptospec.cli import main

    assert main(["docs", "serve", "--port", port]) == 2
    assert "[cli.args] --port must be 0 .. 65535" in capsys.readouterr().err


def test_16_lint_predicts_the_worked_example_of_the_site(db, monkeypatch):
    from ptospec import lint
    from ptospec.docs import worked
    from ptospec.errors import PtospecError

    def none(db, op, mode=None):
        raise PtospecError(f"{op.name}: no small legal case for a worked example", rule="docs.worked-example")

    monkeypatch.setattr(worked, "compute", none)
    problems = lint.check_worked_example(db.ops["tadd"], db.isa)
    assert [p.rule for p in problems] == ["docs.worked-example"]


# ------------------------------------------------------------------ 12. calls in rule checks


def _check_scope(db):
    from ptospec.asm.types import parse_descriptor
    from ptospec.expr.evaluate import Scope

    return Scope(db.isa, tiles={"src": parse_descriptor("vec,16x16xf32", db.isa)}, type_vars={"T": "f16"})


@pytest.mark.parametrize("text, value", [("cast(300, u8)", 44), ("cast(1, T)", 1.0),
                                         ("convert(1.5, u8, CAST_RINT, 1)", 2), ("inside(src, 1, 1)", True),
                                         ("fmod(7, 3)", 1)])
def test_12_calls_in_checks_read_database_dtypes(db, text, value):
    from ptospec.expr.evaluate import evaluate
    from ptospec.expr.parser import parse_expr

    assert evaluate(parse_expr(text), _check_scope(db)) == value


@pytest.mark.parametrize("text", ["cast(1, LT)", "bitcast(1, RowMajor)", "convert(1.5, Vec, CAST_RINT, 1)",
                                  "cast(1, 3)", "inside(3, 1, 1)", "fmod(src, 2)", "abs(src)",
                                  "philox(100000000, 1, 2, 3, 4, 5, 6, 7, 0)", "philox(-1, 1, 2, 3, 4, 5, 6, 7, 0)"])
def test_12_bad_call_arguments_in_checks_are_one_error(db, text):
    import time

    from ptospec.errors import ExprError
    from ptospec.expr.evaluate import evaluate
    from ptospec.expr.parser import parse_expr

    start = time.perf_counter()
    with pytest.raises(ExprError) as info:
        evaluate(parse_expr(text), _check_scope(db))
    assert info.value.rule == "expr.type" and time.perf_counter() - start < 5


@pytest.mark.parametrize("check", ["cast(src0.valid_row, LT) > 0", "inside(3, 0, 0)", "fmod(src0, 2) == 0",
                                   "philox(1000000, 1, 2, 3, 4, 5, 6, 7, 0) >= 0", "bitcast(1, Vec) == 1"])
def test_12_lint_rejects_bad_call_arguments_in_a_rule(tmp_path, db, capsys, check):
    import shutil

    from ptospec.cli import main

    specs = tmp_path / "specs"
    shutil.copytree(db.root, specs)
    op = specs / "ops" / "tadd.yaml"
    text = op.read_text(encoding="utf-8")
    assert "\nrules:\n" in text
    rule = (f"  - id: zz.hostile\n    check: {check!r}\n    message: {{en: hostile, zh: 恶意}}\n"
            "    sources: [page]\n")
    op.write_text(text.replace("\nrules:\n", "\nrules:\n" + rule, 1), encoding="utf-8")
    assert main(["--specs", str(specs), "lint", str(op)]) == 1
    err = capsys.readouterr().err
    assert "[expr.type]" in err and "internal error" not in err


def test_12_lint_bounds_philox_rounds_in_semantics(tmp_path, db, capsys):
    import shutil

    from ptospec.cli import main

    specs = tmp_path / "specs"
    shutil.copytree(db.root, specs)
    op = specs / "ops" / "trandom.yaml"
    text = op.read_text(encoding="utf-8")
    assert "philox(10, " in text
    op.write_text(text.replace("philox(10, ", "philox(100000000, "), encoding="utf-8")
    assert main(["--specs", str(specs), "lint", str(op)]) == 1
    err = capsys.readouterr().err
    assert "[expr.type]" in err and "philox()" in err and "internal error" not in err
