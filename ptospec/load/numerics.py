"""``numerics``: tolerances per dtype and the behaviour at special values."""

from __future__ import annotations

import math

from ..model import Numerics, Tolerance
from .context import OpContext


def build_numerics(ctx: OpContext) -> Numerics:
    isa = ctx.isa
    num = ctx.src.data["numerics"]
    tolerance = {}
    for dt_name, tol in num.get("tolerance", {}).items():
        if dt_name not in isa.dtypes:
            ctx.add(("numerics", "tolerance", dt_name), f"unknown dtype {dt_name!r}", "op.dtype")
        values = (float(tol["rtol"]), float(tol["atol"]))  # the schema bounds both, so float() cannot overflow
        if not all(math.isfinite(v) for v in values):
            ctx.add(("numerics", "tolerance", dt_name), "tolerances must be finite numbers", "op.tolerance")
        tolerance[dt_name] = Tolerance(*values)
    numerics = Numerics(
        exact=tuple(n for n in isa.dtypes if n not in tolerance), tolerance=tolerance, nan=num["nan"],
        signed_zero=num["signed_zero"], ties=num["ties"], overflow=num["overflow"], notes=num["notes"],
        division_by_zero=num.get("division_by_zero", "not-applicable"),
        shift_out_of_range=num.get("shift_out_of_range", "not-applicable"),
        exact_specials=tuple(num.get("exact_specials", ())),
    )
    for field_name in ("nan", "signed_zero", "ties", "overflow", "division_by_zero", "shift_out_of_range"):
        value = getattr(numerics, field_name)
        if value not in isa.numerics_values:
            ctx.add(("numerics", field_name), f"numerics value {value!r} has no entry in numerics_values of "
                    "specs/isa.yaml (its name on the pages)", "op.numerics")
    for p in numerics.exact_specials:
        if p not in isa.profiles:
            ctx.add(("numerics", "exact_specials"), f"unknown profile {p!r}", "op.profile")
    return numerics
