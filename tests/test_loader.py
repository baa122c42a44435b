"""Broken spec files: every problem is reported with file:line and a rule id."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ptospec.lint import lint_paths
from ptospec.loader import DatabaseErrors, load_database

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def specs(tmp_path):
    dest = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", dest)
    return dest


def break_file(path: Path, old: str, new: str) -> int:
    text = path.read_text()
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, 1))
    return line


def problems(specs) -> list[str]:
    found, _ = lint_paths(str(specs), [])
    return [p.one_line() for p in found]


def test_the_database_is_clean():
    found, checked = lint_paths(str(ROOT / "specs"), [])
    assert not found and checked >= 6


def test_yaml_syntax_error_has_line(specs):
    line = break_file(specs / "ops/tcolmin.yaml", "family: reduce-and-expand", "family: [unclosed")
    out = problems(specs)
    assert any("tcolmin.yaml:" in p and "yaml.syntax" in p for p in out), out
    assert any(f":{line}" in p or f":{line + 1}" in p for p in out)


def test_schema_violation_has_line(specs):
    line = break_file(specs / "ops/tmax.yaml", "role: in", "role: input")
    out = problems(specs)
    assert any(f"tmax.yaml:{line}" in p and "schema" in p for p in out), out


def test_duplicate_key(specs):
    line = break_file(specs / "ops/trowmax.yaml", "family: reduce-and-expand", "family: reduce-and-expand\nfamily: x")
    out = problems(specs)
    assert any(f"trowmax.yaml:{line + 1}" in p and "duplicate-key" in p for p in out), out


def test_bad_expression_in_rule(specs):
    line = break_file(specs / "ops/tcolmin.yaml", 'check: "src.valid_col == dst.valid_col"',
                      'check: "src.valid_col == == dst.valid_col"')
    out = problems(specs)
    assert any(f"tcolmin.yaml:{line}" in p and "expr.syntax" in p for p in out), out


def test_unknown_references(specs):
    break_file(specs / "ops/tcolmin.yaml", "allow: [Vec]", "allow: [Vector]")
    break_file(specs / "ops/tcolargmax.yaml", "T: [f16, f32, u16, u32], I: [u32, i32]", "T: [f16, f99], I: [u32, i32]")
    break_file(specs / "ops/tmax.yaml", 'sources: [seed]\n', "sources: [nowhere]\n")
    out = "\n".join(problems(specs))
    assert "unknown tile type 'Vector'" in out
    assert "unknown dtype 'f99'" in out
    assert "unknown source 'nowhere'" in out


def test_semantics_must_write_outputs(specs):
    break_file(specs / "ops/tmax.yaml", '"dst[i, j] = max(src0[i, j], src1[i, j])"',
               '"src0[i, j] = max(src0[i, j], nope[i, j])"')
    out = "\n".join(problems(specs))
    assert "must write an out operand" in out and "unknown operand 'nope'" in out


def test_illegal_example_is_reported(specs):
    break_file(specs / "ops/tcolmin.yaml", 'dst: "vec, 1x16xf32"', 'dst: "vec, 1x16xi32"')
    out = "\n".join(problems(specs))
    assert "example is illegal" in out and "dtype.same-t" in out


def test_load_database_collects_every_error(specs):
    break_file(specs / "ops/tcolmin.yaml", "role: in", "role: bogus")
    break_file(specs / "ops/tmax.yaml", "role: in", "role: bogus")
    with pytest.raises(DatabaseErrors) as info:
        load_database(specs)
    files = {e.where.split(":")[0] for e in info.value.errors}
    assert any("tcolmin" in f for f in files) and any("tmax" in f for f in files)
