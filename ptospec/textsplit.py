"""Splitting text at its top-level commas, the one way every reader of the database does it."""
from __future__ import annotations

_CLOSERS = {"(": ")", "[": "]", "<": ">", "{": "}"}


def split_top_level(text: str, openers: str) -> list[str]:
    """The stripped parts of ``text`` between commas that no bracket of ``openers`` (and its closer) encloses.

    Always at least one part: ``""`` gives ``[""]``; callers drop empty parts where they mean nothing.
    """
    closers = "".join(_CLOSERS[o] for o in openers)
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in openers:
            depth += 1
        elif ch in closers:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts
