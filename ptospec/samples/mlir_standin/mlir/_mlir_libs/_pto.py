"""The stand-in for the assembler's compiled ``_pto`` extension (its ``lib/Bindings/Python/PTOModule.cpp``): the
dialect's enums, attributes and types, each printed in the dialect's syntax.

The enums' members and spellings, the attributes' mnemonics and printing styles and the result types MLIR infers
come from the assembler's own ODS at run time (``pto_dialect.json`` beside this file, written by
``ptospec.samples.builders`` from ``llvm-tblgen --dump-json``); the Python signatures follow PTOModule.cpp.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path

from .. import ir

_FACTS = json.loads((Path(__file__).with_name("pto_dialect.json")).read_text(encoding="utf-8"))


def _make_enum(name: str) -> type[enum.Enum]:
    cases = _FACTS["enums"][name]
    e = enum.Enum(name, [(symbol, value) for symbol, _text, value in cases])
    e._spelling = {value: text for _symbol, text, value in cases}
    return e


_ENUMS = {name: _make_enum(name) for name in _FACTS["enums"]}
globals().update(_ENUMS)


def register_dialect(context=None, load: bool = True) -> None:
    (context or ir.Context.current).dialects.add("pto")


def _enum_value(enum_cls, value) -> int:
    if isinstance(value, enum_cls):
        return value.value
    if isinstance(value, int) and not isinstance(value, bool):
        if value not in enum_cls._spelling:
            raise ValueError(f"{value} is no {enum_cls.__name__}")
        return value
    raise TypeError(f"expected a {enum_cls.__name__} or an int, got {type(value).__name__}")


class _EnumAttr(ir.Attribute):
    """An attribute holding one case of a dialect enum."""

    ENUM = ""
    MNEMONIC = ""
    STYLE = "params"  # params: #pto.mnemonic<case>; value: #pto<mnemonic case>

    @classmethod
    def get(cls, value, context=None):
        enum_cls = _ENUMS[cls.ENUM]
        v = _enum_value(enum_cls, value)
        text = enum_cls._spelling[v]
        a = cls(f"#pto.{cls.MNEMONIC}<{text}>" if cls.STYLE == "params" else f"#pto<{cls.MNEMONIC} {text}>")
        a.enum_value = v
        return a

    @property
    def value(self):
        return self.enum_value


def _make_attr(name: str, facts: dict) -> type[_EnumAttr]:
    return type(name, (_EnumAttr,), {"ENUM": facts["enum"], "MNEMONIC": facts["mnemonic"], "STYLE": facts["style"]})


_ATTRS = {name: _make_attr(name, facts) for name, facts in _FACTS["attrs"].items()}
globals().update(_ATTRS)


if "CmpModeAttr" in _ATTRS:
    class CmpModeAttr(_ATTRS["CmpModeAttr"]):
        """PTOModule.cpp binds CmpModeAttr.get(context, value): the context first."""

        @classmethod
        def get(cls, context, value):
            return super().get(value, context)


def _dims(shape) -> str:
    return "x".join("?" if d is None or d < 0 else str(int(d)) for d in shape)


class PtrType(ir.Type):
    @classmethod
    def get(cls, element_type, context=None) -> PtrType:
        t = cls(f"!pto.ptr<{element_type}>")
        t.element_type = element_type
        return t


class AsyncSessionType(ir.Type):
    @classmethod
    def get(cls, context=None) -> AsyncSessionType:
        return cls("!pto.async_session")


class AsyncEventType(ir.Type):
    @classmethod
    def get(cls, context=None) -> AsyncEventType:
        return cls("!pto.async_event")


class _Shaped(ir.Type):
    MNEMONIC = ""

    @classmethod
    def get(cls, shape, element_type, context=None):
        shape = [-1] * shape if isinstance(shape, int) else [int(d) for d in shape]
        t = cls(f"!pto.{cls.MNEMONIC}<{_dims(shape)}x{element_type}>")
        t.shape, t.element_type, t.rank = shape, element_type, len(shape)
        return t


class TensorViewType(_Shaped):
    MNEMONIC = "tensor_view"


class PartitionTensorViewType(_Shaped):
    MNEMONIC = "partition_tensor_view"

    @classmethod
    def get(cls, shape, element_type, context=None):
        if isinstance(shape, int):
            raise TypeError("PartitionTensorViewType.get takes a shape (a list), not a rank")
        return super().get(shape, element_type, context)


class TileType(PartitionTensorViewType):
    MNEMONIC = "tile"


class TileBufConfigAttr(ir.Attribute):
    """blayout, slayout, s_fractal_size, pad, compact mode (TileBufConfigAttr::getDefault's defaults)."""

    @classmethod
    def _make(cls, blayout, slayout, size: int, pad, compact) -> TileBufConfigAttr:
        a = cls(f"#pto.tile_buf_config<blayout={blayout}, slayout={slayout}, s_fractal_size={int(size)}, "
                f"pad={pad}, compact={compact}>")
        a.blayout, a.slayout, a.size, a.pad, a.compact = blayout, slayout, int(size), pad, compact
        return a

    @classmethod
    def get_default(cls, context=None) -> TileBufConfigAttr:
        return cls._make(_ATTRS["BLayoutAttr"].get(_ENUMS["BLayout"].RowMajor),
                         _ATTRS["SLayoutAttr"].get(_ENUMS["SLayout"].NoneBox), 512,
                         _ATTRS["PadValueAttr"].get(_ENUMS["PadValue"].Null),
                         _ATTRS["CompactModeAttr"].get(_ENUMS["CompactMode"].Null))

    @classmethod
    def get(cls, blayout, slayout, s_fractal_size: int, pad, context=None, compact_mode=None) -> TileBufConfigAttr:
        compact = _ATTRS["CompactModeAttr"].get(_ENUMS["CompactMode"].Null)
        if isinstance(compact_mode, ir.Attribute):
            compact = compact_mode
        elif compact_mode is not None:
            compact = _ATTRS["CompactModeAttr"].get(compact_mode)
        for what, attr, kind in (("blayout", blayout, "BLayoutAttr"), ("slayout", slayout, "SLayoutAttr"),
                                 ("pad", pad, "PadValueAttr")):
            if not isinstance(attr, _ATTRS[kind]):
                raise TypeError(f"TileBufConfigAttr.get: {what} must be a {kind}, got {type(attr).__name__}")
        return cls._make(blayout, slayout, s_fractal_size, pad, compact)


class TileBufType(ir.Type):
    """``!pto.tile_buf<loc, RxCxT[, valid=..][, blayout=..][, slayout=..][, fractal=..][, pad=..][, compact=..]>``,
    each key printed only when it differs from the default, as TileBufType::print writes it."""

    @classmethod
    def get(cls, shape, element_type, memory_space, valid_shape=None, config=None, context=None) -> TileBufType:
        shape = [int(d) for d in shape]
        valid = shape if valid_shape is None else [-1 if d is None else int(d) for d in valid_shape]
        if len(valid) != len(shape):
            raise RuntimeError("valid_shape rank must match shape rank")
        if len(shape) != 2:  # the printed form has rows and cols only: a tile of another rank is refused, not cut
            raise RuntimeError(f"TileBufType.get: the stand-in prints 2-D tiles only, got shape {shape}")
        if not isinstance(memory_space, _ATTRS["AddressSpaceAttr"]):
            raise TypeError(f"TileBufType.get: memory_space must be an AddressSpaceAttr, got "
                            f"{type(memory_space).__name__}")
        cfg = config or TileBufConfigAttr.get_default()
        default = TileBufConfigAttr.get_default()
        loc = _ENUMS["AddressSpace"]._spelling[memory_space.value]
        rows, cols = shape
        parts = [loc, f"{_dims([rows, cols])}x{element_type}"]
        vrow, vcol = valid
        if (vrow, vcol) != (rows, cols):
            parts.append(f"valid={_dims([vrow, vcol])}")
        for key, mine, theirs, text in (
                ("blayout", cfg.blayout, default.blayout, lambda a: _ENUMS["BLayout"]._spelling[a.value]),
                ("slayout", cfg.slayout, default.slayout, lambda a: _ENUMS["SLayout"]._spelling[a.value]),
                ("fractal", cfg.size, default.size, str),
                ("pad", cfg.pad, default.pad, lambda a: str(a.value)),
                ("compact", cfg.compact, default.compact, lambda a: str(a.value))):
            if mine != theirs:
                parts.append(f"{key}={text(mine)}")
        t = cls(f"!pto.tile_buf<{', '.join(parts)}>")
        t.shape, t.element_type, t.memory_space, t.valid_shape, t.config = shape, element_type, memory_space, \
            valid, cfg
        return t

    @classmethod
    def upcast_type(cls, t):
        return t if isinstance(t, TileBufType) else None


def _infer(rule: dict):
    if "operand" in rule:
        return lambda operands, attributes: [operands[rule["operand"]].type]
    return lambda operands, attributes: [ir.Type(rule["type"])]


ir.RESULT_INFERENCE.update({name: _infer(rule) for name, rule in _FACTS["infer"].items()})
