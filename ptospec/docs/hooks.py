"""The mkdocs hooks of the site (``site/hooks/ptospec_math.py`` imports them).

- ``on_config``: headings of a language other than English get anchors that keep their own script
  (``#语义`` rather than mkdocs' default ``#_1``); English keeps its ASCII anchors.
- ``on_post_page``: the pages' maths placeholders become MathML, with the formulas' words in the page's
  language (see ``ptospec.docs.mathml``); each cell of a table of three or more columns is given its column's
  header (``data-label``), so that on a narrow screen the stylesheet can show each row as a card, every value
  under its header's name, instead of a table scrolled sideways.
"""

from __future__ import annotations

import re
from html import escape, unescape
from typing import Any

from .mathml import expand

_TABLE = re.compile(r"<table>(.*?)</table>", re.S)  # a Markdown table (the theme's own tables have a class)
_HEAD_CELL = re.compile(r"<th\b[^>]*>(.*?)</th>", re.S)
_ROW = re.compile(r"<tr>.*?</tr>", re.S)
_CELL = re.compile(r"<td(?=[\s>])")
_TAG = re.compile(r"<[^>]+>")
CARD_COLUMNS = 3  # a table of at least this many columns becomes cards on a narrow screen


def _labelled(match: re.Match[str]) -> str:
    body = match.group(1)
    head, _, rows = body.partition("</thead>")
    labels = [escape(" ".join(unescape(_TAG.sub("", h)).split())) for h in _HEAD_CELL.findall(head)]
    if len(labels) < CARD_COLUMNS or not rows:
        return match.group(0)

    def row(found: re.Match[str]) -> str:
        names = iter(labels)
        return _CELL.sub(lambda _: f'<td data-label="{next(names, "")}"', found.group(0))

    return f'<table data-cards="{len(labels)}">{head}</thead>{_ROW.sub(row, rows)}</table>'


def card_labels(html: str) -> str:
    """Every cell of a Markdown table of ``CARD_COLUMNS`` or more columns labelled with its column's header."""
    return _TABLE.sub(_labelled, html)


def _language(config: Any) -> str:
    try:
        return str(config["theme"]["language"] or "en")
    except (KeyError, TypeError):
        return "en"


def on_config(config: Any, **_: object) -> Any:
    if _language(config) != "en":
        from pymdownx.slugs import slugify

        config["mdx_configs"].setdefault("toc", {})["slugify"] = slugify(case="lower")
    return config


def on_post_page(output: str, *, config: Any = None, **_: object) -> str:
    """mkdocs hook: MathML for the finished page's formulas, in the page's language; table cells labelled."""
    return card_labels(expand(output, _language(config) if config is not None else "en"))
