"""Seeded generators of hostile input for the hardening tests: mutated spec documents, expressions,
tile descriptors and assembly lines.  Deterministic for a given seed; no hypothesis needed."""

from __future__ import annotations

import copy
import random
from typing import Any

HOSTILE_SCALARS: list[Any] = [
    None, True, False, 0, -1, 1, 2**31, -(2**63), 2**64 + 1, 10**400, 1.5, -0.0, float("inf"), float("nan"), 1e308,
    "", " ", "\x00", "\n", "..", "../../../../tmp/x", "/etc/passwd", "a/b", "١٦", "é", "💥", "{{op}}", "{{nope}}",
    "{}", "{0}{1}", "%s", "\\", "'", '"', "x" * 3000, "f32", "vec", "RowMajor", "src.rows", "1 +", "((((", "a" * 70,
    "#pto.cmp<{}>", "float128", "object", "int0", "V8", "bfloat16", "profile", "tile.x", "__class__",
]
HOSTILE_CONTAINERS: list[Any] = [
    [], {}, [None], {"id": []}, [{"id": {}}], [{"id": "x"}, {"id": "x"}], {"en": 1, "zh": []}, [[[]]],
    {"a": {"b": {"c": {}}}}, [1, "two", 3.0], {"id": "x", "omit": True}, [{"omit": True}],
]
EXPR_TOKENS = [
    "src", "dst", "t", "profile", ".", "rows", "cols", "valid_row", "valid_col", "dtype", "loc", "layout", "fractal",
    "(", ")", "[", "]", ",", ":", "<", "<=", "==", "!=", ">", "+", "-", "*", "/", "//", "%", "**", "and", "or",
    "not", "in", "0", "1", "2", "32", "64", "1e308", "1e999", "99999999999999999999999", "0.5", "i", "j", "sum",
    "max", "argmax", "ceil_div", "bytes", "bits", "pow", "shl", "select", "convert", "x", "f32", "Vec", "RowMajor",
    "ND", "CAST_RINT", "block_bytes", "__import__", "١", "\x00", "for",
]


def mutate_data(data: Any, rng: random.Random, steps: int = 3) -> Any:
    """A deep copy of ``data`` with a few values replaced, removed or retyped."""
    out = copy.deepcopy(data)
    for _ in range(steps):
        paths = list(_paths(out))
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _parent(out, path)
        if parent is None:
            continue
        action = rng.random()
        if action < 0.45:
            parent[key] = _hostile_value(rng)
        elif action < 0.6 and isinstance(parent, dict):
            del parent[key]
        elif action < 0.7 and isinstance(parent, list) and parent:
            parent.pop(key)
        elif action < 0.8:
            parent[key] = copy.deepcopy(rng.choice([v for _, v in _paths(out, with_values=True)] or [None]))
        elif action < 0.9 and isinstance(parent, dict):
            parent[rng.choice(["..", "../x", "a/b", "bogus", "id", "omit", "1", "\x00"])] = _hostile_value(rng)
        else:
            parent[key] = _mutate_text(str(parent[key]), rng)
    return out


def _hostile_value(rng: random.Random) -> Any:
    if rng.random() < 0.7:
        return rng.choice(HOSTILE_SCALARS)
    return copy.deepcopy(rng.choice(HOSTILE_CONTAINERS))


def _paths(data: Any, prefix: tuple = (), with_values: bool = False):
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items:
        yield ((*prefix, k), v) if with_values else (*prefix, k)
        yield from _paths(v, (*prefix, k), with_values)


def _parent(data: Any, path: tuple):
    node = data
    for k in path[:-1]:
        node = node[k]
    return (node, path[-1]) if isinstance(node, dict | list) else (None, None)


def _mutate_text(text: str, rng: random.Random) -> str:
    if not text:
        return rng.choice(EXPR_TOKENS)
    pos = rng.randrange(len(text) + 1)
    action = rng.random()
    if action < 0.3:
        return text[:pos] + text[pos + 1:]
    if action < 0.6:
        return text[:pos] + rng.choice(EXPR_TOKENS) + text[pos:]
    if action < 0.75:
        return text[:pos] + text[pos:] * rng.randint(2, 5)
    if action < 0.9:
        return text[:pos]
    return text[:pos] + rng.choice(["\x00", "١٦", "é", "\n", "\t", "{", "}", "<", ">", ",", "=", "?", "%"]) + text[pos:]


def mutate_text(text: str, rng: random.Random, steps: int = 2) -> str:
    for _ in range(steps):
        text = _mutate_text(text, rng)
    return text


def random_expression(rng: random.Random, length: int = 12) -> str:
    return " ".join(rng.choice(EXPR_TOKENS) for _ in range(rng.randint(1, length)))


def deep_expressions() -> list[str]:
    """Expressions built to hit recursion, magnitude and allocation limits."""
    return [
        "(" * 500 + "1" + ")" * 500,
        "-" * 1500 + "1",
        "not " * 400 + "true",
        "+".join(["1"] * 900),
        " and ".join(["t.rows > 0"] * 150),
        "2 ** 2 ** 2 ** 2 ** 2 ** 2",
        "10 ** 100000",
        "2.0 ** 100000",
        "(-8.0) ** 0.5",
        "1 // 0", "1 % 0", "1.0 / 0", "ceil_div(1, 0)", "ceil_div(t.rows, 0)",
        "18446744073709551616 * 18446744073709551616",
        "9" * 1999,
        "1e999",
        "max(t, 1)", "t + 1", "-t", "-t.dtype", "bytes(1)", "pow(2, 100000)", "shl(1, 100000)", "select(1, 2)",
        "convert(1, f32, CAST_RINT, 1)", "compare(1, 2, 3)", "sum(i < 10: i)", "t[0, 0]", "t.bit[0, 0]",
        "f" * 1999 + "(1)",
        "x in [" + ", ".join(["1"] * 600) + "]",
        "a(" * 200 + ")" * 200,
        "sum(i < sum(j < sum(k < 1: k): j): i)" * 3,
        "t.rows <" + " t.rows <" * 3,
    ]


PROGRAM_NUMBERS = ["0", "-1", "1", "16", "65536", "99999999999999999999999", "-9223372036854775808", "0x10", "064",
                   "1e308", "3.5", "1" + "0" * 50]


def mutate_program(text: str, rng: random.Random, steps: int = 2) -> str:
    """A .pto text with a few lines changed: numbers swapped for hostile ones, %values swapped, lines deleted,
    duplicated or cut, braces dropped, characters inserted."""
    import re

    lines = text.split("\n")
    values = re.findall(r"%\w+", text) or ["%x"]
    for _ in range(steps):
        if not lines:
            break
        i = rng.randrange(len(lines))
        action = rng.random()
        if action < 0.3:
            lines[i] = re.sub(r"(?<![%\w])\d+", lambda m: rng.choice(PROGRAM_NUMBERS), lines[i])
        elif action < 0.45:
            lines[i] = re.sub(r"%\w+", lambda m: rng.choice(values) if rng.random() < 0.4 else m.group(0), lines[i])
        elif action < 0.55:
            del lines[i]
        elif action < 0.65:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif action < 0.7:
            lines = lines[:i]
        elif action < 0.8:
            lines[i] = lines[i].replace(rng.choice("{}()[]<>"), "", 1)
        else:
            lines[i] = _mutate_text(lines[i], rng)
    return "\n".join(lines)
