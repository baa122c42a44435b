"""LaTeX -> MathML at build time, so pages need no script and no network to show maths.

Pages carry a placeholder per formula (``<ptospec-math data-tex="...">``, the LaTeX base64-encoded,
one inline tag that Markdown passes through untouched and cheaply); the mkdocs hook ``on_post_page``
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

PLACEHOLDER = re.compile(r'<ptospec-math data-tex="([A-Za-z0-9+/=]*)"( data-block="1")?></ptospec-math>')


@cache
def mathml(latex: str, block: bool = False) -> str:
    try:
        from latex2mathml.converter import convert
    except ImportError:  # pragma: no cover - depends on the environment
        raise PtospecError("the docs need latex2mathml: pip install -e '.[docs]'", rule="docs.deps") from None
    return convert(latex, display="block" if block else "inline").replace("\n", "")


def math_inline(latex: str) -> str:
    """An inline formula (placeholder, expanded to MathML by ``expand``)."""
    return f'<ptospec-math data-tex="{base64.b64encode(latex.encode()).decode()}"></ptospec-math>'


def math_block(latex: str) -> str:
    """A display equation as a raw-HTML block in its own scroll box."""
    tex = base64.b64encode(latex.encode()).decode()
    return f'<div class="ptospec-math"><ptospec-math data-tex="{tex}" data-block="1"></ptospec-math></div>'


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


def expand(html: str, lang: str = "en") -> str:
    """Every placeholder replaced by its MathML, its words in ``lang``."""
    return PLACEHOLDER.sub(
        lambda m: mathml(localize(base64.b64decode(m.group(1)).decode(), lang), bool(m.group(2))), html)


def on_post_page(output: str, **_: object) -> str:
    """mkdocs hook (English): MathML for the finished page's formulas (``hooks.on_post_page`` knows the
    page's language)."""
    return expand(output)
