"""``mlir.dialects.arith``: ConstantOp (``arith.ConstantOp(type, value)``, as MLIR's mixin takes it)."""

from __future__ import annotations

from .. import ir
from ._ods_common import register_operation


@register_operation(None)
class ConstantOp(ir.OpView):
    OPERATION_NAME = "arith.constant"

    def __init__(self, result, value, *, loc=None, ip=None):
        if isinstance(value, bool) or (isinstance(value, int) and not _is_float(result)):
            value = ir.IntegerAttr.get(result, int(value))
        elif isinstance(value, int | float):
            value = ir.FloatAttr.get(result, float(value))
        super().__init__(self.build_generic(results=[result], operands=[], attributes={"value": value}, loc=loc,
                                            ip=ip))

    @property
    def value(self) -> ir.Attribute:
        return self.operation.attributes["value"]

    @property
    def literal_value(self):
        return self.value.value


def _is_float(t: ir.Type) -> bool:
    return str(t) in ("f16", "bf16", "f32", "f64")


def constant(result, value, *, loc=None, ip=None):
    return ConstantOp(result, value, loc=loc, ip=ip).result
