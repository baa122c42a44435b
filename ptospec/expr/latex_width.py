"""A rough width, in em of the maths font, of LaTeX as the site renders it (MathML in Chromium with DejaVu Math
TeX Gyre), so that long formulas can be broken into lines before they are rendered. Measured against the
browser on the site's formulas it is within about 15 % either way (``latex_width``)."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|[{}_^&]|\s+|.", re.S)
_SYMBOL_EM = {
    r"\land": 1.3, r"\lor": 1.3, r"\le": 1.3, r"\ge": 1.3, r"\ne": 1.3, r"\in": 1.2, r"\to": 1.3,
    r"\gg": 1.5, r"\ll": 1.5, r"\oplus": 1.3, r"\cdot": 0.8, r"\bmod": 2.3, r"\neg": 0.8, r"\lnot": 0.8,
    r"\quad": 1.0, r"\qquad": 2.0, "\\ ": 0.3, "\\,": 0.2, "\\;": 0.3, r"\{": 0.5, r"\}": 0.5,
    r"\lceil": 0.45, r"\rceil": 0.45, r"\lfloor": 0.45, r"\rfloor": 0.45, r"\lvert": 0.3, r"\rvert": 0.3,
    r"\sum": 1.2, r"\prod": 1.2, r"\sqrt": 1.0,
}
_CHAR_EM = {"=": 1.3, "<": 1.3, ">": 1.3, "+": 1.3, "-": 1.3, ",": 0.45, ";": 0.45, ".": 0.3, "(": 0.4,
            ")": 0.4, "[": 0.3, "]": 0.3, "|": 0.3, "'": 0.3}
_WORD_COMMANDS = {r"\mathrm", r"\text", r"\operatorname", r"\operatorname*", r"\mathbin", r"\mathrel"}


def latex_width(latex: str) -> float:
    """A rough width, in em, of LaTeX as the site renders it (for deciding where to break lines)."""
    return _Widths(_TOKEN.findall(latex)).sequence(end=None)


class _Widths:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def _next(self) -> str:
        token = self.tokens[self.at] if self.at < len(self.tokens) else "}"
        self.at += 1
        return token

    def argument(self) -> float:
        while self.at < len(self.tokens) and self.tokens[self.at].isspace():
            self.at += 1
        token = self._next()
        return self.sequence(end="}") if token == "{" else self.symbol(token)

    def name(self) -> str:
        """The ``{name}`` after ``\\begin`` or ``\\end``."""
        start = self.at
        depth = 0
        while self.at < len(self.tokens):
            token = self._next()
            depth += {"{": 1, "}": -1}.get(token, 0)
            if depth == 0:
                break
        return "".join(self.tokens[start:self.at]).strip("{}")

    def symbol(self, token: str) -> float:
        if token.isspace():
            return 0.0
        if token in _SYMBOL_EM:
            return _SYMBOL_EM[token]
        if token.startswith("\\"):
            word = token[1:]
            return 0.5 * len(word) + 0.2 if word in ("max", "min", "ln", "log", "exp") else 0.9
        return _CHAR_EM.get(token, 0.56)

    def sequence(self, end: str | None) -> float:
        """The width of tokens up to ``end`` (``}``, ``\\end`` or the end): rows (``\\\\``) of cells (``&``)."""
        rows = [[0.0]]
        while self.at < len(self.tokens):
            token = self._next()
            if token == end:
                if end == r"\end":
                    self.name()
                break
            cell = rows[-1]
            if token == "{":
                cell[-1] += self.sequence(end="}")
            elif token in ("_", "^"):
                cell[-1] += 0.8 * self.argument()
            elif token == "&":
                cell.append(0.0)
            elif token == "\\\\":
                rows.append([0.0])
            elif token == r"\begin":
                env = self.name()
                if env == "array":
                    self.name()  # the column spec
                cell[-1] += self.sequence(end=r"\end") + (1.0 if env == "cases" else 0.0)
            elif token == r"\frac":
                cell[-1] += 0.85 * max(self.argument(), self.argument()) + 0.2
            elif token in _WORD_COMMANDS:
                cell[-1] += self.argument()
            elif token in (r"\left", r"\right"):
                self._next()  # the delimiter
                cell[-1] += 0.4
            else:
                cell[-1] += self.symbol(token)
        columns = max(len(r) for r in rows)  # an array's columns are as wide as their widest cell
        return sum(max(r[c] if c < len(r) else 0.0 for r in rows) for c in range(columns)) + 1.0 * (columns - 1)
