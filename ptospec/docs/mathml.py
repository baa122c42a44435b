"""LaTeX -> MathML at build time, so pages need no script and no network to show maths.

Pages carry a placeholder per formula (``<ptospec-math data-tex="...">``, the LaTeX base64-encoded,
one inline tag that Markdown passes through untouched and cheaply; a formula laid out again for phones carries
that layout too, ``data-narrow``); the mkdocs hook ``on_post_page``
(``ptospec.docs.hooks``, which ``site/hooks/ptospec_math.py`` imports) replaces each with MathML in the
finished page, after
the search index has been built from the lighter placeholder text.
"""

from __future__ import annotations

import base64
import re
from functools import cache

from ..errors import PtospecError
from ..expr.latex import WORDS
from .labels import label

PLACEHOLDER = re.compile(r'<ptospec-math data-tex="([A-Za-z0-9+/=]*)"( data-block="1")?'
                         r'(?: data-narrow="([A-Za-z0-9+/=]*)")?></ptospec-math>')


@cache
def mathml(latex: str, block: bool = False) -> str:
    try:
        from latex2mathml.converter import convert
    except ImportError:  # pragma: no cover - depends on the environment
        raise PtospecError("the docs need latex2mathml: pip install -e '.[docs]'", rule="docs.deps") from None
    return convert(latex, display="block" if block else "inline").replace("\n", "")


def _b64(latex: str) -> str:
    return base64.b64encode(latex.encode()).decode()


def _narrow(latex: str, narrow: str | None) -> str:
    """The ``data-narrow`` attribute: the formula's layout for narrow screens, when it differs."""
    return f' data-narrow="{_b64(narrow)}"' if narrow is not None and narrow != latex else ""


def math_inline(latex: str, narrow: str | None = None) -> str:
    """An inline formula (placeholder, expanded to MathML by ``expand``); ``narrow``: its layout for narrow
    screens (the stylesheet shows one of the two)."""
    return f'<ptospec-math data-tex="{_b64(latex)}"{_narrow(latex, narrow)}></ptospec-math>'


def math_block(latex: str, narrow: str | None = None) -> str:
    """A display equation as a raw-HTML block in its own scroll box (``narrow``: as for ``math_inline``)."""
    return (f'<div class="ptospec-math"><ptospec-math data-tex="{_b64(latex)}" data-block="1"'
            f'{_narrow(latex, narrow)}></ptospec-math></div>')


@cache
def _words(lang: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Per word of the formulas (``WORDS``): the English ``\\text{...}`` as a pattern, and its replacement in
    ``lang`` (the label ``math_<key>``; ``{}`` stands for a value, kept)."""
    out = []
    for key, english in WORDS.items():
        pattern = re.escape(r"\text{" + english + "}").replace(re.escape("{}"), "(.+?)")
        out.append((re.compile(pattern), label(f"math_{key}", lang)))
    return tuple(out)


def localize(latex: str, lang: str) -> str:
    """A formula with its words (otherwise, if, where, ...) in ``lang``."""
    if lang == "en":
        return latex
    for pattern, words in _words(lang):
        latex = pattern.sub(lambda m, w=words: r"\text{" + w.replace("{}", m.group(1) if m.groups() else "") + "}",
                            latex)
    return latex


def _expanded(m: re.Match[str], lang: str) -> str:
    block = bool(m.group(2))
    wide = mathml(localize(base64.b64decode(m.group(1)).decode(), lang), block)
    if not m.group(3):
        return wide
    narrow = mathml(localize(base64.b64decode(m.group(3)).decode(), lang), block)
    return wide.replace("<math ", '<math class="pm-wide" ', 1) + narrow.replace("<math ", '<math class="pm-narrow" ', 1)


def expand(html: str, lang: str = "en") -> str:
    """Every placeholder replaced by its MathML, its words in ``lang``; a formula with a narrow layout becomes
    two (``pm-wide``, ``pm-narrow``), of which the stylesheet shows one."""
    return PLACEHOLDER.sub(lambda m: _expanded(m, lang), html)


def on_post_page(output: str, **_: object) -> str:
    """mkdocs hook (English): MathML for the finished page's formulas (``hooks.on_post_page`` knows the
    page's language)."""
    return expand(output)
