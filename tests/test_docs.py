"""Fast tests of the LaTeX renderer and the page generator (no browser, no mkdocs)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from ptospec.cli import main
from ptospec.docs.build import generate, stale, write
from ptospec.docs.examples import cpp_example, tile_type
from ptospec.docs.labels import label
from ptospec.docs.markdown import GENERATED, prose
from ptospec.docs.mathml import expand
from ptospec.docs.pages import op_page
from ptospec.executor import view_offsets
from ptospec.expr.latex import PHONE_LINE_EM, layout, statement_latex, to_latex
from ptospec.expr.latex_width import latex_width
from ptospec.expr.parser import parse_expr, parse_statement
from ptospec.tile import GlobalDesc, TileDesc

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def files(db) -> dict[str, str]:
    """The generated site sources, made once for the tests that only read them."""
    return generate(db)


def test_argmax_statement() -> None:
    stmt = parse_statement("dstIdx[0, j] = argmax(i < R: src[i, j]) for j < C")
    assert statement_latex(stmt) == (
        r"\begin{array}{l} \mathrm{dstIdx}_{0,j} = \operatorname*{argmax}_{0 \le i < R} \mathrm{src}_{i,j} \\ "
        r"\quad 0 \le j < C \end{array}"
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
    assert statement_latex(guarded).endswith(r"\\ \quad \text{if}\ R > 0 \end{array}")


def test_long_statements_break_into_lines() -> None:
    """Ranges, guards and filters go on lines of their own; a guard of several conjuncts one per line; a chain
    of choices is one brace; a choice inside the target's subscript gets a name and a line of its own."""
    stmt = parse_statement("dst[0, select(a == 1, i, select(a == 2, i - 1, 0))] = src[0, i] for i < C")
    from dataclasses import replace

    guarded = replace(stmt, when=parse_expr("x == 1 and y == 2 and z == 3"), when_text="")
    latex = statement_latex(guarded)
    assert latex.startswith(r"\begin{array}{l} \mathrm{dst}_{0,k} = \mathrm{src}_{0,i} \\ \quad k = \begin{cases}")
    assert latex.count(r"\begin{cases}") == 1 and latex.count(r"\text{otherwise}") == 1
    assert r"\text{if}\ x = 1 \land \\ \qquad y = 2 \land \\ \qquad z = 3 \end{array}" in latex


def test_a_count_is_a_set_size_with_its_conditions_in_a_column() -> None:
    """``sum(m < n: select(c, 1, 0))`` reads as #{0 <= m < n | c}; too wide for a phone, each term of its condition on
    a line of its own (TMRGSORT's merge positions)."""
    count = parse_expr("sum(m < NM: select(m < N1 and src1[0, P * min(m, N1 - 1)] > t, 1, 0))")
    assert to_latex(count).startswith(r"\#\{0 \le m < \mathrm{NM} \mid m < \mathrm{N1} \land")
    assert to_latex(parse_expr("k + sum(m < 4: select(x > m, 1, 0))")) == r"k + \#\{0 \le m < 4 \mid x > m\}"
    lines = layout(count, PHONE_LINE_EM - 4)
    assert lines == [r"\#\{0 \le m < \mathrm{NM} \mid", r"\quad m < \mathrm{N1} \land",
                     r"\quad \mathrm{src1}_{0,P \cdot \min(m, \mathrm{N1} - 1)} > t\}"]
    assert to_latex(parse_expr("sum(m < 4: select(x > m, 2, 0))")).startswith(r"\sum")  # not a count


def test_phone_layouts_fit_a_phone() -> None:
    """A wide target index gets a name; a short right side goes under a left side too wide to break; an infix
    function (cmp) breaks after its operator; every line within the phone's budget but the flag's name, a single
    identifier that cannot break."""
    stmt = parse_statement("exp_zz[p // exp_zz.cols, p % exp_zz.cols] = mx_exponent(x, 8) for i < R")
    latex = statement_latex(stmt, PHONE_LINE_EM)
    assert latex.startswith(r"\begin{array}{l} \mathrm{exp\_zz}_{k,l} = ")
    assert r"\quad k = \left\lfloor \frac{p}{\mathrm{exp\_zz}.\mathrm{cols}} \right\rfloor" in latex
    flag = layout(parse_expr("profile.img2col_from_registers_and_more == 0"), PHONE_LINE_EM - 4)
    assert flag == [r"\mathrm{profile}.\mathrm{img2col\_from\_registers\_and\_more}", r"\quad = 0"]
    cmp = layout(parse_expr("compare(src0[i, j], kValue[0, i], cmpMode)"), 10)
    assert cmp == [r"\mathrm{src0}_{i,j} \mathrel{\mathrm{cmp}_{\mathrm{cmpMode}}}", r"\quad \mathrm{kValue}_{0,i}"]
    rows = latex.removeprefix(r"\begin{array}{l} ").removesuffix(r" \end{array}").split(r" \\ ")
    assert len(rows) > 1 and all(latex_width(x) <= PHONE_LINE_EM for x in [*rows, flag[1], *cmp])


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
    assert "<ptospec-math data-tex=" in page and "<math" in expand(page)
    assert "a 2-byte source needs a 2-byte index" in page
    assert '<details class="ptospec-diff note"' in page and " open" not in page.split("ptospec-diff")[1][:80]
    zh = op_page(db, db.op("trowmax"), "zh")
    assert "## 语义" in zh and "## 操作数" in zh


def test_performance_table(db) -> None:
    page = op_page(db, db.op("tmax"), "en")
    assert "## Performance" in page and "Startup latency" in page


def test_generation_is_deterministic(db, files) -> None:
    """This generation equals the committed site sources, which another process made (another load of the
    database, another hash seed): a difference is nondeterminism, or sources left stale (`ptospec docs build`)."""
    assert stale(files, ROOT / "site") == []
    for lang in ("en", "zh"):
        for name in db.ops:
            assert f"docs/{lang}/ops/{name}.md" in files
        assert f"docs/{lang}/matrix.md" in files and f"docs/{lang}/differences.md" in files
        config = json.loads(files[f"{lang}/mkdocs.yml"].partition("\n")[2])
        assert config["theme"]["language"] == lang and config["use_directory_urls"] is False
        assert "content.code.copy" in config["theme"]["features"] and "site_url" not in config
    assert all(GENERATED in content[:200] for content in files.values())


def test_check_names_stale_files_and_keeps_foreign_ones(tmp_path: Path, db, files, capsys) -> None:
    site = tmp_path / "site"
    write(files, site)
    assert stale(files, site) == []
    (site / "docs" / "en" / "notes.md").write_text("my own notes\n", encoding="utf-8")
    (site / "docs" / "en" / "old.md").write_text(f"<!-- {GENERATED} -->\n", encoding="utf-8")
    (site / "docs" / "en" / "index.md").write_text(f"<!-- {GENERATED} -->\nedited\n", encoding="utf-8")
    assert stale(files, site) == ["docs/en/index.md", "docs/en/old.md"]
    args = ["--specs", str(ROOT / "specs"), "docs", "build", "--site", str(site)]
    # the database in hand (its worked examples already computed for ``files``), as the kernels page hands it
    assert main([*args, "--check"], database=db) == 1
    assert "docs/en/index.md" in capsys.readouterr().err
    assert main([*args, "--no-html"], database=db) == 0
    assert main([*args, "--check"], database=db) == 0
    assert (site / "docs" / "en" / "notes.md").read_text(encoding="utf-8") == "my own notes\n"
    assert not (site / "docs" / "en" / "old.md").exists()


def _spec_prose(value, found: list[tuple[str, str]]) -> None:
    """Every bilingual text of a spec document (a mapping with ``en`` and ``zh``)."""
    if isinstance(value, dict):
        if set(value) == {"en", "zh"} and all(isinstance(v, str) for v in value.values()):
            found.append((value["en"], value["zh"]))
            return
        for v in value.values():
            _spec_prose(v, found)
    elif isinstance(value, list):
        for v in value:
            _spec_prose(v, found)


_WORD = re.compile(r"\w+")


def _candidates(text: str, pages: dict[str, str], index: dict[str, set[str]]) -> Iterable[str]:
    """The pages ``text`` can occur in (``index``: word -> the pages having it): those having each word of
    ``text`` but its first and last.  Those stand between two non-word characters in ``text``, so they are whole
    words wherever ``text`` occurs (the first and last may be parts of longer ones): no page ``text`` is on is
    left out."""
    inner = _WORD.findall(text)[1:-1]
    return set.intersection(*(index.get(word, set()) for word in inner)) if inner else pages


def test_chinese_pages_contain_no_untranslated_spec_prose(db, files) -> None:
    """A zh page must not show the English text of any spec prose (summaries, claims, resolutions, notes...)."""
    texts: list[tuple[str, str]] = []
    _spec_prose(db.isa.raw, texts)
    for op in db.ops.values():
        _spec_prose(op.raw, texts)
    for kind in db.kinds.values():
        _spec_prose(kind.body.data, texts)
        _spec_prose({"t": kind.title, "d": kind.description}, texts)
    english = {prose(en) for en, zh in texts if en.strip() != zh.strip() and len(en.split()) >= 4
               and "{{" not in en}
    assert len(english) > 1500
    # command output quoted on a page (the kernels page) is what the English-only command line prints
    pages = {path: re.sub(r"```text\n.*?```", "", content, flags=re.S) for path, content in files.items()
             if path.startswith("docs/zh/")}
    assert len(pages) > 80
    index: dict[str, set[str]] = {}
    for path, content in pages.items():
        for word in set(_WORD.findall(content)):
            index.setdefault(word, set()).add(path)
    leaks = [(path, en) for en in english for path in _candidates(en, pages, index) if en in pages[path]]
    assert not leaks, leaks[:5]
    # And the English pages do show them (the check above looks for the right spelling).
    en_page = files["docs/en/ops/tcolmin.md"]
    assert any(en in en_page for en in english)


def test_every_op_page_has_a_worked_example_from_the_executor(db, files) -> None:
    from ptospec.docs import worked

    for name, op in db.ops.items():
        if not any(m.has_data_semantics for m in op.modes):  # nothing changes: no worked example to draw
            key = "cross_core" if all(m.cross_core for m in op.modes) else "no_data_semantics"
            why = "no_worked_cross_core" if all(m.cross_core for m in op.modes) else "no_worked_effect"
            for lang in ("en", "zh"):
                page = files[f"docs/{lang}/ops/{name}.md"]
                assert label(key, lang).split("{")[0] in page
                # the worked-example section is there and says why it has none
                assert f"## {label('worked', lang)}\n" in page and label(why, lang).split("{")[0] in page, name
            continue
        for lang in ("en", "zh"):
            page = files[f"docs/{lang}/ops/{name}.md"]
            outputs = label("worked_output", lang)
            assert f'<svg role="img" aria-label="{outputs} ' in page, (name, lang)
        example = worked.compute(db, op)
        tiles = [t for t in example.tiles.values() if hasattr(t, "valid_row")]
        assert any((t.valid_row, t.valid_col) != (t.rows, t.cols) for t in tiles), f"{name}: region not partial"
        for out, after in example.after.items():
            written = worked._changed(example.before[out], after)
            desc = example.tiles[out]
            if isinstance(desc, GlobalDesc):  # a store: only the elements the view addresses change
                assert written.any() and set(np.flatnonzero(written)) <= set(view_offsets(desc).reshape(-1).tolist())
                continue
            mode = op.mode(example.mode)
            if mode.operand(out).alias_of or any(s.writes == "tile" and s.target.base == out for s in mode.semantics):
                assert written.any()  # the spec writes beyond the valid region (pad fills, views of storage)
                continue
            assert written.any() and not written[desc.valid_row:, :].any() and not written[:, desc.valid_col:].any()


def test_worked_example_numbers_come_from_the_executor(db) -> None:
    from ptospec.docs import worked

    example = worked.compute(db, db.op("tadd"))
    src0, src1 = (np.asarray(example.inputs[n]) for n in ("src0", "src1"))
    desc = example.tiles["dst"]
    r, c = desc.valid_row, desc.valid_col
    assert np.array_equal(example.after["dst"][:r, :c], (src0 + src1)[:r, :c])
    svg = worked.render(db, example, "en")
    assert f">{worked._fmt(example.after['dst'][0, 0])}<" in svg


def test_no_raw_spec_internals_on_pages(db, files) -> None:
    for path, content in files.items():
        if not path.startswith("docs/en/"):
            continue
        assert "noun_zh" not in content and "tmp_a2a3" not in content, path
        assert "2 ** (bits(T)" not in content, path
    kind_page = files["docs/en/kinds/row-reduction.md"]
    assert "<math" in expand(kind_page) and "x &gt; -(2" not in kind_page


def test_tables_have_no_empty_columns(db, files) -> None:
    page = files["docs/en/ops/tadd.md"]
    header = next(line for line in page.splitlines() if line.startswith("| Modes |"))
    assert "Notes" not in header
    from ptospec.docs.markdown import table

    assert table(["a", "b"], [["1", " "], ["2", ""]]).splitlines()[0] == "| a |"


def test_language_links_keep_the_page(db, files) -> None:
    assert 'href="../../zh/ops/tcolmin.html" hreflang="zh"' in files["docs/en/ops/tcolmin.md"]
    assert 'href="../en/matrix.html" hreflang="en"' in files["docs/zh/matrix.md"]
    assert "{{ base_url }}/../{{ alt.lang }}/{{ page.url" in files["overrides/partials/alternate.html"]


def test_maths_placeholders_expand_to_mathml() -> None:
    from ptospec.docs.mathml import math_block, math_inline, mathml, on_post_page

    latex = r"\left\lceil \frac{C}{8} \right\rceil"
    assert expand(f"a {math_inline(latex)} b") == f"a {mathml(latex)} b"
    block = on_post_page(math_block(latex), page=None, config=None)
    assert block == f'<div class="ptospec-math">{mathml(latex, block=True)}</div>' and 'display="block"' in block


def test_worked_examples_chosen_by_the_spec_teach(db, files) -> None:
    """TMATMUL: M, K, N > 1 and how Left, Right and Acc are stored; TLOAD: a strided, offset window of its
    buffer into a padded tile."""
    from ptospec.docs import worked

    mm = worked.compute(db, db.op("tmatmul"))
    m, k, n = mm.tiles["src0"].valid_row, mm.tiles["src0"].valid_col, mm.tiles["src1"].valid_col
    assert min(m, k, n) > 1
    src0, src1 = (np.asarray(mm.inputs[x], dtype=np.float64) for x in ("src0", "src1"))
    assert np.allclose(mm.after["dst"][:m, :n], src0[:m, :k] @ src1[:k, :n])
    page = files["docs/en/ops/tmatmul.md"]
    assert page.count('class="pw-tile pw-storage"') == 3  # Left NZ, Right ZN, Acc NZ
    for order in ("Left f16, NZ", "Right f16, ZN", "Acc f32, NZ"):
        assert order in page, order
    load = worked.compute(db, db.op("tload"))
    src, dst = load.tiles["src"], load.tiles["dst"]
    assert src.offset and src.strides[0] > src.shape[1] and dst.pad != "Null"
    page = files["docs/en/ops/tload.md"]
    assert label("buffer_caption", "en").split("{")[1].split("}")[1][:20] in page
    written = worked._changed(load.before["dst"], load.after["dst"])
    assert written[:, dst.valid_col:].any(), "the pad is shown beyond the valid columns"


def test_the_kernels_page_runs_the_example_kernels(files) -> None:
    """Both example kernels checked (legal) and run (close to NumPy), and a finding read, in both languages."""
    import re as _re

    for lang in ("en", "zh"):
        page = files[f"docs/{lang}/kernels.md"]
        for kernel in ("softmax_rows.pto", "matmul_k_loop.pto"):
            assert f"ptospec check-program docs/examples/{kernel}\n" in page
            assert f"ptospec run-program docs/examples/{kernel} " in page
            assert (ROOT / "docs" / "examples" / kernel).read_text(encoding="utf-8").rstrip("\n") in page
        assert page.count("0 violation(s)") == 2 and page.count("[exit status 0]") == 4
        assert "[layout.left-a5]" in page and "[exit status 1]" in page
        errors = [float(x) for x in _re.findall(r"(?:is|为) ([0-9.e+-]+)[.。]", page)]
        assert len(errors) == 2 and max(errors) < 1e-6, errors
        assert "(… s)" in page and not _re.search(r"\d+\.\d+ s\b", page), "timings must be blanked"


def test_usage_and_cost_facts_are_on_the_pages(db, files) -> None:
    """TLOAD is asynchronous and TMATMUL has an AccPhase overload and a cycle model: data with sources, rendered;
    the model's upstream sample points agree with its formula."""
    kinds = {name: {u.kind for u in db.op(name).usage} for name in ("tload", "tmatmul")}
    assert kinds == {"tload": {"asynchronous", "cost"}, "tmatmul": {"asynchronous", "overload", "cost"}}
    for lang in ("en", "zh"):
        for name in ("tload", "tmatmul"):
            page = files[f"docs/{lang}/ops/{name}.md"]
            assert f"## {label('usage_notes', lang)}\n" in page and label("usage_asynchronous", lang) in page
    (table,) = db.op("tmatmul").performance
    for inputs, mkn, base_k, repeats, cost, cycles in table.rows:
        m, k, n = (int(x) for x in mkn.split(" x "))
        assert int(base_k) == 32 // db.isa.dtypes[inputs].bytes
        assert int(repeats) == -(-m // 16) * -(-n // 16) * -(-k // int(base_k))
        assert int(cycles) == 14 + int(repeats) * int(cost)


@pytest.mark.parametrize("text, shown", [
    ("band(shr(M, j % 4), 1)", r"\left(M \gg \left(j \bmod 4\right)\right) \mathbin{\&} 1"),
    ("band(M, 1) == 0", r"\left(M \mathbin{\&} 1\right) = 0"),
    ("band(M, 1) * 3", r"\left(M \mathbin{\&} 1\right) \cdot 3"),
    ("shr(x, 3)", r"x \gg 3"),
])
def test_functions_written_as_operators_bracket_what_is_not_an_atom(text, shown):
    """``band(shr(M, j % 4), 1)`` was drawn ``M >> j mod 4 & 1``, which a reader cannot parse back."""
    node = parse_expr(text)
    assert to_latex(node) == shown
    assert "".join(layout(node, 6.0)).count("(") == shown.count("(")
