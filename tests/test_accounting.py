"""Every upstream page and simulator instruction accounted for: `ptospec list --upstream PATH` on a small
fake checkout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ptospec.accounting import account
from ptospec.cli import main
from ptospec.dbcache import load_database_cached
from ptospec.lint import lint_paths
from ptospec.loader import load_database

ROOT = Path(__file__).resolve().parent.parent
OPS = "docs/isa/tile/ops"


@pytest.fixture
def tree(tmp_path):
    """A checkout with four families: an op's page and a new page, a recorded page, program-layer pages."""
    pages = {
        "elementwise-tile-tile": ["tadd.md", "tadd_zh.md", "tnew.md", "tmuls_zh.md"],
        "layout-and-rearrangement": ["tpack.md"],
        "view-and-tile-buf": ["alloc-tile.md", "tile-buf-new.md"],
        "sync-and-config": ["tsync.md"],
    }
    for family, names in pages.items():
        folder = tmp_path / "pto-isa" / OPS / family
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text(f"# {name}\n")
    root = tmp_path / "pto-isa"
    # legacy pages: an instruction's, a mixed-case one, a program-layer one, a recorded one, a new one
    for name in ("TADD.md", "TADD_zh.md", "TAddDeqRelu.md", "TASSIGN.md", "TALLOC.md", "TNEWOP.md", "README.md",
                 "conventions.md"):
        (root / "docs/isa" / name).write_text("#\n")
    header = root / "include/pto/common/pto_instr.hpp"
    header.parent.mkdir(parents=True)
    header.write_text("template <typename T>\nPTO_INST RecordEvent TADD(T &dst, T &a, T &b)\n{}\n"
                      "PTO_INST void TASSIGN(T& obj, AddrType addr)\n"
                      "template <typename Pipe>\nPTO_INST RecordEvent TALLOC(Pipe& pipe,\n  T& tile)\n"
                      "PTO_INST RecordEvent TNEWOP(T& dst)\n#define PTO_INSTR_SCOPE(API, ...)\n")
    return root


def run(capsys, *args):
    code = main(["--specs", str(ROOT / "specs"), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_each_page_is_covered_recorded_or_missing(tree):
    db = load_database_cached(ROOT / "specs")
    acc = account(db, {"alloc_tile", "tsync"}, tree, {"tassign": "TASSIGN"})
    fams = {f.family: f for f in acc.families}
    assert set(fams) == {"elementwise-tile-tile", "layout-and-rearrangement", "view-and-tile-buf", "sync-and-config"}
    ew = fams["elementwise-tile-tile"]
    assert ew.pages == ("tadd", "tnew")  # Chinese copies are not pages of their own
    assert ew.ops == {"tadd": "tadd"} and ew.missing == ("tnew",)
    assert fams["layout-and-rearrangement"].unimplemented == {"tpack": "TPACK"}
    assert fams["layout-and-rearrangement"].missing == ()
    assert fams["view-and-tile-buf"].program == {"alloc-tile": "alloc_tile"}
    assert fams["view-and-tile-buf"].missing == ("tile-buf-new",)
    assert fams["sync-and-config"].program == {"tsync": "tsync"}
    assert acc.pages == 6 and acc.missing == 2 + 1 + 1  # the pages, the legacy page and PTO_INST TNEWOP
    # the database names pages this small tree does not have: every other op's page, the TALIAS record
    assert "tsub names docs/isa/tile/ops/elementwise-tile-tile/tsub.md" in acc.stale
    assert f"unimplemented_pages records {OPS}/sync-and-config/talias.md" in acc.stale
    # instructions documented only by a legacy page, or by none
    assert acc.without_page["tfusedmuladd"] == "docs/isa/TFUSEDMULADD.md"
    assert acc.without_page["tsubreluconv"] == ""
    assert "tadd" not in acc.without_page


def test_legacy_pages_and_simulator_instructions_are_accounted_for(tree):
    db = load_database_cached(ROOT / "specs")
    acc = account(db, {"alloc_tile", "tsync"}, tree, {"tassign": "TASSIGN"})
    legacy, simulator = acc.lists
    # Chinese copies, README and lower-case pages are no instruction pages; names match case-insensitively
    assert legacy.names == ("TADD", "TALLOC", "TASSIGN", "TAddDeqRelu", "TNEWOP")
    assert legacy.covered == {"TADD": "tadd", "TASSIGN": "tassign (program)", "TAddDeqRelu": "tadddeqrelu"}
    assert legacy.recorded == {"TALLOC": "unspecified"} and legacy.missing == ("TNEWOP",)
    assert simulator.names == ("TADD", "TALLOC", "TASSIGN", "TNEWOP")  # a declaration over two lines counts
    assert simulator.missing == ("TNEWOP",)
    assert acc.missing == 2 + 2  # two tile-op pages (tnew, tile-buf-new), the legacy page and PTO_INST TNEWOP
    # the comm ISA is accounted for as a whole; the fake checkout has none of its files
    assert [s.isa.name for s in acc.separate] == ["comm"]
    assert any(s.startswith("separate_isas comm names docs/isa/comm/") for s in acc.stale)
    # every intrinsic the database calls that the fake header lacks is stale
    assert "tsub specifies TSUB" in acc.stale


def test_a_mode_documents_further_upstream_names(specs, tree):
    op = specs / "ops" / "ttri.yaml"
    op.write_text(op.read_text().replace("    cpp:", "    documents: [TNEWOP, TNOSUCH]\n    cpp:", 1))
    db = load_database(specs)
    acc = account(db, set(), tree)
    legacy, simulator = acc.lists
    assert legacy.covered["TNEWOP"] == "ttri" and simulator.covered["TNEWOP"] == "ttri"
    assert "TASSIGN" in legacy.missing  # no program intrinsics given
    assert "ttri specifies TNOSUCH" in acc.stale


def test_list_upstream_reports_and_strict_fails(capsys, tree):
    code, out, _ = run(capsys, "list", "--upstream", str(tree))
    assert code == 0
    assert "upstream pages under" in out and ": 6 in 4 families" in out
    assert "missing, elementwise-tile-tile (1): tnew" in out
    assert "missing, view-and-tile-buf (1): tile-buf-new" in out
    assert "without implementation, layout-and-rearrangement: TPACK (tpack.md)" in out
    assert "program layer, view-and-tile-buf: alloc_tile" in out
    assert "legacy pages under" in out and ": 5: 3 specified, 1 recorded, 1 missing" in out
    assert "  program layer: TASSIGN by tassign (program)" in out
    assert "  missing (1): TNEWOP" in out and "TALLOC (unspecified)" in out
    assert "separate ISA comm (recorded in specs/isa.yaml, not specified): 0 instructions" in out
    row = next(line for line in out.splitlines() if line.startswith("elementwise-tile-tile"))
    assert row.split()[1:] == ["2", "1", "0", "0", "1"]
    code, out, _ = run(capsys, "list", "--upstream", str(tree), "--family", "view-and-tile-buf")
    assert code == 0 and "elementwise-tile-tile" not in out and "tile-buf-new" in out
    code, _, _ = run(capsys, "list", "--upstream", str(tree), "--strict")
    assert code == 1


def test_strict_passes_when_everything_is_accounted_for(capsys, tree):
    for name in ("tnew.md", "tmuls_zh.md"):
        (tree / OPS / "elementwise-tile-tile" / name).unlink()
    (tree / OPS / "view-and-tile-buf" / "tile-buf-new.md").unlink()
    db = load_database_cached(ROOT / "specs")
    # a tree holding exactly the pages the database names: nothing missing, nothing stale
    for op in db.ops.values():
        page = op.sources.get("page")
        if page is not None and page.ref.startswith(OPS):
            (tree / page.ref).parent.mkdir(parents=True, exist_ok=True)
            (tree / page.ref).write_text("#\n")
    for entry in db.isa.unimplemented_pages:
        (tree / entry.page).parent.mkdir(parents=True, exist_ok=True)
        (tree / entry.page).write_text("#\n")
    # a header declaring exactly what the database specifies or records, the recorded pages, the comm files
    (tree / "docs/isa/TNEWOP.md").unlink()
    names = {m.cpp_name for op in db.ops.values() for m in op.modes} | {"TASSIGN", "TSYNC", "SYNCALL"}
    names |= {n for op in db.ops.values() for m in op.modes for n in m.documents}
    names |= {name for _, name, _ in db.isa.unspecified}
    (tree / "include/pto/common/pto_instr.hpp").write_text("".join(f"PTO_INST void {n}()\n" for n in sorted(names)))
    for page, _, _ in db.isa.unspecified:
        (tree / page).write_text("#\n")
    for sep in db.isa.separate_isas:
        for path in (sep.pages, sep.header, *sep.simulator):
            target = tree / path
            if path.endswith("/"):
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("PTO_INST void TPUT()\n")
    code, out, _ = run(capsys, "list", "--upstream", str(tree), "--strict")
    assert code == 0, out
    assert "missing," not in out and "stale" not in out


def test_bad_upstream_paths_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "list", "--upstream", str(tmp_path))
    assert code == 2 and "has no docs/isa/tile/ops/" in err and "Traceback" not in err
    code, _, err = run(capsys, "list", "--strict")
    assert code == 2 and "--strict needs --upstream" in err


@pytest.fixture
def specs(tmp_path):
    dest = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", dest)
    return dest


def test_a_recorded_page_that_an_instruction_documents_is_an_error(specs):
    isa = specs / "isa.yaml"
    text = isa.read_text()
    isa.write_text(text.replace("  - page: docs/isa/tile/ops/sync-and-config/talias.md",
                                "  - page: docs/isa/tile/ops/elementwise-tile-tile/tadd.md", 1))
    found, _ = lint_paths(str(specs), [specs / "ops/tadd.yaml"])  # the ISA and the instruction named
    lines = [p.one_line() for p in found]
    assert any("isa.unimplemented-page" in p and "page of tadd" in p and "isa.yaml:" in p for p in lines), lines


def test_a_page_recorded_twice_is_an_error(specs):
    isa = specs / "isa.yaml"
    text = isa.read_text()
    isa.write_text(text.replace("  - page: docs/isa/tile/ops/sync-and-config/talias.md",
                                "  - page: docs/isa/tile/ops/layout-and-rearrangement/tpack.md", 1))
    found, _ = lint_paths(str(specs), [])
    assert any("isa.duplicate-page" in p.one_line() for p in found), [p.one_line() for p in found]
