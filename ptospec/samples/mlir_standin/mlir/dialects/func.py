"""``mlir.dialects.func``: FuncOp (with ``add_entry_block`` and ``from_py_func``), ReturnOp, CallOp."""

from __future__ import annotations

import functools

from .. import ir
from ..ir import FunctionType  # noqa: F401  (samples spell it func.FunctionType)
from ._ods_common import get_op_result_or_value, register_operation


@register_operation(None)
class FuncOp(ir.OpView):
    OPERATION_NAME = "func.func"
    _ODS_REGIONS = (1, True)

    def __init__(self, name: str, type, *, visibility=None, body_builder=None, loc=None, ip=None):
        if isinstance(type, tuple):
            type = ir.FunctionType.get(*type)
        attributes = {"sym_name": ir.StringAttr.get(str(name)), "function_type": ir.TypeAttr.get(type)}
        if visibility is not None:
            attributes["sym_visibility"] = ir.StringAttr.get(str(visibility))
        super().__init__(self.build_generic(attributes=attributes, results=[], operands=[], regions=1, loc=loc,
                                            ip=ip))
        if body_builder is not None:
            entry = self.add_entry_block()
            with ir.InsertionPoint(entry):
                body_builder(self)

    @property
    def type(self) -> ir.FunctionType:
        return self.operation.attributes["function_type"].value

    @property
    def body(self) -> ir.Region:
        return self.operation.regions[0]

    @property
    def entry_block(self) -> ir.Block:
        return self.body.blocks[0]

    @property
    def arguments(self):
        return self.entry_block.arguments

    @property
    def name(self) -> ir.StringAttr:
        return self.operation.attributes["sym_name"]

    def add_entry_block(self, arg_locs=None) -> ir.Block:
        if self.body.blocks:
            raise IndexError("the function already has an entry block")
        return self.body.blocks.append(*self.type.inputs)

    @classmethod
    def from_py_func(cls, *inputs, results=None, name=None):
        """The decorated Python function builds the body; its return values become func.return's operands."""
        def decorator(f):
            fn = cls(name or f.__name__, ir.FunctionType.get(list(inputs), list(results or [])))
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                returned = f(*entry.arguments)
                values = [] if returned is None else list(returned) if isinstance(returned, tuple | list) \
                    else [returned]
                values = [get_op_result_or_value(v) for v in values]
                ReturnOp(values)
            if results is None:
                ftype = ir.FunctionType.get(list(inputs), [v.type for v in values])
                fn.operation.attributes["function_type"] = ir.TypeAttr.get(ftype)

            @functools.wraps(f)
            def call(*args, **kwargs):
                raise NotImplementedError("calling a from_py_func function: the stand-in builds no func.call")
            call.func_op = fn
            return call
        return decorator


@register_operation(None)
class ReturnOp(ir.OpView):
    OPERATION_NAME = "func.return"

    def __init__(self, operands=(), *, loc=None, ip=None):
        super().__init__(self.build_generic(results=[], operands=[list(operands)], loc=loc, ip=ip))


@register_operation(None)
class CallOp(ir.OpView):
    OPERATION_NAME = "func.call"

    def __init__(self, result, callee, operands_, *, loc=None, ip=None):
        if isinstance(result, FuncOp):  # CallOp(func_op, operands)
            callee, operands_, result = result, callee, result.type.results
        callee_attr = ir.FlatSymbolRefAttr.get(callee.name.value if isinstance(callee, FuncOp) else str(callee))
        super().__init__(self.build_generic(results=list(result), operands=[list(operands_)],
                                            attributes={"callee": callee_attr}, loc=loc, ip=ip))


def return_(operands=(), *, loc=None, ip=None):
    return ReturnOp(operands, loc=loc, ip=ip)
