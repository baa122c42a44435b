"""LaTeX -> MathML at generation time, so pages need no script and no network to show maths."""

from __future__ import annotations

from functools import cache

from ..errors import PtospecError


@cache
def mathml(latex: str, block: bool = False) -> str:
    try:
        from latex2mathml.converter import convert
    except ImportError:  # pragma: no cover - depends on the environment
        raise PtospecError("the docs need latex2mathml: pip install -e '.[docs]'", rule="docs.deps") from None
    return convert(latex, display="block" if block else "inline").replace("\n", "")


def math_block(latex: str) -> str:
    """A display equation as a raw-HTML block (kept verbatim by Markdown)."""
    return f'<div class="ptospec-math">{mathml(latex, block=True)}</div>'
