"""LaTeX -> MathML at build time, so pages need no script and no network to show maths.

Pages carry a placeholder per formula (``<ptospec-math data-tex="...">``, the LaTeX base64-encoded,
one inline tag that Markdown passes through untouched and cheaply); the mkdocs hook ``on_post_page``
(``site/hooks/ptospec_math.py`` imports it) replaces each with MathML in the finished page, after
the search index has been built from the lighter placeholder text.
"""

from __future__ import annotations

import base64
import re
from functools import cache

from ..errors import PtospecError

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


def expand(html: str) -> str:
    """Every placeholder replaced by its MathML."""
    return PLACEHOLDER.sub(lambda m: mathml(base64.b64decode(m.group(1)).decode(), bool(m.group(2))), html)


def on_post_page(output: str, **_: object) -> str:
    """mkdocs hook: MathML for the finished page's formulas."""
    return expand(output)
