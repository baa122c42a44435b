"""Broken spec files: every problem is reported with file:line and a rule id."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ptospec.lint import lint_paths
from ptospec.loader import DatabaseErrors, load_database

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def specs(tmp_path):
    dest = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", dest)
    shutil.copy(DATA / "tplain.yaml", dest / "ops/tplain.yaml")
    return dest


def break_file(path: Path, old: str, new: str) -> int:
    text = path.read_text()
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, 1))
    return line


def problems(specs, *files: str) -> list[str]:
    """Lint of the database ``specs``; of its op files ``files`` only when named (``ptospec lint FILE``: the
    ISA and the kinds are read all the same), as a writer checks the file they edit."""
    found, _ = lint_paths(str(specs), [specs / f for f in files])
    return [p.one_line() for p in found]


def test_the_database_is_clean():
    found, checked = lint_paths(str(ROOT / "specs"), [])
    assert not found and checked >= 6


def test_yaml_syntax_error_has_line(specs):
    line = break_file(specs / "ops/tplain.yaml", "family: elementwise-tile-tile", "family: [unclosed")
    out = problems(specs)
    assert any("tplain.yaml:" in p and "yaml.syntax" in p for p in out), out
    assert any(f":{line}" in p or f":{line + 1}" in p for p in out)


def test_schema_violation_has_line(specs):
    line = break_file(specs / "ops/tplain.yaml", "role: in", "role: input")
    out = problems(specs, "ops/tplain.yaml")
    assert any(f"tplain.yaml:{line}" in p and "schema" in p for p in out), out


def test_duplicate_key(specs):
    family = "family: elementwise-tile-tile"
    line = break_file(specs / "ops/tplain.yaml", family, f"{family}\nfamily: x")
    out = problems(specs, "ops/tplain.yaml")
    assert any(f"tplain.yaml:{line + 1}" in p and "duplicate-key" in p for p in out), out


def test_bad_expression_in_rule(specs):
    line = break_file(specs / "ops/tplain.yaml", 'check: "src0.valid_row == dst.valid_row',
                      'check: "src0.valid_row == == dst.valid_row')
    out = problems(specs, "ops/tplain.yaml")
    assert any(f"tplain.yaml:{line}" in p and "expr.syntax" in p for p in out), out


def test_unknown_references(specs):
    break_file(specs / "ops/tplain.yaml", "allow: [Vec]", "allow: [Vector]")
    break_file(specs / "ops/tplain.yaml", "{T: [f16, f32, i16, i32]}", "{T: [f16, f99]}")
    break_file(specs / "ops/tplain.yaml", 'sources: [seed]\n', "sources: [nowhere]\n")
    out = "\n".join(problems(specs, "ops/tplain.yaml"))
    assert "unknown tile type 'Vector'" in out
    assert "unknown dtype 'f99'" in out
    assert "unknown source 'nowhere'" in out


def test_semantics_must_write_outputs(specs):
    break_file(specs / "ops/tplain.yaml", '"dst[i, j] = max(src0[i, j], src1[i, j])"',
               '"src0[i, j] = max(src0[i, j], nope[i, j])"')
    out = "\n".join(problems(specs, "ops/tplain.yaml"))
    assert "must write an out operand" in out and "unknown operand 'nope'" in out


def test_illegal_example_is_reported(specs):
    break_file(specs / "ops/tplain.yaml", 'dst: "vec, 16x16xf32"', 'dst: "vec, 16x16xi32"')
    out = "\n".join(problems(specs, "ops/tplain.yaml"))
    assert "example is illegal" in out and "dtype." in out


def test_load_database_collects_every_error(specs):
    break_file(specs / "ops/tplain.yaml", "role: in", "role: bogus")
    break_file(specs / "kinds/binary-elementwise.yaml", "role: in", "role: bogus")
    with pytest.raises(DatabaseErrors) as info:
        load_database(specs)
    files = {e.where.split(":")[0] for e in info.value.errors}
    assert any("tplain" in f for f in files) and any("binary-elementwise" in f for f in files)


# ------------------------------------------------------------------ kinds


def test_problem_in_a_kind_points_at_the_kind_file(specs):
    line = break_file(specs / "kinds/binary-elementwise.yaml", "role: in", "role: input")
    out = problems(specs, "ops/tmax.yaml")
    assert any(f"binary-elementwise.yaml:{line}" in p and "schema" in p for p in out), out


def test_unknown_kind(specs):
    break_file(specs / "ops/tmax.yaml", "kind: binary-elementwise", "kind: ternary")
    out = "\n".join(problems(specs, "ops/tmax.yaml"))
    assert "unknown kind 'ternary'" in out and "tmax.yaml:2" in out


def test_missing_and_unknown_params(specs):
    break_file(specs / "ops/tmax.yaml", '  fn: "max(a, b)"\n', '  fun: "max(a, b)"\n')
    out = "\n".join(problems(specs, "ops/tmax.yaml"))
    assert "has no param 'fun'" in out


def test_missing_required_param(specs):
    break_file(specs / "ops/tmax.yaml", '  fn: "max(a, b)"\n', "")
    out = "\n".join(problems(specs, "ops/tmax.yaml"))
    assert "needs param 'fn'" in out


def test_omit_of_an_unknown_rule(specs):
    break_file(specs / "ops/tmax.yaml", "rules:\n", "rules:\n  - {id: no.such-rule, omit: true}\n")
    out = "\n".join(problems(specs, "ops/tmax.yaml"))
    assert "omit names 'no.such-rule'" in out


def test_omit_removes_a_kind_rule(specs):
    break_file(specs / "ops/tmax.yaml", "{id: loc.vec, sources: [seed, page]}", "{id: loc.vec, omit: true}")
    db = load_database(specs)
    assert "loc.vec" not in {r.id for r in db.op("tmax").rules}
    assert "layout.row-major" in {r.id for r in db.op("tmax").rules}


def test_param_expression_is_substituted_as_an_expression(specs):
    break_file(specs / "ops/tmax.yaml", '  fn: "max(a, b)"', '  fn: "a - b * a"')
    db = load_database(specs)
    assert db.op("tmax").raw["modes"]["default"]["semantics"] == ["dst[i, j] = src0[i, j] - src1[i, j] * src0[i, j]"]


def test_bad_param_expression_is_reported_at_its_use(specs):
    break_file(specs / "ops/tmax.yaml", '  fn: "max(a, b)"', '  fn: "max(a, b"')
    out = "\n".join(problems(specs, "ops/tmax.yaml"))
    assert "tmax.yaml" in out and "expr.syntax" in out


def test_observed_entries_are_checked(specs):
    path = specs / "ops/tsels.yaml"
    break_file(path, "      - {profile: cpu, as: accepts-rejected, rules: [mask.shape]}",
               "      - {profile: cpu, as: accepts-rejected, rules: [mask.nope]}\n"
               "      - {profile: gpu, as: wrong-value, modes: [fancy]}\n"
               "      - {profile: cpu, as: wrong-value, when: \"ghost.blayout == RowMajor\"}")
    out = "\n".join(problems(specs, "ops/tsels.yaml"))
    for expected in ("unknown rule(s) mask.nope", "unknown profile 'gpu'", "unknown mode(s) fancy",
                     "'ghost' is not an operand"):
        assert expected in out, out


def test_english_only_difference_prose_names_the_missing_translation(specs):
    path = specs / "ops/tcolmin.yaml"
    text = path.read_text(encoding="utf-8")
    old = text[text.index("    resolution:\n      en:"):]
    old = old[: old.index("\n  - id:")]
    english = old.splitlines()[1].split("en: ", 1)[1]
    line = break_file(path, old, f"    resolution: {english}")
    out = problems(specs, "ops/tcolmin.yaml")
    hit = [p for p in out if f"tcolmin.yaml:{line}" in p]
    assert hit and "English-only text" in hit[0] and "zh: <translation>" in hit[0], out
    break_file(path, "\n          zh: \"static_assert 接受 half、float、int16_t、int32_t。\"", "")
    assert any("missing: zh" in p for p in problems(specs, "ops/tcolmin.yaml"))


def test_unchanged_specs_are_loaded_once_and_a_changed_file_is_loaded_again(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", specs)
    first = load_database(specs)
    assert load_database(specs) is first
    assert load_database(specs, reuse=False) is not first
    path = specs / "ops" / "tadd.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("summary:", "# edited\nsummary:", 1), encoding="utf-8")
    assert load_database(specs) is not first  # same size or not, new bytes are a new database
    (specs / "ops" / "tsub.yaml").unlink()
    assert "tsub" not in load_database(specs).ops and "tsub" in first.ops
