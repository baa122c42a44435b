"""The command line, as a user drives it: exit codes, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from ptospec.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(capsys, *args):
    code = main(["--specs", str(ROOT / "specs"), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_lint_list_show(capsys):
    code, out, _ = run(capsys, "lint")
    assert code == 0 and "ok" in out
    code, out, _ = run(capsys, "list")
    assert code == 0 and "tcolargmax" in out and "reduce-and-expand" in out
    code, out, _ = run(capsys, "show", "tcolargmax")
    assert code == 0 and "value_index" in out and "tmp.size" in out and "argmax(i < R" in out
    code, out, _ = run(capsys, "show", "trowmax", "--lang", "zh")
    assert code == 0 and "按行取最大值" in out


def test_check_legal_and_illegal(capsys):
    code, out, _ = run(capsys, "check", "tcolmin", "-p", "a2a3", "-t", "src=vec,16x16xf32", "-t", "dst=vec,1x16xf32")
    assert code == 0 and out.startswith("legal")
    code, out, _ = run(capsys, "check", "tcolmin", "-p", "a2a3", "-t", "src=vec,16x32xu8", "-t", "dst=vec,1x32xu8")
    assert code == 1 and "[dtype.t]" in out
    line = ("pto.tcolargmax ins(%s, %t : !pto.tile_buf<vec, 16x256xf32, valid=16x255>, !pto.tile_buf<vec, 1x8xf32>)"
            " outs(%d : !pto.tile_buf<vec, 1x256xu32, valid=1x255>)")
    code, out, _ = run(capsys, "check", "-p", "a2a3", "--asm", line)
    assert code == 1 and "[tmp.size]" in out
    code, out, _ = run(capsys, "check", "-p", "a5", "--asm", line)
    assert code == 0


@pytest.mark.parametrize("args, fragment", [
    (["check", "nope", "-p", "a2a3", "-t", "src=vec,16x16xf32"], "unknown op"),
    (["check", "tcolmin", "-p", "z9", "-t", "src=vec,16x16xf32"], "unknown profile"),
    (["check", "tcolmin", "-p", "a2a3", "-t", "src=vec,16x16"], "shape and dtype"),
    (["check", "tcolmin", "-p", "a2a3", "-t", "garbage"], "NAME=DESCRIPTOR"),
    (["check", "-p", "a2a3", "--asm", "pto.tcolmin ins(%s) outs(%d)"], "values : types"),
    (["run", "tcolmin", "-p", "a2a3", "--input", "src=/nonexistent.npy"], "no such file"),
    (["show", "tfoo"], "unknown op"),
])
def test_bad_input_is_one_line(capsys, args, fragment):
    code, _out, err = run(capsys, *args)
    assert code == 2
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_run_writes_outputs(capsys, tmp_path):
    rng = np.random.default_rng(0)
    src = rng.standard_normal((16, 16)).astype(np.float32)
    np.save(tmp_path / "src.npy", src)
    out_file = tmp_path / "out.npz"
    code, _out, err = run(capsys, "run", "tcolmin", "-p", "a5", "--input", f"src={tmp_path / 'src.npy'}",
                         "-t", "src=vec,16x16xf32,valid=10x16", "-t", "dst=vec,1x16xf32", "-o", str(out_file))
    assert code == 0, err
    np.testing.assert_array_equal(np.load(out_file)["dst"][0], src[:10].min(axis=0))


def test_export_validates_against_exported_schema(capsys, tmp_path):
    code, _out, _ = run(capsys, "export", "--json", "-o", str(tmp_path / "db.json"))
    assert code == 0
    code, schema_text, _ = run(capsys, "schema", "--which", "export")
    doc = json.loads((tmp_path / "db.json").read_text())
    schema = json.loads(schema_text)
    # the schema's references resolved once up front (else every $ref crawls the embedded op schema again)
    registry = Registry().with_resource(schema["$id"], DRAFT202012.create_resource(schema)).crawl()
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    validator.validate(doc)
    broken = json.loads(json.dumps(doc))
    broken["ops"]["tmax"]["modes"]["default"]["operands"][0]["role"] = "sideways"
    assert not validator.is_valid(broken)
    assert set(doc["ops"]) >= {"tcolargmax", "tmax", "trowmax", "tcolexpandmax", "tcolmin"}
    code, op_schema, _ = run(capsys, "schema")
    assert json.loads(op_schema)["title"].startswith("ptospec instruction")


def test_broken_spec_dir_reports_file_line(capsys, tmp_path):
    import shutil

    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    path = tmp_path / "specs/ops/tmax.yaml"
    path.write_text(path.read_text().replace("overflow: not-applicable", "overflow: sideways", 1))
    code = main(["--specs", str(tmp_path / "specs"), "lint"])
    err = capsys.readouterr().err
    assert code == 1 and "tmax.yaml:" in err and "[schema.enum]" in err


def test_each_command_is_parsed_by_its_module_alone():
    """``commands.MODULES`` names the module of every command (a run registers only that one) and its parser
    reads the command's arguments as the whole parser does."""
    from ptospec import cli, commands

    whole = cli.build_parser()
    (choices,) = [a.choices for a in whole._subparsers._group_actions]
    assert sorted(choices) == sorted(commands.MODULES)
    for command in choices:
        (alone,) = [a.choices for a in cli.build_parser(command)._subparsers._group_actions]
        assert command in alone and alone[command].format_help() == choices[command].format_help()
    for argv, command in ((["--specs", "list", "show", "x"], "show"), (["--spec=d", "list"], "list"),
                          (["--he", "list"], None), (["--ver"], None), (["-h", "list"], None)):
        assert cli.command_named(argv) == command


def test_console_script_help():
    out = subprocess.run([sys.executable, "-m", "ptospec.cli", "check", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--asm" in out.stdout


def test_conformance_says_what_it_will_run_and_how_to_shorten_it(db):
    from argparse import Namespace

    from ptospec.commands.conformance import plan

    args = Namespace(derived=32, property=False, keyword=None)
    text = plan(db, sorted(db.ops), "cpusim", "cpu", args, Path("build/conformance/cpusim"))
    assert f"all {len(db.ops)} ops" in text and "profile cpu" in text and "32 derived" in text
    assert "--ops" in text and "--derived 0" in text and "-k EXPR" in text
    short = plan(db, ["tadd"], "reference", None, Namespace(derived=0, property=False, keyword="positive"), Path("r"))
    assert "1 op(s): tadd" in short and "fixed cases only" in short and "--profile P" in short
    assert "--ops" not in short and "--derived 0" not in short
