"""The mkdocs hooks of the site (``site/hooks/ptospec_math.py`` imports them).

- ``on_config``: headings of a language other than English get anchors that keep their own script
  (``#语义`` rather than mkdocs' default ``#_1``); English keeps its ASCII anchors.
- ``on_post_page``: the pages' maths placeholders become MathML, with the formulas' words in the page's
  language (see ``ptospec.docs.mathml``).
"""

from __future__ import annotations

from typing import Any

from .mathml import expand


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
    """mkdocs hook: MathML for the finished page's formulas, in the page's language."""
    return expand(output, _language(config) if config is not None else "en")
