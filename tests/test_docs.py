"""Fast tests of the LaTeX renderer and the page generator (no browser, no mkdocs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptospec.cli import main
from ptospec.docs.build import generate, stale, write
from ptospec.docs.examples import cpp_example, tile_type
from ptospec.docs.markdown import GENERATED, prose
from ptospec.docs.pages import op_page
from ptospec.expr.latex import statement_latex, to_latex
from ptospec.expr.parser import parse_expr, parse_statement
from ptospec.loader import load_database
from ptospec.tile import TileDesc

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def db():
    return load_database(ROOT / "specs")


def test_argmax_statement() -> None:
    stmt = parse_statement("dstIdx[0, j] = argmax(i < R: src[i, j]) for j < C")
    assert statement_latex(stmt) == (
        r"\mathrm{dstIdx}_{0,j} = \operatorname*{argmax}_{0 \le i < R} \mathrm{src}_{i,j}, \quad 0 \le j < C"
    )


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("a - (b - c)", r"a - \left(b - c\right)"),
        ("(a + b) * c", r"\left(a + b\right) \cdot c"),
        ("a + b * c", r"a + b \cdot c"),
        ("max(x, y)", r"\max(x, y)"),
        ("ceil_div(C, 8)", r"\left\lceil \frac{C}{8} \right\rceil"),
        ("src.valid_col != 0", r"\mathrm{src}.\mathrm{valid\_col} \ne 0"),
        ("bytes(T) != 1 and not x", r"\operatorname{sizeof}(T) \ne 1 \land \neg x"),
        ("t.fractal in [512, 32]", r"t.\mathrm{fractal} \in \{512, 32\}"),
        ("a ** 2", "a^{2}"),
        ("-(a + b)", r"-\left(a + b\right)"),
    ],
)
def test_expressions(text: str, latex: str) -> None:
    assert to_latex(parse_expr(text)) == latex


def test_guarded_statement() -> None:
    stmt = parse_statement("dst[0, j] = min(i < R: src[i, j]) for j < C")
    from dataclasses import replace

    guarded = replace(stmt, when=parse_expr("R > 0"), when_text="R > 0")
    assert statement_latex(guarded).endswith(r"\quad \text{if } R > 0")


def test_every_statement_and_check_renders_to_mathml(db) -> None:
    from ptospec.docs.mathml import mathml

    for op in db.ops.values():
        for mode in op.modes:
            for stmt in mode.semantics:
                assert mathml(statement_latex(stmt)).startswith("<math")
        for rule in op.rules:
            if rule.check is not None:
                assert "<math" in mathml(to_latex(rule.check))


def test_prose_escaping() -> None:
    assert prose("2*a*b <x> a_b | c") == r"2\*a\*b &lt;x&gt; a\_b \| c"


def test_tile_type_spelling(db) -> None:
    dyn = TileDesc("Vec", "f32", 16, 256, 16, 255)
    assert tile_type(db, dyn) == ("Tile<TileType::Vec, float, 16, 256, BLayout::RowMajor, -1, -1>", ["16", "255"])
    full = TileDesc("Vec", "f16", 16, 16, 16, 16)
    assert tile_type(db, full) == ("Tile<TileType::Vec, half, 16, 16, BLayout::RowMajor>", [])


def test_cpp_examples_from_spec(db) -> None:
    mode = db.op("tcolargmax").mode("index")
    auto = cpp_example(db, mode, manual=False)
    assert "using SrcT = Tile<TileType::Vec, float, 16, 256, BLayout::RowMajor, -1, -1>;" in auto
    assert "SrcT src(16, 255);" in auto and "TCOLARGMAX(dstIdx, src, tmp);" in auto
    assert "TASSIGN" not in auto
    manual = cpp_example(db, mode, manual=True)
    addresses = [int(a, 16) for a in __import__("re").findall(r"TASSIGN\(\w+, (0x[0-9a-f]+)\)", manual)]
    assert addresses == sorted(addresses) and len(set(addresses)) == len(addresses) == 3


def test_op_page_sections(db) -> None:
    page = op_page(db, db.op("tcolargmax"), "en")
    assert page.startswith(f"<!-- {GENERATED} -->")
    for heading in ("## Summary", "## Data types per profile", "### a2a3", "## Runtime checks",
                    "## Scratch (tmp) tiles", "### Sizing rules", "## Recorded differences between sources",
                    "**C++, manual (TASSIGN)**", "%dstIdx = tcolargmax %src : !pto.tile<vec, 16x256xf32"):
        assert heading in page, heading
    assert "<math" in page
    assert "a 2-byte source needs a 2-byte index" in page
    zh = op_page(db, db.op("trowmax"), "zh")
    assert "## 语义" in zh and "## 操作数" in zh


def test_performance_table(db) -> None:
    page = op_page(db, db.op("tmax"), "en")
    assert "## Performance" in page and "Startup latency" in page


def test_generation_is_deterministic(db) -> None:
    assert generate(db) == generate(load_database(ROOT / "specs"))
    files = generate(db)
    for lang in ("en", "zh"):
        for name in db.ops:
            assert f"docs/{lang}/ops/{name}.md" in files
        assert f"docs/{lang}/matrix.md" in files and f"docs/{lang}/differences.md" in files
    assert all(GENERATED in content[:200] for content in files.values())


def test_check_names_stale_files_and_keeps_foreign_ones(tmp_path: Path, db, capsys) -> None:
    site = tmp_path / "site"
    files = generate(db)
    write(files, site)
    assert stale(files, site) == []
    (site / "docs" / "en" / "notes.md").write_text("my own notes\n", encoding="utf-8")
    (site / "docs" / "en" / "old.md").write_text(f"<!-- {GENERATED} -->\n", encoding="utf-8")
    (site / "docs" / "en" / "index.md").write_text(f"<!-- {GENERATED} -->\nedited\n", encoding="utf-8")
    assert stale(files, site) == ["docs/en/index.md", "docs/en/old.md"]
    args = ["--specs", str(ROOT / "specs"), "docs", "build", "--site", str(site)]
    assert main([*args, "--check"]) == 1
    assert "docs/en/index.md" in capsys.readouterr().err
    assert main([*args, "--no-html"]) == 0
    assert main([*args, "--check"]) == 0
    assert (site / "docs" / "en" / "notes.md").read_text(encoding="utf-8") == "my own notes\n"
    assert not (site / "docs" / "en" / "old.md").exists()
