"""Derived cases: more valid regions and data sets for the static configuration of a fixed case.

A fixed positive case of the generated suite fixes every tile's type, physical shape and layout.
Valid shapes are run-time values, so the same static configuration can be checked over other
valid regions and data sets at little cost (a compiled backend runs them all on one binary).  The
derived cases of a fixed case are, in this order:

* its own valid region with the other data patterns (``edge``, ``special``, ``random``, ``ties`` when the
  op's numerics say ties resolve to the first candidate, and ``ieee`` when they define NaN, infinities and
  signed zeros exactly on the case's profile);
* other valid regions, each with two patterns (in turn): the full tile, one less than full in both
  directions, one row, one column, one element, about half (odd counts), and mixes of those;
* then more data sets over the same legal regions (own region first): every pattern a region has not had,
  then each pattern again with a new seed (label suffix ``-2``, ``-3``, ...), until the count is reached.

Only finding a region costs a validator call (at most ``MAX_REGION_TRIES`` per fixed case); a data set
costs only its run and the reference executor, so large counts are cheap.

A region is derived per axis: every tile whose valid extent along the axis is not 1 in the fixed case
(or every tile, when all are 1) gets the new extent, which never exceeds the smallest physical extent
among them; tiles with an extent of 1 keep it (one-row and one-column operands).  Only regions the
validator accepts outright are kept, so the expected result always comes from the reference executor
and every derived case is a positive case.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from ..model import Database
from ..tile import TileDesc
from ..validator import Report, validate
from .cases import Case, Tiles, legal

PATTERNS = ("random", "edge", "special")
MAX_REGION_TRIES = 8  # validator calls per fixed case spent on finding other legal regions
PATTERNS_PER_REGION = 2  # data sets per other region in the first pass (regions before more data)


@dataclass(frozen=True)
class Derived:
    """One derived case: a label (``v3x5-special``), the tiles, the data seed and pattern, and the
    validator's report on the tiles (legal)."""

    label: str
    tiles: Tiles
    seed: int
    pattern: str
    report: Report


def patterns_for(db: Database, op: str, profile: str | None = None) -> tuple[str, ...]:
    """The data patterns derived cases of ``op`` use (``ieee`` only on a ``profile`` whose numerics define
    the special values exactly)."""
    numerics = db.op(op).numerics
    return (PATTERNS + (("ties",) if numerics.ties == "first" else ())
            + (("ieee",) if profile is not None and profile in numerics.exact_specials else ()))


def _pairs(rows: int, cols: int) -> list[tuple[int, int]]:
    """Valid regions worth trying in tiles of ``rows x cols``, most telling first: full, one less than
    full, one row, one column, one element, about half (odd counts), then mixes."""
    def axis(n: int) -> list[int]:
        return list(dict.fromkeys(v for v in (n, n - 1, 1, n // 2 + 1, 3) if 1 <= v <= n))

    rs, cs = axis(rows), axis(cols)
    first = [(rows, cols), (rows - 1, cols - 1), (1, cols), (rows, 1), (1, 1), (rows // 2 + 1, cols // 2 + 1),
             (rows, cols - 1), (rows - 1, 3)]
    pairs = [p for p in first if p[0] in rs and p[1] in cs]
    return list(dict.fromkeys(pairs + [(r, c) for r in rs for c in cs]))


def _region_label(tiles: Tiles) -> str:
    first = next((t for t in tiles.values() if isinstance(t, TileDesc)), None)
    return f"v{first.valid_row}x{first.valid_col}" if first is not None else "v"


def _regions(tiles: Tiles) -> list[Tiles]:
    """Candidate re-shapings of the valid regions (physical shapes kept), in the order tried."""
    shaped = {n: t for n, t in tiles.items() if isinstance(t, TileDesc)}
    if not shaped:
        return []
    free_rows = [n for n, t in shaped.items() if t.valid_row != 1] or list(shaped)
    free_cols = [n for n, t in shaped.items() if t.valid_col != 1] or list(shaped)
    rows = min(shaped[n].rows for n in free_rows)
    cols = min(shaped[n].cols for n in free_cols)
    out = []
    for r, c in _pairs(rows, cols):
        changed = {**tiles}
        for n in free_rows:
            changed[n] = changed[n].with_(valid_row=r)
        for n in free_cols:
            changed[n] = changed[n].with_(valid_col=c)
        if any(changed[n] != tiles[n] for n in shaped):
            out.append(changed)
    return out


def derived_cases(db: Database, case: Case, tiles: Tiles, label: str, count: int) -> list[Derived]:
    """Up to ``count`` derived cases of the fixed positive ``case`` (parsed ``tiles``, test id ``label``)."""
    if case.reject or count <= 0:
        return []
    patterns = patterns_for(db, case.op, case.profile)
    out: list[Derived] = []
    names: set[str] = set()

    def add(region: Tiles, report: Report, pattern: str, round_: int = 1) -> None:
        name = f"{_region_label(region)}-{pattern}" + (f"-{round_}" if round_ > 1 else "")
        if len(out) < count and name not in names:
            names.add(name)
            out.append(Derived(name, region, zlib.crc32(f"{label}/{name}".encode()), pattern, report))

    own = validate(db, case.op, case.mode, case.profile, tiles)
    if not legal(own):
        return []
    names.add(f"{_region_label(tiles)}-{case.pattern}")  # the fixed case itself
    regions: list[tuple[Tiles, Report]] = [(tiles, own)]
    for pattern in patterns:
        add(tiles, own, pattern)
    tries = 0
    seen = {_region_label(tiles)}
    for region in _regions(tiles):
        if len(out) >= count or tries >= MAX_REGION_TRIES:
            break
        if _region_label(region) in seen:
            continue
        tries += 1
        report = validate(db, case.op, case.mode, case.profile, region)
        if not legal(report):
            continue
        seen.add(_region_label(region))
        regions.append((region, report))
        for k in range(PATTERNS_PER_REGION):
            add(region, report, patterns[(len(seen) + k) % len(patterns)])
    round_ = 1
    while len(out) < count:  # more data sets over the legal regions: the other patterns, then new seeds
        before = len(out)
        for region, report in regions:
            for pattern in patterns:
                add(region, report, pattern, round_)
        if len(out) == before and round_ > 1:
            break
        round_ += 1
    return out
