"""Red-team regressions (program layer, input files, plugin options, the Python API): each hostile input ends in one
``PtospecError`` with a rule id, quickly and without allocating what the input merely declares."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ptospec.cli import main
from ptospec.errors import PtospecError
from ptospec.program.api import check_program, run_program
from ptospec.program.syntax import parse_program

pytest_plugins = ["pytester"]
HEAD = """module {
  func.func @k(%a: !pto.ptr<f32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
"""
TAIL = """    return
  }
}
"""


def _run(db, body: str, check: bool = False, max_steps: int | None = None):
    program = parse_program(HEAD + body + TAIL, "k.pto")
    if check:
        return check_program(db, program, "a5")
    return run_program(db, program, {"a": np.ones(64, np.float32), "n": 4}, "a5", max_steps=max_steps)


def _rule(db, body: str, **kw) -> str:
    start = time.perf_counter()
    with pytest.raises(PtospecError) as info:
        _run(db, body, **kw)
    assert time.perf_counter() - start < 2.0
    assert info.value.rule, info.value
    return info.value.rule


@pytest.mark.parametrize("low, high", [("0", "1000000000000"), ("-9223372036854775808", "9223372036854775807")])
def test_a_loop_with_a_huge_trip_count_and_an_empty_body_is_refused_before_it_starts(db, low, high):
    body = f"""    %lo = arith.constant {low} : index
    %hi = arith.constant {high} : index
    scf.for %i = %lo to %hi step %c1 {{
    }}
"""
    assert _rule(db, body) == "program.step-limit"


@pytest.mark.parametrize("inner_bound", ["%big", "%b2"])  # invariant in the outer loop, or the body's constant
def test_nested_loops_beyond_the_step_limit_are_refused_before_they_start(db, inner_bound):
    body = f"""    %big = arith.constant 10000 : index
    scf.for %i = %c0 to %big step %c1 {{
      %b2 = arith.constant 10000 : index
      scf.for %j = %c0 to {inner_bound} step %c1 {{
        %x = arith.addi %i, %j : index
      }}
    }}
"""
    with pytest.raises(PtospecError, match="at least 20003 statement") as info:
        _run(db, body)
    assert info.value.rule == "program.step-limit" and info.value.where.endswith("k.pto:6:5")


def test_a_loop_whose_inner_bound_varies_is_not_refused_early(db):
    body = """    %c3 = arith.constant 3 : index
    scf.for %i = %c0 to %c3 step %c1 {
      scf.for %j = %c0 to %i step %c1 {
        %x = arith.addi %i, %j : index
      }
    }
"""
    assert _run(db, body, max_steps=17).stats.statements == 17  # exactly what it needs


def test_an_empty_while_loop_counts_its_iterations(db):
    body = """    %t = arith.constant true
    %r = scf.while (%x = %c0) : (index) -> index {
      scf.condition(%t) %x : index
    } do {
    ^bb0(%y: index):
      scf.yield %y : index
    }
"""
    assert _rule(db, body, max_steps=10_000) == "program.step-limit"


@pytest.mark.parametrize("body, rule", [
    ("    %t = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>\n"
     "    scf.for %i = %c0 to %t step %c1 {\n    }\n", "program.type"),  # a tile as a loop bound
    ("    %x = arith.addi %a, %a : index\n", "program.arith"),  # a pointer as an arith operand
    ("    %t = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>\n    %x = arith.muli %c1, %t : index\n", "program.arith"),
    ("    %f = arith.constant 1.5 : f32\n    %x = arith.extsi %f : i32 to i64\n", "program.arith"),
    ("    %f = arith.constant 0.25 : f32\n"  # a float as a view's extent
     "    %v = pto.make_tensor_view %a, shape = [%f, %c1], strides = [%c1, %c1] : !pto.tensor_view<?x?xf32>\n",
     "program.type"),
    ("    %x = arith.constant 1" + "0" * 5000 + " : index\n", "program.syntax"),  # beyond int()'s digit limit
    ("    %t = pto.alloc_tile : !pto.tile_buf<vec, 1048576x1048576xf32>\n", "tile.capacity"),  # 4 TiB, not allocated
])
def test_hostile_values_in_programs_are_rule_violations(db, body, rule):
    assert _rule(db, body) == rule


def test_check_program_reports_what_run_program_refuses(db):
    result = _run(db, "    %t = pto.alloc_tile : !pto.tile_buf<vec, 1048576x1048576xf32>\n", check=True)
    assert [f.rule for f in result.violations] == ["tile.capacity"]


@pytest.mark.parametrize("text, value", [("064", 64), ("0x10", 16), ("-7", -7)])
def test_integer_literals_with_leading_zeros_and_hex(db, text, value):
    result = run_program(db, parse_program(HEAD + f"    %x = arith.constant {text} : index\n"
                                           "    %y = arith.addi %x, %c0 : index\n" + TAIL, "k.pto"),
                         {"a": np.ones(4, np.float32), "n": 1}, "a5")
    assert result.stats.statements == 5


def test_frontend_pipe_attributes_are_integers(db):
    body = """    pto.aiv_initialize_pipe {dir_mask = 1, slot_size = 1024}
    pto.tfree_from_aic {split = 1e308}
"""
    assert _rule(db, body, check=False) == "program.syntax"


def _npy(path, header: bytes, version: bytes = b"\x01\x00") -> None:
    size = len(header).to_bytes(2 if version == b"\x01\x00" else 4, "little")
    path.write_bytes(b"\x93NUMPY" + version + size + header + b"\0" * 1024)


@pytest.mark.parametrize("header", [
    b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000000), }\n",  # 40 ZB promised
    b"{'descr': [('a', '<f4', (100000000,))], 'fortran_order': False, 'shape': (16, 16), }\n",  # a huge record
    b"{'descr': '<f4', 'fortran_order': False, 'shape': (64, 64), }\n",  # 1 KiB of data for 16 KiB
])
def test_run_refuses_an_npy_header_promising_more_than_its_file(tmp_path, capsys, header):
    _npy(tmp_path / "x.npy", header)
    np.save(tmp_path / "ok.npy", np.ones((16, 16), np.float32))
    assert main(["run", "tadd", "--profile", "cpu", "--input", f"src0={tmp_path / 'x.npy'}",
                 "--input", f"src1={tmp_path / 'ok.npy'}", "-o", str(tmp_path / "o.npz")]) == 2
    err = capsys.readouterr().err
    assert "[run.input]" in err and "header declares" in err and len(err.strip().splitlines()) == 1


def test_run_refuses_an_npz_member_promising_more_than_it_holds(tmp_path, capsys):
    import zipfile

    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }\n"
    with zipfile.ZipFile(tmp_path / "x.npz", "w") as archive:
        archive.writestr("src0.npy", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
    assert main(["run", "tadd", "--profile", "cpu", "--inputs", str(tmp_path / "x.npz"),
                 "-o", str(tmp_path / "o.npz")]) == 2
    assert "member src0.npy: its header declares" in capsys.readouterr().err


def test_an_oversized_npy_header_is_named_as_such(tmp_path, capsys):
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (16, 16), " + b" " * 20000 + b"}\n"
    _npy(tmp_path / "x.npy", header, b"\x02\x00")
    assert main(["run", "tadd", "--profile", "cpu", "--input", f"src0={tmp_path / 'x.npy'}",
                 "-o", str(tmp_path / "o.npz")]) == 2
    err = capsys.readouterr().err
    assert "header is too large" in err and "pickle" not in err


# --------------------------------------------------------------------------- the pytest plugin's options
@pytest.mark.parametrize("option, fragment", [
    ("--pto-backend=os:system", "is not a subclass of ptospec.conformance.backend.Backend"),  # not a class
    ("--pto-backend=ptospec.errors:PtospecError", "is not a subclass"),  # a class, not a backend
    ("--pto-specs=/nonexistent", "[specs.root]"),  # checked before collection, not at the first case's setup
])
def test_more_bad_plugin_options_stop_before_collection(pytester, option, fragment):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", option)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, output
    assert fragment in output and "Traceback" not in output and "passed" not in output


def test_a_report_that_cannot_be_written_is_one_line(pytester):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    module = root / "generated_tests" / "test_tcolmax.py"
    pytester.makepyfile(test_x=module.read_text(encoding="utf-8"))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", "0", "--pto-report=/dev/full",
                                          f"--pto-specs={root / 'specs'}", "-k", "test_positive and cpu")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, output
    assert "--pto-report /dev/full: not a regular file" in output and "Traceback" not in output


# --------------------------------------------------------------------------- the Python API
def test_validate_refuses_operand_names_that_are_not_strings(db):
    from ptospec.tile import TileDesc
    from ptospec.validator import validate

    tile = TileDesc("Vec", "f32", 16, 16, 16, 16)
    for name in (None, 1):
        with pytest.raises(PtospecError) as info:
            validate(db, "tadd", None, "a5", {name: tile, "dst": tile, "src1": tile})
        assert info.value.rule == "invocation.operand"


@pytest.mark.parametrize("field, value", [("rows", 16.5), ("rows", True), ("valid_row", "16"), ("dtype", ["f32"]),
                                          ("fractal", None)])
def test_validate_and_execute_refuse_hand_built_tiles_with_fields_of_the_wrong_type(db, field, value):
    from dataclasses import replace

    from ptospec.executor import execute
    from ptospec.tile import TileDesc
    from ptospec.validator import validate

    tile = TileDesc("Vec", "f32", 16, 16, 16, 16)
    tiles = {"dst": replace(tile, **{field: value}), "src0": tile, "src1": tile}
    data = {"src0": np.ones((16, 16), np.float32), "src1": np.ones((16, 16), np.float32)}
    for call in (lambda: validate(db, "tadd", None, "a5", tiles), lambda: execute(db, "tadd", None, "a5", tiles, data)):
        with pytest.raises(PtospecError) as info:
            call()
        assert info.value.rule == "invocation.operand" and field in info.value.message


def test_validate_refuses_global_views_with_fields_of_the_wrong_type(db):
    from ptospec.tile import GlobalDesc, TileDesc
    from ptospec.validator import validate

    tile = TileDesc("Vec", "f32", 16, 16, 16, 16)
    for view in (GlobalDesc("f32", [16, 16], (16, 1)), GlobalDesc("f32", (16.0, 16), (16, 1)),
                 GlobalDesc("f32", (16, 16), (16, 1), offset=1.5)):
        with pytest.raises(PtospecError) as info:
            validate(db, "tload", None, "a5", {"dst": tile, "src": view})
        assert info.value.rule == "invocation.operand"


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_program_that_is_not_a_regular_file_is_refused_without_reading_it(tmp_path, capsys, kind):
    import os

    path = tmp_path / "k.pto"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait for a writer forever
    elif kind == "directory":
        path.mkdir()
    else:
        path = "/dev/zero"
    assert main(["check-program", str(path)]) == 2
    assert "[program.read] not a regular file" in capsys.readouterr().err


def test_an_internal_error_is_one_line_with_exit_status_3(monkeypatch, capsys):
    import ptospec.commands.listing as listing

    def broken(args):
        raise ZeroDivisionError("a defect")

    monkeypatch.setattr(listing, "run", broken)
    monkeypatch.delenv("PTOSPEC_TRACEBACK", raising=False)
    assert main(["list"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("ptospec: internal error: ZeroDivisionError: a defect") and len(err.splitlines()) == 1
    monkeypatch.setenv("PTOSPEC_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        main(["list"])


def test_lint_of_a_directory_without_spec_files_is_a_problem(tmp_path, capsys):
    assert main(["lint", str(tmp_path)]) == 1
    assert "[lint.path] no .yaml file in this directory" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["-1", "65536"])
def test_docs_serve_refuses_a_bad_port_before_building(capsys, port):
    start = time.perf_counter()
    assert main(["docs", "serve", "--port", port]) == 2
    assert time.perf_counter() - start < 1.0  # not after a whole site build
    assert "[cli.args] --port must be 0 .. 65535" in capsys.readouterr().err


def test_a_value_defined_twice_is_refused(db):
    with pytest.raises(PtospecError) as info:
        _run(db, "    %c0 = arith.constant 5 : index\n")
    assert info.value.rule == "program.redefined" and info.value.where.endswith("k.pto:5:5")
    # sibling regions may reuse a name, as in the assembler's parser
    _run(db, """    %t = arith.constant true
    scf.if %t {
      %x = arith.constant 1 : index
    } else {
      %x = arith.constant 2 : index
    }
""")


def test_an_scf_if_condition_must_be_an_i1_value(db):
    body = "    %t = pto.alloc_tile : !pto.tile_buf<vec, 16x16xf32>\n    scf.if %t {\n    }\n"
    assert _rule(db, body) == "program.type"
    assert [f.rule for f in _run(db, body, check=True).violations] == ["program.type"]


def test_check_program_counts_call_arguments(db):
    program = parse_program("""module {
  func.func @k(%n: index) {
    func.call @g() : () -> ()
    return
  }
  func.func private @g(%n: index, %m: index) {
    return
  }
}
""", "k.pto")
    found = check_program(db, program, "a5").violations
    assert [(f.rule, str(f.pos)) for f in found] == [("program.call", "k.pto:3:5")]


def test_mutual_recursion_names_the_problem_of_choosing_an_entry(db):
    program = parse_program("""module {
  func.func @k(%n: index) {
    func.call @g(%n) : (index) -> ()
    return
  }
  func.func @g(%n: index) {
    func.call @k(%n) : (index) -> ()
    return
  }
}
""", "k.pto")
    with pytest.raises(PtospecError, match="every function is called by another"):
        run_program(db, program, {"n": 1}, "a5")
    with pytest.raises(PtospecError) as info:
        run_program(db, program, {"n": 1}, "a5", func="k")
    assert info.value.rule == "program.call-depth"


def test_list_refuses_an_empty_family(capsys):
    assert main(["list", "--family", ""]) == 2
    assert "[cli.family] unknown family ''" in capsys.readouterr().err


def test_a_kernel_on_the_wrong_side_of_a_pipe_is_a_rule_violation(db):
    from pathlib import Path

    from ptospec.program.api import run_kernels

    text = (Path(__file__).parent / "programs" / "fifo_roundtrip.pto").read_text(encoding="utf-8")
    text = text.replace("%back = pto.tpop_from_aic {split = 1} -> !vhalf",  # the vector kernel pops the V2C pipe
                        "%back = pto.tpop_from_aiv {split = 1} -> !mat")
    args = {"x": np.ones(2 * 256, np.float32), "y": np.zeros(2 * 256, np.float32), "z": np.zeros(2 * 256, np.float32),
            "eye": np.eye(16, dtype=np.float32).ravel(), "tiles": 2}
    with pytest.raises(PtospecError) as info:
        run_kernels(db, parse_program(text, "f.pto"), args, ["cube", "vector"], 2)
    assert info.value.rule == "program.pipe-side", info.value  # sub-block 1 raised IndexError in its thread


@pytest.mark.parametrize("option, rule", [(["--jobs", "0"], "[cli.jobs]"), (["--jobs", "9999999"], "[cli.jobs]"),
                                          (["--backend", "bogus"], "[conformance.backend]")])
def test_conformance_refuses_bad_options_before_the_run(tmp_path, capsys, option, rule):
    assert main(["conformance", "--ops", "tadd", "--report-dir", str(tmp_path), *option]) == 2
    assert rule in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing started


@pytest.mark.parametrize("view", ["gm,16x16xf32,size=1048576000", "gm,16x16xf32,offset=1000000000"])
def test_execute_refuses_to_make_a_global_buffer_larger_than_it_reads(db, view):
    from ptospec.asm.types import parse_descriptor
    from ptospec.executor import execute

    tiles = {"dst": parse_descriptor(view, db.isa), "src": parse_descriptor("vec,16x16xf32", db.isa)}
    with pytest.raises(PtospecError) as info:  # a 4 GB buffer of zeros, from a number in a descriptor
        execute(db, "tstore", "default", "cpu", tiles, {"src": np.ones((16, 16), np.float32)})
    assert info.value.rule == "run.too-large"
    with pytest.raises(PtospecError) as info:  # the view's elements given: placed into the same buffer
        execute(db, "tstore", "default", "cpu", tiles, {"src": np.ones((16, 16), np.float32),
                                                        "dst": np.zeros((16, 16), np.float32)})
    assert info.value.rule == "run.too-large"


@pytest.mark.parametrize("value", [2**64, 10**400, -10**400, 10**5000], ids=["2^64", "1e400", "-1e400", "1e5000"])
@pytest.mark.parametrize("dtype", ["f16", "i32"])
def test_a_scalar_beyond_the_type_is_out_of_range(db, value, dtype):
    from ptospec.executor import scalar_value

    with pytest.raises(PtospecError) as info:  # was a TypeError (np.isinf of a Python int) or an OverflowError
        scalar_value(db, "scalar", dtype, value)
    assert info.value.rule == "run.scalar" and len(info.value.message) < 200


@pytest.mark.parametrize("value", [np.ones((2, 2)), np.array("x")])
def test_a_register_field_in_an_npz_is_one_number(tmp_path, capsys, value):
    np.savez(tmp_path / "in.npz", **{"fmatrix.fmap_h": value})
    assert main(["run", "timg2col", "--profile", "a5", "--inputs", str(tmp_path / "in.npz"),
                 "-o", str(tmp_path / "o.npz")]) == 2
    assert "[run.state] fmatrix.fmap_h must hold one number" in capsys.readouterr().err  # was a ValueError


def test_an_empty_specs_option_is_refused(capsys):
    assert main(["--specs", "", "list"]) == 2
    assert "[cli.specs]" in capsys.readouterr().err


def test_a_well_typed_twin_judged_before_does_not_let_a_float_extent_through(db):
    """rows=16.0 equals rows=16 (and hashes alike): the remembered report of the int tile must not answer for it."""
    from dataclasses import replace

    from ptospec.tile import TileDesc
    from ptospec.validator import validate

    tile = TileDesc("Vec", "f32", 16, 16, 16, 16)
    assert validate(db, "tabs", None, "cpu", {"src": tile, "dst": tile}).ok
    with pytest.raises(PtospecError) as info:
        validate(db, "tabs", None, "cpu", {"src": tile, "dst": replace(tile, rows=16.0)})
    assert info.value.rule == "invocation.operand" and "rows" in info.value.message


def test_run_program_max_steps_bounds_a_loop_that_never_ends(tmp_path, capsys):
    """A while loop whose body does work never ends: --max-steps stops it at the given count (and is checked)."""
    path = tmp_path / "spin.pto"
    path.write_text("""module {
  func.func @spin(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.while (%i = %c0) : (i32) -> i32 {
      %t = arith.cmpi sge, %i, %c0 : i32
      scf.condition(%t) %i : i32
    } do {
    ^bb0(%j: i32):
      %k = arith.addi %j, %c1 : i32
      scf.yield %k : i32
    }
    func.return
  }
}
""")
    start = time.perf_counter()
    assert main(["run-program", str(path), "--arg", "n=1", "--max-steps", "2000", "-o", str(tmp_path / "o.npz")]) == 2
    assert time.perf_counter() - start < 5
    assert "program.step-limit" in capsys.readouterr().err and not (tmp_path / "o.npz").exists()
    assert main(["run-program", str(path), "--arg", "n=1", "--max-steps", "0"]) == 2
    assert "--max-steps must be 1 or more" in capsys.readouterr().err
