"""The functions and reductions the expression language knows.

This table is the language's whole vocabulary of calls: the parser accepts any
name, lint rejects names that are not here, and both evaluators and the LaTeX
renderer look them up here.  Adding a function is one entry, never a branch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from ..lazymodule import LazyModule

# NumPy at the first call that needs it: checks that evaluate integers and dtypes (``ptospec check``) never do
np = LazyModule("numpy", globals(), "np")


def c_div(a, b):
    """C semantics: truncating division for integers, true division for floats.

    Integers: the floor quotient corrected toward zero, never ``abs()`` (which
    overflows for the most negative value); a quotient that does not fit wraps.
    Integer division by zero yields 0 here; specs state what hardware does.
    """
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return 0
        q = a // b
        return q + 1 if q < 0 and q * b != a else q
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if np.issubdtype(a_arr.dtype, np.integer) and np.issubdtype(b_arr.dtype, np.integer):
        dtype = np.result_type(a_arr, b_arr)
        a_arr, b_arr = a_arr.astype(dtype, copy=False), b_arr.astype(dtype, copy=False)
        safe = np.where(b_arr == 0, np.ones_like(b_arr), b_arr)
        with np.errstate(over="ignore", divide="ignore"):
            q = np.floor_divide(a_arr, safe)
            inexact = (q * safe) != a_arr
        negative = (a_arr < 0) != (safe < 0)
        q = np.where(inexact & negative, q + np.ones_like(q), q)
        return np.where(b_arr == 0, np.zeros_like(q), q).astype(dtype, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b)


def c_mod(a, b):
    """C semantics remainder: the result takes the sign of the dividend."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b)


def ceil_div(a, b):
    return -((-a) // b)


def inside(tile, i, j):
    """Where (i, j) lies in the tile's valid region."""
    rows, cols = tile.valid_shape
    i, j = np.asarray(i), np.asarray(j)
    return (i >= 0) & (j >= 0) & (i < rows) & (j < cols)


def select(cond, a, b):
    return np.where(cond, a, b)


def _rsqrt(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(1, dtype=np.asarray(x).dtype) / np.sqrt(x)


def _recip(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(1, dtype=np.asarray(x).dtype) / np.asarray(x)


def _log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x)


def _sqrt(x):
    with np.errstate(invalid="ignore"):
        return np.sqrt(x)


def _exp(x):
    with np.errstate(over="ignore"):
        return np.exp(x)


def bitcast(x, dtype):
    """The bits of ``x`` read as ``dtype``: an integer keeps its low ``bits(dtype)`` bits (two's complement), a
    value of ``dtype``'s width is reinterpreted as it is."""
    arr, target = np.asarray(x), np.dtype(dtype)
    if arr.dtype.kind in "iub":
        return arr.astype(np.dtype(f"u{target.itemsize}")).view(target)
    if arr.dtype.itemsize == target.itemsize:
        return arr.view(target)
    raise TypeError(f"cannot reinterpret {arr.dtype} as {target}")


def floor_mod(a, b):
    """Remainder with the sign of the divisor (Python/NumPy ``%``); x % 0 is NaN for floats, 0 for integers."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mod(a, b)


def _pow(a, b):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.power(a, b)


def _numpy(name: str) -> Callable:
    """NumPy's function ``name``, looked up when called."""

    def call(*args, **kwargs):
        return getattr(np, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _shift(op: str):
    """Shift whose count is taken as a plain integer; counts outside [0, bits) give 0 (NumPy's rule)."""

    def shift(a, b):
        a_arr = np.asarray(a)
        return getattr(np, op)(a_arr, np.asarray(b).astype(a_arr.dtype, copy=False))

    return shift


_RELATIONS = {"EQ": "equal", "NE": "not_equal", "LT": "less", "LE": "less_equal", "GT": "greater",
              "GE": "greater_equal"}  # NumPy's functions


def compare(a, b, relation):
    """IEEE comparison under a CmpMode value (any comparison with NaN is false, except NE)."""
    return getattr(np, _RELATIONS[str(relation)])(a, b)


def _round_integral(x: np.ndarray, mode: str) -> np.ndarray:
    """Round float64 values to integers under a RoundMode (CAST_NONE truncates, as a C cast does)."""
    if mode == "CAST_RINT":
        return np.rint(x)
    if mode == "CAST_ROUND":
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    if mode == "CAST_FLOOR":
        return np.floor(x)
    if mode == "CAST_CEIL":
        return np.ceil(x)
    if mode == "CAST_ODD":  # nearest, ties to the odd neighbour
        low = np.floor(x)
        frac = x - low
        odd_low = np.fmod(np.abs(low), 2) == 1
        return np.where(frac > 0.5, low + 1, np.where(frac < 0.5, low, np.where(odd_low, low, low + 1)))
    return np.trunc(x)


def convert(x, dtype, mode, saturate):
    """Convert ``x`` to ``dtype`` (a NumPy dtype) under a RoundMode, clamping when ``saturate`` holds.

    Integer targets: float sources are rounded by ``mode``; out-of-range values clamp (saturate) or
    keep the low bits of the integer (wrap); NaN becomes 0.  Float targets: round to nearest even.
    """
    x = np.asarray(x)
    target = np.dtype(dtype)
    saturate = bool(np.all(saturate == "ON")) if isinstance(saturate, str | np.str_) else bool(np.all(saturate))
    if target.kind not in "iu":
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(target)
    info = np.iinfo(target)
    if x.dtype.kind in "iu":
        if saturate:
            src = np.iinfo(x.dtype)
            lo, hi = max(int(src.min), int(info.min)), min(int(src.max), int(info.max))
            x = np.clip(x, np.array(lo).astype(x.dtype), np.array(hi).astype(x.dtype))
        return x.astype(target)
    with np.errstate(invalid="ignore", over="ignore"):
        v = _round_integral(x.astype(np.float64), str(mode))
        v = np.where(np.isnan(v), 0.0, v)
        if saturate:
            inside = np.where((v > info.min) & (v < info.max), v, 0).astype(target)
            clamped = np.where(v <= float(info.min), info.min, inside)
            return np.where(v >= float(info.max), info.max, clamped).astype(target)
        span = 2.0 ** (8 * target.itemsize)
        w = np.fmod(np.where(np.isfinite(v), v, 0.0), span)
        w = np.where(w < 0, w + span, w)
        return w.astype(np.uint64).astype(target)


@cache
def _philox_constants():
    """The 32-bit word mask, the round multipliers and the key steps, as uint64."""
    return (np.uint64(0xFFFFFFFF), (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)),
            (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)))


def _word(x) -> np.ndarray:
    """The low 32 bits of an integer value of any width or signedness, as uint64."""
    return np.asarray(x).astype(np.int64).astype(np.uint64) & _philox_constants()[0]


MAX_PHILOX_ROUNDS = 64  # rounds philox() runs at most (Philox-4x32 uses 7 or 10)


def philox(rounds, key0, key1, c0, c1, c2, c3, offset, word):
    """Word ``word`` (0..3) of the Philox-4x32 block for the 128-bit counter (c3:c2:c1:c0) + ``offset``
    under the 64-bit key (key1:key0), after ``rounds`` rounds; every argument an integer or integer array.
    Counter words and key are taken modulo 2^32; the result is uint32."""
    _WORD, _PHILOX_MUL, _PHILOX_KEY_STEP = _philox_constants()
    counter = [_word(c) for c in (c0, c1, c2, c3)]
    carry = np.asarray(offset).astype(np.uint64)
    for k in range(4):  # 128-bit addition, least significant word first
        total_low = (counter[k] + (carry & _WORD))
        counter[k] = total_low & _WORD
        carry = (carry >> np.uint64(32)) + (total_low >> np.uint64(32))
    key = [_word(key0), _word(key1)]
    rounds_n = int(np.asarray(rounds).reshape(-1)[0])
    if not 0 <= rounds_n <= MAX_PHILOX_ROUNDS:
        raise ValueError(f"philox() runs 0 to {MAX_PHILOX_ROUNDS} rounds, not {rounds_n}")
    with np.errstate(over="ignore"):
        for _ in range(rounds_n):
            product0 = counter[0] * _PHILOX_MUL[0]
            product1 = counter[2] * _PHILOX_MUL[1]
            counter = [(product1 >> np.uint64(32)) ^ counter[1] ^ key[0], product1 & _WORD,
                       (product0 >> np.uint64(32)) ^ counter[3] ^ key[1], product0 & _WORD]
            key = [(key[0] + _PHILOX_KEY_STEP[0]) & _WORD, (key[1] + _PHILOX_KEY_STEP[1]) & _WORD]
    counter = np.broadcast_arrays(*counter, np.asarray(word))
    stacked, which = np.stack(counter[:4]), counter[4].astype(np.int64)
    return np.take_along_axis(stacked, (which % 4)[None], axis=0)[0].astype(np.uint32)


def mx_exponent(x, emax):
    """The E8M0 shared exponent of a group whose largest magnitude is ``x`` (as float32): the biased float32
    exponent of ``x`` minus ``emax`` (the largest exponent of the element format: 8 for e4m3, 2 for e2m1),
    0 when that is not positive, 255 (NaN) for NaN."""
    bits = np.asarray(x).astype(np.float32).view(np.uint32).astype(np.int64)
    exponent = (bits >> 23) & 0xFF
    nan = (exponent == 0xFF) & ((bits & 0x7FFFFF) != 0)
    shared = np.where(exponent <= np.asarray(emax), 0, exponent - np.asarray(emax))
    return np.where(nan, 0xFF, shared).astype(np.uint8)


def mx_exponent_nv(x, vmax):
    """The E8M0 exponent of the NV scale algorithm: the float32 exponent field of m * (1/vmax) (both
    float32; vmax 448 for e4m3, 6 for e2m1), plus 1 when the mantissa is not zero (except at field 254 and
    for subnormals up to half the range); 0 for m = 0, 254 for infinity, 255 for NaN."""
    m = np.asarray(x).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        descale = (m * (np.float32(1) / np.asarray(vmax).astype(np.float32))).astype(np.float32)
    bits = descale.view(np.uint32).astype(np.int64)
    exponent, mantissa = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
    shared = np.where(exponent == 0xFF, np.where(mantissa == 0, 0xFE, 0xFF), exponent + up)
    return np.where(m == 0, 0, shared).astype(np.uint8)


def mx_scaling(e):
    """The float32 factor 2^(127 - e) a group with E8M0 exponent ``e`` is multiplied by (2^-127 for e = 254,
    NaN for e = 255)."""
    e = np.asarray(e).astype(np.int64)
    field = np.clip(254 - e, 0, 255).astype(np.uint32) << np.uint32(23)
    scaling = field.view(np.float32) if field.ndim else np.array(field).view(np.float32)
    scaling = np.where(e == 254, np.float32(2.0 ** -127), scaling)
    return np.where(e == 255, np.float32(np.nan), scaling).astype(np.float32)


def e4m3_code(x, nv):
    """The e4m3 (float8_e4m3fn) code of ``x`` as uint8: clamped to [-448, 448], rounded to nearest with ties
    to even, NaN as 0x7F. A zero result is +0 (0x00) whatever its sign, except under the NV algorithm
    (``nv`` true) for |x| < 2^-10, which keeps the sign of x."""
    import ml_dtypes

    v = np.clip(np.asarray(x).astype(np.float32), np.float32(-448), np.float32(448))
    code = v.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    signed_zero = np.asarray(nv, dtype=bool) & (np.abs(v) < np.float32(2.0 ** -10))
    code = np.where((code == 0x80) & ~signed_zero, np.uint8(0), code)
    return np.where(np.isnan(v), np.uint8(0x7F), code).astype(np.uint8)


def e2m1_code(x):
    """The 4-bit e2m1 code (float4_e2m1fn, through ml_dtypes) of float32 ``x`` as uint8: clamped to [-6, 6],
    rounded to nearest with ties to even, the sign kept (-0 is 0x8), NaN as 0x7. This is what the
    simulator's magic-number encoder computes (adding a float32 constant whose ulp is the code step)."""
    import ml_dtypes

    v = np.clip(np.asarray(x).astype(np.float32), np.float32(-6), np.float32(6))
    code = v.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    return np.where(np.isnan(v), np.uint8(0x7), code).astype(np.uint8)


def bf16_trunc(x):
    """float32 ``x`` truncated to bfloat16 precision (the low 16 bits of its encoding cleared), as float32."""
    v = np.asarray(x).astype(np.float32)
    bits = v.view(np.uint32) if v.ndim else np.array(v).view(np.uint32)
    return (bits & np.uint32(0xFFFF0000)).view(np.float32)


@dataclass(frozen=True)
class Function:
    name: str
    arity: int
    impl: Callable
    latex: str  # template with {0}, {1}, ... for the rendered arguments
    doc: str
    type_level: bool = False  # takes dtypes, only meaningful in checks
    tile_args: tuple[int, ...] = ()  # argument positions that name a tile operand (passed as its descriptor)
    dtype_args: tuple[int, ...] = ()  # argument positions that name a dtype of the database (cast(x, T))
    # argument positions that must be an integer literal, with its bounds (philox's rounds: a loop count)
    literal_args: tuple[tuple[int, int, int], ...] = ()
    dtype_field: str = ""  # a type-level function that is one field of its dtype (bytes, bits, ...)
    # the same function on Python ints below 2**63 in magnitude (the last one not zero), without NumPy:
    # what checks evaluate millions of times in a case search
    on_ints: Callable | None = None


@dataclass(frozen=True)
class Reduction:
    name: str
    latex: str  # operator, e.g. \max or \operatorname{argmax}
    doc: str
    returns_index: bool = False


FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in [
        Function("min", 2, _numpy("minimum"), r"\min({0}, {1})", "smaller of two values (NaN propagates)", on_ints=min),
        Function("max", 2, _numpy("maximum"), r"\max({0}, {1})", "larger of two values (NaN propagates)", on_ints=max),
        Function("abs", 1, _numpy("abs"), r"\lvert {0} \rvert", "absolute value"),
        Function("exp", 1, _exp, r"e^{{{0}}}", "natural exponential"),
        Function("log", 1, _log, r"\ln {0}", "natural logarithm"),
        Function("sqrt", 1, _sqrt, r"\sqrt{{{0}}}", "square root"),
        Function("rsqrt", 1, _rsqrt, r"\frac{{1}}{{\sqrt{{{0}}}}}", "reciprocal square root"),
        Function("recip", 1, _recip, r"\frac{{1}}{{{0}}}", "reciprocal"),
        Function("select", 3, select, r"\begin{{cases}}{1} & {0} \\ {2} & \text{{otherwise}}\end{{cases}}",
                 "select(cond, a, b): a where cond holds, else b"),
        Function("fmod", 2, c_mod, r"\operatorname{{fmod}}({0}, {1})", "C remainder, sign of the dividend"),
        Function("floor_mod", 2, floor_mod, r"{0} \bmod {1}",
                 "remainder with the sign of the divisor (floor division)"),
        Function("pow", 2, _pow, r"{{{0}}}^{{{1}}}", "power"),
        Function("band", 2, _numpy("bitwise_and"), r"{0} \mathbin{{\&}} {1}", "bitwise and"),
        Function("bor", 2, _numpy("bitwise_or"), r"{0} \mathbin{{|}} {1}", "bitwise or"),
        Function("bxor", 2, _numpy("bitwise_xor"), r"{0} \oplus {1}", "bitwise exclusive or"),
        Function("bnot", 1, _numpy("invert"), r"\lnot {0}", "bitwise complement"),
        Function("shl", 2, _shift("left_shift"), r"{0} \ll {1}", "shift left, filling with zeros"),
        Function("shr", 2, _shift("right_shift"), r"{0} \gg {1}",
                 "shift right: arithmetic for signed types, logical for unsigned"),
        Function("compare", 3, compare, r"{0} \mathrel{{\mathrm{{cmp}}_{{{2}}}}} {1}",
                 "compare(a, b, mode): a EQ|NE|LT|LE|GT|GE b for a CmpMode value"),
        Function("convert", 4, convert, r"\operatorname{{cvt}}_{{{2}}}({0} \to {1})",
                 "convert(x, U, rmode, saturate): x as type U, rounded by rmode, clamped when saturate holds",
                 dtype_args=(1,)),
        Function("cast", 2, lambda x, t: np.asarray(x).astype(np.dtype(t)), r"\operatorname{{{1}}}({0})",
                 "cast(x, T): x as type T (NumPy's conversion; the products of a matrix multiply, exact in the "
                 "accumulator's type)", dtype_args=(1,)),
        Function("inside", 3, inside, r"({1}, {2}) \in \operatorname{{valid}}({0})",
                 "inside(t, i, j): position (i, j) lies in tile operand t's valid region (the partial operations)",
                 tile_args=(0,)),
        Function("philox", 9, philox,
                 r"\operatorname{{philox}}_{{{0}}}({1}, {2};\ {3}, {4}, {5}, {6} + {7})_{{{8}}}",
                 "philox(rounds, key0, key1, c0, c1, c2, c3, n, w): word w of the Philox-4x32 block of the "
                 "128-bit counter (c3:c2:c1:c0) + n under the key (key1:key0), as u32",
                 literal_args=((0, 0, MAX_PHILOX_ROUNDS),)),
        Function("mx_exponent", 2, mx_exponent, r"\operatorname{{e8m0}}_{{{1}}}({0})",
                 "mx_exponent(m, emax): E8M0 shared exponent of a group whose largest magnitude is m (float32 "
                 "exponent field minus emax, at least 0; 255 for NaN)"),
        Function("mx_scaling", 1, mx_scaling, r"2^{{127 - {0}}}",
                 "mx_scaling(e): the float32 factor 2^(127 - e) of E8M0 exponent e (2^-127 for 254, NaN for 255)"),
        Function("mx_exponent_nv", 2, mx_exponent_nv, r"\operatorname{{e8m0}}^{{\mathrm{{NV}}}}_{{{1}}}({0})",
                 "mx_exponent_nv(m, vmax): E8M0 exponent of the NV algorithm (exponent of m/vmax, rounded up)"),
        Function("e4m3_code", 2, e4m3_code, r"\operatorname{{e4m3}}({0})",
                 "e4m3_code(x, nv): the float8 e4m3fn code of x as u8, clamped to +-448, ties to even, a zero "
                 "as +0 (nv: below 2^-10 the zero keeps x's sign)"),
        Function("e2m1_code", 1, e2m1_code, r"\operatorname{{e2m1}}({0})",
                 "e2m1_code(x): the 4-bit float4 e2m1 code of x as u8 (sign in bit 3; nearest of 0, 0.5, 1, 1.5, 2, "
                 "3, 4, 6 with ties to even, saturating at 6; -0 keeps its sign; NaN as 0x7)"),
        Function("bf16_trunc", 1, bf16_trunc, r"\operatorname{{trunc}}_{{\mathrm{{bf16}}}}({0})",
                 "bf16_trunc(x): x truncated to bfloat16 precision (low 16 bits of the float32 cleared)"),
        Function("bitcast", 2, bitcast, r"\operatorname{{bitcast}}_{{{1}}}({0})",
                 "bitcast(x, U): the bits of x read as type U (an integer keeps its low bits(U) bits)",
                 dtype_args=(1,)),
        Function("ceil_div", 2, ceil_div, r"\left\lceil \frac{{{0}}}{{{1}}} \right\rceil",
                 "integer division rounding up", on_ints=ceil_div),
        Function("wide", 1,
                 lambda x: np.asarray(x).astype({"u": np.uint64, "i": np.int64, "b": np.int64}.get(
                     np.asarray(x).dtype.kind, np.float64)),
                 r"{0}",
                 "x widened to 64 bits (float64 for floating types, int64/uint64 for integers): a sum or product "
                 "over widened values rounds or wraps once, when the result is stored in the destination type"),
        Function("index", 1, lambda x: np.asarray(x).astype(np.int64), r"{0}",
                 "x as a signed 64-bit integer, for index arithmetic on an index operand of any integer type "
                 "(a u64 value of 2**63 or more becomes negative, i.e. out of range)"),
        Function("bytes", 1, lambda t: t, r"\operatorname{{sizeof}}({0})", "size of a dtype in bytes",
                 type_level=True, dtype_field="bytes"),
        Function("bits", 1, lambda t: t, r"\operatorname{{bits}}({0})", "width of a dtype in bits",
                 type_level=True, dtype_field="bits"),
        Function("is_float", 1, lambda t: t, r"\operatorname{{isfloat}}({0})", "dtype is floating point",
                 type_level=True, dtype_field="is_float"),
        Function("is_signed", 1, lambda t: t, r"\operatorname{{issigned}}({0})",
                 "dtype is a signed integer or a float", type_level=True, dtype_field="is_signed"),
        Function("highest", 1, lambda t: t, r"\operatorname{{highest}}({0})",
                 "the largest value of a dtype: +inf for floating types that have it, else the largest finite value",
                 type_level=True),
        Function("lowest", 1, lambda t: t, r"\operatorname{{lowest}}({0})",
                 "the smallest value of a dtype: -inf for floating types that have it, else the most negative "
                 "finite value (0 for unsigned types)", type_level=True),
        Function("max_finite", 1, lambda t: t, r"\operatorname{{maxfinite}}({0})",
                 "the largest finite value of a dtype (65504 for f16; the largest value for integer types): "
                 "the bound a saturating conversion clamps to", type_level=True),
        Function("code", 1, lambda v: v, r"\operatorname{{code}}({0})",
                 "code(e): the integer an enumerator stands for (the enum's codes in specs/isa.yaml)",
                 type_level=True),
        Function("pad_value", 2, lambda p, t: (p, t), r"\operatorname{{pad}}_{{{0}}}({1})",
                 "pad_value(p, T): the element of type T that PadValue p stands for (specs/isa.yaml pad_fill)",
                 type_level=True),
    ]
}

REDUCTIONS: dict[str, Reduction] = {
    r.name: r
    for r in [
        Reduction("sum", r"\sum", "sum over the range in index order (floats round at every step)"),
        Reduction("prod", r"\prod", "product over the range in index order (floats round at every step)"),
        Reduction("min", r"\min", "minimum over the range"),
        Reduction("max", r"\max", "maximum over the range"),
        Reduction("argmin", r"\operatorname*{argmin}",
                  "index of the minimum over the range; the first such index on ties", returns_index=True),
        Reduction("argmax", r"\operatorname*{argmax}",
                  "index of the maximum over the range; the first such index on ties", returns_index=True),
    ]
}

_REDUCE_IMPL = {name: _numpy(name) for name in ("sum", "prod", "min", "max", "argmin", "argmax")}


def _ordered_type(a, b) -> np.dtype:
    """The result type of a two-operand max/min: NumPy's promotion with Python numbers kept weak; where
    NumPy has none (an ml_dtypes float with an integer), the type of the array operand."""
    try:
        return np.result_type(a, b)
    except (TypeError, ValueError):
        return np.asarray(a).dtype if np.ndim(a) >= np.ndim(b) else np.asarray(b).dtype


def _ordered_max(a, b):
    """C++ ``std::max(a, b)``: ``a < b ? b : a`` (b only when it compares greater: max(1, NaN) = 1,
    max(NaN, 1) = NaN, max(-0, +0) = -0)."""
    dt = _ordered_type(a, b)
    a, b = np.asarray(a).astype(dt), np.asarray(b).astype(dt)
    with np.errstate(invalid="ignore"):
        return np.where(a < b, b, a)


def _ordered_min(a, b):
    """C++ ``std::min(a, b)``: ``b < a ? b : a``."""
    dt = _ordered_type(a, b)
    a, b = np.asarray(a).astype(dt), np.asarray(b).astype(dt)
    with np.errstate(invalid="ignore"):
        return np.where(b < a, b, a)


def _fold(better, want_index: bool):
    """A reduction that starts from element 0 and moves to a later element only when ``better(new, kept)``
    holds (a NaN never compares better, and a NaN kept from element 0 is never replaced)."""

    def reduce(values: np.ndarray, axis: int) -> np.ndarray:
        moved = np.moveaxis(values, axis, 0)
        kept, index = moved[0].copy(), np.zeros(moved.shape[1:], dtype=np.int64)
        with np.errstate(invalid="ignore"):
            for k in range(1, moved.shape[0]):
                take = better(moved[k], kept)
                kept = np.where(take, moved[k], kept)
                index = np.where(take, k, index)
        return np.expand_dims(index if want_index else kept.astype(values.dtype, copy=False), axis)

    return reduce


# Numerics variants: implementations of a function or reduction that differ only in NaN and signed-zero
# results.  ``ieee`` is NumPy's (NaN propagates; the first NaN is the arg-extreme); a profile picks
# another in specs/isa.yaml (profiles.<p>.numerics.functions).
VARIANTS: dict[str, dict[str, str]] = {
    "max": {"ieee": "NaN propagates (NumPy maximum; reductions and argmax: the first NaN wins)",
            "ordered": "C++ std::max(a, b) = a < b ? b : a; reductions fold from element 0 and keep the "
                       "earlier element unless a later one compares greater"},
    "min": {"ieee": "NaN propagates (NumPy minimum; reductions and argmin: the first NaN wins)",
            "ordered": "C++ std::min(a, b) = b < a ? b : a; reductions fold from element 0 and keep the "
                       "earlier element unless a later one compares less"},
}
_FUNCTION_VARIANTS = {("max", "ordered"): _ordered_max, ("min", "ordered"): _ordered_min}
_REDUCTION_VARIANTS = {
    ("max", "ordered"): _fold(lambda new, kept: kept < new, False),
    ("argmax", "ordered"): _fold(lambda new, kept: kept < new, True),
    ("min", "ordered"): _fold(lambda new, kept: new < kept, False),
    ("argmin", "ordered"): _fold(lambda new, kept: new < kept, True),
}
_REDUCTION_FAMILY = {"argmax": "max", "argmin": "min"}  # arg-reductions follow their function's variant


def function_impl(name: str, variants: dict[str, str]):
    """The implementation of element function ``name`` under a profile's variants."""
    return _FUNCTION_VARIANTS.get((name, variants.get(name, "ieee")), FUNCTIONS[name].impl)


def reduce_along(name: str, values: np.ndarray, axis: int, variants: dict[str, str] | None = None) -> np.ndarray:
    """Apply reduction ``name`` along ``axis`` keeping the axis (size 1), under a profile's variants."""
    variant = (variants or {}).get(_REDUCTION_FAMILY.get(name, name), "ieee")
    if (name, variant) in _REDUCTION_VARIANTS:
        return _REDUCTION_VARIANTS[(name, variant)](values, axis)
    impl = _REDUCE_IMPL[name]
    if REDUCTIONS[name].returns_index:
        return np.expand_dims(impl(values, axis=axis), axis)
    if name in ("sum", "prod"):
        if values.dtype.kind in "iub":
            return impl(values, axis=axis, keepdims=True, dtype=values.dtype)  # wrapping is order-free
        return _in_order(np.add if name == "sum" else np.multiply, values, axis)
    return impl(values, axis=axis, keepdims=True)


def _in_order(step, values: np.ndarray, axis: int) -> np.ndarray:
    """A floating-point sum or product in index order, rounded to the element type after every step
    (NumPy's own reductions add pairwise and keep float16 partial results in float32)."""
    moved = np.moveaxis(values, axis, 0)
    acc = moved[0].copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for item in moved[1:]:
            acc = step(acc, item).astype(values.dtype, copy=False)
    return np.expand_dims(acc, axis)
