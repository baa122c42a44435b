from __future__ import annotations

from pathlib import Path

import ml_dtypes
import pytest

from ptospec.errors import ExprError
from ptospec.expr.ast import Binary, Call, Reduce
from ptospec.expr.evaluate import Scope, evaluate
from ptospec.expr.parser import parse_expr, parse_statement
from ptospec.tile import TileDesc


def scope(db, **tiles):
    return Scope(isa=db.isa, tiles=tiles, profile_constants={"block_bytes": 32, "repeat_bytes": 256})


def test_precedence_and_values(db):
    s = scope(db, src=TileDesc("Vec", "f32", 16, 256, 16, 255))
    assert evaluate(parse_expr("1 + 2 * 3 - 4 / 2"), s) == 5
    assert evaluate(parse_expr("-7 / 2"), s) == -3  # C truncation for integers
    assert evaluate(parse_expr("7 // 2 + 7 % 4"), s) == 6
    assert evaluate(parse_expr("ceil_div(src.valid_col, profile.repeat_bytes / bytes(f32))"), s) == 4
    assert evaluate(parse_expr("src.valid_col != 0 and not src.loc == Mat"), s) is True
    assert evaluate(parse_expr("src.dtype in [f16, f32]"), s) is True
    assert evaluate(parse_expr("src.layout == ND"), s) is True
    assert evaluate(parse_expr("bits(src.dtype) == 32 or 1 / 0 == 0"), s) is True


def test_extreme_values_of_a_type(db):
    s = scope(db)
    assert evaluate(parse_expr("highest(f16)"), s) == float("inf")
    assert evaluate(parse_expr("max_finite(f16)"), s) == 65504.0  # the bound of a saturating conversion
    assert evaluate(parse_expr("max_finite(bf16)"), s) == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert evaluate(parse_expr("max_finite(i8)"), s) == 127 == evaluate(parse_expr("highest(i8)"), s)
    assert evaluate(parse_expr("lowest(u16)"), s) == 0


def test_reduction_and_statement_syntax():
    node = parse_expr("argmax(i < R: src[i, j])")
    assert isinstance(node, Reduce) and node.var == "i"
    stmt = parse_statement("dst[0, j] = min(i < R: src[i, j])  for j < C")
    assert stmt.domain[0][0] == "j"
    assert isinstance(parse_expr("max(a, b)"), Call)
    assert isinstance(parse_expr("a ** b ** c"), Binary)


@pytest.mark.parametrize("text, fragment", [
    ("1 +", "expected a value"),
    ("a < b < c", "chained"),
    ("src.", "expected a name"),
    ("f(x", "expected"),
    ("a $ b", "unexpected character"),
    ("", "expected a value"),
    ("a b", "unexpected text"),
])
def test_syntax_errors_name_the_column(text, fragment):
    with pytest.raises(ExprError, match=fragment):
        parse_expr(text)


HOSTILE = [
    "__import__('os').system('touch /tmp/ptospec-pwned')",
    "open('/tmp/ptospec-pwned', 'w')",
    "().__class__.__bases__[0].__subclasses__()",
    "src.__class__",
    "eval('1')",
    "lambda: 1",
    "[x for x in range(10)]",
    "exec('import os')",
    "src.field('rows')",
    "globals()",
    "(" * 500 + "1" + ")" * 500,
    "1" + " + 1" * 3000,
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_input_never_executes(db, text):
    marker = Path("/tmp/ptospec-pwned")
    marker.unlink(missing_ok=True)
    s = scope(db, src=TileDesc("Vec", "f32", 16, 16, 16, 16))
    with pytest.raises(ExprError):
        evaluate(parse_expr(text), s)
    assert not marker.exists()


def test_unknown_names_and_fields(db):
    s = scope(db, src=TileDesc("Vec", "f32", 16, 16, 16, 16))
    with pytest.raises(ExprError, match="unknown name"):
        evaluate(parse_expr("nonsense + 1"), s)
    with pytest.raises(ExprError, match="no field"):
        evaluate(parse_expr("src.data"), s)
    with pytest.raises(ExprError, match="unknown function"):
        evaluate(parse_expr("system(1)"), s)
    with pytest.raises(ExprError, match="division by zero"):
        evaluate(parse_expr("src.rows / 0"), s)


def test_a_side_known_alone_decides_and_and_or(db):
    """Kleene logic over values known only at run time (a dynamic valid row): a false side makes ``and`` false and
    a true side makes ``or`` true, so a check fails at check time although another of its terms is deferred."""
    from ptospec.errors import UnknownValue

    s = scope(db, src=TileDesc("Vec", "f32", 16, 256, None, 255))
    with pytest.raises(UnknownValue):
        evaluate(parse_expr("src.valid_row > 0"), s)
    assert evaluate(parse_expr("src.valid_row > 0 and src.cols == 1"), s) is False
    assert evaluate(parse_expr("src.cols == 1 and src.valid_row > 0"), s) is False
    assert evaluate(parse_expr("src.valid_row > 0 or src.cols == 256"), s) is True
    for text in ("src.valid_row > 0 and src.cols == 256", "src.cols == 256 and src.valid_row > 0",
                 "src.valid_row > 0 or src.cols == 1"):
        with pytest.raises(UnknownValue):
            evaluate(parse_expr(text), s)
