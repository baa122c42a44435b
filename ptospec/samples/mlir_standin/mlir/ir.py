"""A pure-Python stand-in for the part of MLIR's Python API (``mlir.ir``) that the assembler's sample builders call.

It builds operations, blocks and regions in memory and prints the module in MLIR's generic operation form; it
checks nothing of the dialects (``verify`` only checks that every operand is defined before its use): the
assembler that reads the printed module is the judge.  Types and attributes are values carrying their printed
text.  Only what the builders reach is here; anything else raises ``AttributeError`` / ``NotImplementedError``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import ClassVar

# ---------------------------------------------------------------------------------------------------------------
# Context, Location, InsertionPoint: each a context manager with a thread-global stack (as MLIR's).
# ---------------------------------------------------------------------------------------------------------------


class _Stacked:
    _stack: list  # set per subclass

    def __enter__(self):
        type(self)._stack.append(self)
        return self

    def __exit__(self, *exc):
        type(self)._stack.pop()
        return False


class _CurrentMeta(type):
    @property
    def current(cls):
        if not cls._stack:
            raise ValueError(f"No current {cls.__name__}")
        return cls._stack[-1]


class Context(_Stacked, metaclass=_CurrentMeta):
    _stack: ClassVar[list] = []

    def __init__(self):
        self.dialects: set[str] = set()
        self.allow_unregistered_dialects = True

    def __enter__(self):
        super().__enter__()
        return self


class Location(_Stacked, metaclass=_CurrentMeta):
    _stack: ClassVar[list] = []

    def __init__(self, context: Context | None = None, text: str = "unknown"):
        self.context = context or (Context._stack[-1] if Context._stack else None)
        self.text = text

    @classmethod
    def unknown(cls, context: Context | None = None) -> Location:
        return cls(context)

    @classmethod
    def name(cls, name: str, childLoc=None, context: Context | None = None) -> Location:
        return cls(context, f'"{name}"')

    def __enter__(self):
        if self.context is not None and (not Context._stack or Context._stack[-1] is not self.context):
            Context._stack.append(self.context)
            self._pushed = True
        else:
            self._pushed = False
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        if self._pushed:
            Context._stack.pop()
        return False


class InsertionPoint(_Stacked, metaclass=_CurrentMeta):
    _stack: ClassVar[list] = []

    def __init__(self, block: Block, before: Operation | None = None):
        self.block = block
        self.ref = before

    @classmethod
    def at_block_begin(cls, block: Block) -> InsertionPoint:
        return cls(block, block.operations[0] if block.operations else None)

    @classmethod
    def at_block_terminator(cls, block: Block) -> InsertionPoint:
        return cls(block, block.operations[-1])

    def insert(self, op: Operation) -> None:
        ops = self.block.operations
        ops.insert(ops.index(self.ref) if self.ref is not None else len(ops), op)
        op.parent_block = self.block


# ---------------------------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------------------------


class Type:
    """A type: its printed text (equal types print alike)."""

    def __init__(self, text):
        self.text = text.text if isinstance(text, Type) else str(text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Type({self.text})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Type) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    @classmethod
    def parse(cls, text: str, context: Context | None = None) -> Type:
        return Type(text.strip())

    @property
    def context(self):
        return Context.current


class _Named(Type):
    NAME = ""

    @classmethod
    def get(cls, context: Context | None = None):
        return cls(cls.NAME)

    @classmethod
    def isinstance(cls, t) -> bool:
        return isinstance(t, Type) and t.text == cls.NAME


class F32Type(_Named):
    NAME = "f32"


class F16Type(_Named):
    NAME = "f16"


class BF16Type(_Named):
    NAME = "bf16"


class F64Type(_Named):
    NAME = "f64"


class IndexType(_Named):
    NAME = "index"


class NoneType(_Named):
    NAME = "none"


class IntegerType(Type):
    @classmethod
    def get_signless(cls, width: int, context: Context | None = None) -> IntegerType:
        return cls(f"i{width}")

    @classmethod
    def get_signed(cls, width: int, context: Context | None = None) -> IntegerType:
        return cls(f"si{width}")

    @classmethod
    def get_unsigned(cls, width: int, context: Context | None = None) -> IntegerType:
        return cls(f"ui{width}")

    @classmethod
    def isinstance(cls, t) -> bool:
        return isinstance(t, Type) and t.text.lstrip("su").startswith("i") and t.text.lstrip("sui").isdigit()

    @property
    def width(self) -> int:
        return int(self.text.lstrip("sui"))


class FunctionType(Type):
    def __init__(self, inputs: Sequence[Type], results: Sequence[Type]):
        self.inputs, self.results = list(inputs), list(results)
        res = ", ".join(map(str, self.results))
        super().__init__(f"({', '.join(map(str, self.inputs))}) -> " + (res if len(self.results) == 1 and
                                                                          not res.startswith("(") else f"({res})"))

    @classmethod
    def get(cls, inputs: Sequence[Type], results: Sequence[Type], context: Context | None = None) -> FunctionType:
        return cls(inputs, results)


# ---------------------------------------------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------------------------------------------


class Attribute:
    """An attribute: its printed text (``unit``: printed as the name alone in a dictionary)."""

    def __init__(self, text, unit: bool = False):
        if isinstance(text, Attribute):
            self.text, self.unit = text.text, text.unit
        else:
            self.text, self.unit = str(text), unit

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Attribute({self.text})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Attribute) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    @classmethod
    def parse(cls, text: str, context: Context | None = None) -> Attribute:
        return Attribute(text.strip(), unit=text.strip() == "unit")


class UnitAttr(Attribute):
    @classmethod
    def get(cls, context: Context | None = None) -> UnitAttr:
        return cls("unit", unit=True)


class BoolAttr(Attribute):
    @classmethod
    def get(cls, value: bool, context: Context | None = None) -> BoolAttr:
        a = cls("true" if value else "false")
        a.value = bool(value)
        return a


class StringAttr(Attribute):
    @classmethod
    def get(cls, value: str, context: Context | None = None) -> StringAttr:
        a = cls(_quote(value))
        a.value = value
        return a


class FlatSymbolRefAttr(Attribute):
    @classmethod
    def get(cls, value: str, context: Context | None = None) -> FlatSymbolRefAttr:
        a = cls("@" + (value if value.replace("_", "").replace(".", "").isalnum() else _quote(value)))
        a.value = value
        return a


class TypeAttr(Attribute):
    @classmethod
    def get(cls, value: Type, context: Context | None = None) -> TypeAttr:
        a = cls(str(value))
        a.value = value
        return a


class IntegerAttr(Attribute):
    @classmethod
    def get(cls, type: Type, value: int) -> IntegerAttr:
        text = ("true" if value else "false") if str(type) == "i1" else f"{int(value)} : {type}"
        a = cls(text)
        a.value, a.type = int(value), type
        return a


class FloatAttr(Attribute):
    @classmethod
    def get(cls, type: Type, value: float, loc=None) -> FloatAttr:
        a = cls(f"{float_literal(str(type), value)} : {type}")
        a.value, a.type = float(value), type
        return a

    @classmethod
    def get_f32(cls, value: float, context: Context | None = None) -> FloatAttr:
        return cls.get(F32Type.get(), value)


class ArrayAttr(Attribute):
    @classmethod
    def get(cls, attributes: Sequence[Attribute], context: Context | None = None) -> ArrayAttr:
        return cls("[" + ", ".join(map(str, attributes)) + "]")


class DenseI32ArrayAttr(Attribute):
    @classmethod
    def get(cls, values: Sequence[int], context: Context | None = None) -> DenseI32ArrayAttr:
        a = cls("array<i32" + (": " + ", ".join(str(int(v)) for v in values) if values else "") + ">")
        a.values = [int(v) for v in values]
        return a

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]


class DenseI64ArrayAttr(DenseI32ArrayAttr):
    @classmethod
    def get(cls, values: Sequence[int], context: Context | None = None) -> DenseI64ArrayAttr:
        a = cls("array<i64" + (": " + ", ".join(str(int(v)) for v in values) if values else "") + ">")
        a.values = [int(v) for v in values]
        return a


def float_literal(type_text: str, value: float) -> str:
    """``value`` rounded to the float type, printed with the digits that give that value back exactly."""
    value = float(value)
    if type_text == "f32":
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    elif type_text == "f16":
        value = struct.unpack("<e", struct.pack("<e", value))[0]
    elif type_text == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round to nearest even
        value = struct.unpack("<f", struct.pack("<I", bits))[0]
    if value != value or value in (float("inf"), float("-inf")):
        raise NotImplementedError(f"a {type_text} constant {value}: the stand-in prints finite values only")
    text = repr(value)
    return text if any(c in text for c in ".e") else text + ".0"


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class AttrBuilder:
    """MLIR's registry of attribute builders by ODS constraint name (``I32Attr`` ...)."""

    _builders: ClassVar[dict] = {}

    @classmethod
    def contains(cls, name: str) -> bool:
        return name in cls._builders

    @classmethod
    def get(cls, name: str):
        return cls._builders[name]

    @classmethod
    def insert(cls, name: str, fn, replace: bool = False) -> None:
        cls._builders[name] = fn


def _int_builder(width: int):
    return lambda x, context=None: IntegerAttr.get(IntegerType.get_signless(width), x)


for _w in (8, 16, 32, 64):
    AttrBuilder.insert(f"I{_w}Attr", _int_builder(_w))
AttrBuilder.insert("BoolAttr", lambda x, context=None: BoolAttr.get(x))
AttrBuilder.insert("IndexAttr", lambda x, context=None: IntegerAttr.get(IndexType.get(), x))
AttrBuilder.insert("F32Attr", lambda x, context=None: FloatAttr.get(F32Type.get(), x))
AttrBuilder.insert("StrAttr", lambda x, context=None: StringAttr.get(x))
AttrBuilder.insert("SymbolNameAttr", lambda x, context=None: StringAttr.get(x))
AttrBuilder.insert("FlatSymbolRefAttr", lambda x, context=None: FlatSymbolRefAttr.get(x))
AttrBuilder.insert("TypeAttr", lambda x, context=None: TypeAttr.get(x))
AttrBuilder.insert("UnitAttr", lambda x, context=None: UnitAttr.get() if x else None)
AttrBuilder.insert("I64ArrayAttr", lambda x, context=None: ArrayAttr.get([_int_builder(64)(v) for v in x]))
AttrBuilder.insert("I32ArrayAttr", lambda x, context=None: ArrayAttr.get([_int_builder(32)(v) for v in x]))
AttrBuilder.insert("DenseI64ArrayAttr", lambda x, context=None: DenseI64ArrayAttr.get(x))
AttrBuilder.insert("DenseI32ArrayAttr", lambda x, context=None: DenseI32ArrayAttr.get(x))


# ---------------------------------------------------------------------------------------------------------------
# Values, operations, blocks, regions
# ---------------------------------------------------------------------------------------------------------------


class Dialect:
    """The base of a generated dialect class (``DIALECT_NAMESPACE``)."""

    DIALECT_NAMESPACE = ""

    def __init__(self, descriptor=None):
        self.descriptor = descriptor


class Value:
    def __init__(self, type: Type, owner):
        self.type, self.owner = type, owner

    def get_name(self) -> str:
        return "%?"


class OpResult(Value):
    def __init__(self, type: Type, owner: Operation, index: int):
        super().__init__(type, owner)
        self.result_number = index


class BlockArgument(Value):
    def __init__(self, type: Type, owner: Block, index: int):
        super().__init__(type, owner)
        self.arg_number = index


class Block:
    def __init__(self, types: Iterable[Type] = (), region: Region | None = None):
        self.arguments = [BlockArgument(t, self, i) for i, t in enumerate(types)]
        self.operations: list[Operation] = []
        self.region = region

    def add_argument(self, type: Type, loc=None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.arguments))
        self.arguments.append(arg)
        return arg

    def append(self, op) -> None:
        op = op.operation
        self.operations.append(op)
        op.parent_block = self

    @classmethod
    def create_at_start(cls, parent: Region, arg_types: Sequence[Type] = (), arg_locs=None) -> Block:
        b = cls(arg_types, parent)
        parent.blocks.insert(0, b)
        return b


class _Blocks(list):
    def __init__(self, region: Region):
        super().__init__()
        self.region = region

    def append(self, *types: Type, arg_locs=None) -> Block:  # MLIR's region.blocks.append(*arg_types)
        b = Block(types, self.region)
        super().append(b)
        return b


class Region:
    def __init__(self, parent: Operation):
        self.blocks = _Blocks(self)
        self.owner = parent


class _Attributes(dict):
    """An operation's attributes: name -> Attribute."""

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(value, Attribute):
            raise TypeError(f"attribute {key!r} must be an Attribute, got {type(value).__name__}")
        super().__setitem__(key, value)


class Operation:
    def __init__(self, name: str, results: Sequence[Type], operands: Sequence[Value], attributes: dict,
                 regions: int = 0, loc: Location | None = None):
        self.name = name
        self.results = [OpResult(t, self, i) for i, t in enumerate(results)]
        for v in operands:
            if not isinstance(v, Value):
                raise TypeError(f"{name}: an operand must be a Value, got {type(v).__name__}")
        self.operands = list(operands)
        self.attributes = _Attributes()
        for k, v in (attributes or {}).items():
            if v is not None:
                self.attributes[k] = v
        self.regions = [Region(self) for _ in range(regions)]
        self.location = loc
        self.parent_block: Block | None = None
        self.opview_cls = None

    @classmethod
    def create(cls, name: str, results: Sequence[Type] | None = None, operands: Sequence[Value] | None = None,
               attributes: dict | None = None, successors=None, regions: int | None = None, loc=None,
               ip: InsertionPoint | None = None, infer_type: bool = False) -> Operation:
        if successors:
            raise NotImplementedError("successors: the stand-in builds no branches")
        op = cls(name, results or [], [_value(v) for v in operands or []], attributes or {}, regions or 0, loc)
        _insert(op, ip)
        return op

    @property
    def operation(self) -> Operation:
        return self

    @property
    def opview(self):
        return self.opview_cls(self) if self.opview_cls else self

    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise ValueError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def context(self) -> Context:
        return Context.current

    def verify(self) -> bool:
        """Only that every operand is defined before its use (the dialects' own checks are the assembler's)."""
        _check_dominance(self, set())
        return True

    def __str__(self) -> str:
        return Printer().module(self)

    def print(self, file=None, **_kw) -> None:
        print(str(self), file=file)

    def get_asm(self, **_kw) -> str:
        return str(self)


def _value(v) -> Value:
    if isinstance(v, Value):
        return v
    op = getattr(v, "operation", None)
    if isinstance(op, Operation):
        return op.result
    raise TypeError(f"expected a Value, got {type(v).__name__}")


def _insert(op: Operation, ip: InsertionPoint | None) -> None:
    if ip is None and InsertionPoint._stack:
        ip = InsertionPoint._stack[-1]
    if ip is not None:
        ip.insert(op)


def _check_dominance(op: Operation, defined: set[int]) -> None:
    for v in op.operands:
        if id(v) not in defined:
            raise ValueError(f"verify: an operand of {op.name} is used before it is defined")
    for region in op.regions:
        inner = set(defined)
        for block in region.blocks:
            inner.update(id(a) for a in block.arguments)
            for o in block.operations:
                _check_dominance(o, inner)
                inner.update(id(r) for r in o.results)
    defined.update(id(r) for r in op.results)


class OpView:
    """The base of the generated operation classes (``_ODS_OPERAND_SEGMENTS`` etc. as MLIR's generator writes)."""

    OPERATION_NAME = ""
    _ODS_OPERAND_SEGMENTS = None
    _ODS_RESULT_SEGMENTS = None
    _ODS_REGIONS = (0, True)

    def __init__(self, operation):
        self._op = operation.operation
        self._op.opview_cls = type(self)

    @property
    def operation(self) -> Operation:
        return self._op

    def __getattr__(self, name):  # results, result, attributes, operands, regions, verify, name ...
        if name == "_op":
            raise AttributeError(name)
        return getattr(self._op, name)

    def __str__(self) -> str:
        return str(self._op)

    @classmethod
    def build_generic(cls, results=None, operands=None, attributes=None, successors=None, regions=None, loc=None,
                      ip=None) -> Operation:
        attributes = dict(attributes or {})
        flat_operands, sizes = _segments(cls.OPERATION_NAME, "operand", operands or [], cls._ODS_OPERAND_SEGMENTS)
        if sizes is not None:
            attributes["operandSegmentSizes"] = DenseI32ArrayAttr.get(sizes)
        if results is None:
            results = infer_result_types(cls, flat_operands, attributes)
        flat_results, rsizes = _segments(cls.OPERATION_NAME, "result", results, cls._ODS_RESULT_SEGMENTS)
        if rsizes is not None:
            attributes["resultSegmentSizes"] = DenseI32ArrayAttr.get(rsizes)
        n_regions, variadic = cls._ODS_REGIONS
        if regions is None:
            regions = n_regions
        elif regions < n_regions or (regions > n_regions and not variadic):
            raise ValueError(f"{cls.OPERATION_NAME}: {regions} regions, the operation has {n_regions}")
        return Operation.create(cls.OPERATION_NAME, flat_results, flat_operands, attributes, successors, regions, loc,
                                ip)


def _segments(op: str, what: str, items: list, spec) -> tuple[list, list[int] | None]:
    """The flat list and, for an operation with segments, each segment's size (1: one, 0: optional, -1: variadic)."""
    if spec is None:
        flat = []
        for it in items:
            if it is None:
                continue
            flat.extend(it if isinstance(it, list | tuple) else [it])
        return ([_value(v) for v in flat] if what == "operand" else flat), None
    if len(items) != len(spec):
        raise ValueError(f"{op}: {len(items)} {what} groups for {len(spec)} segments")
    flat, sizes = [], []
    for it, kind in zip(items, spec, strict=True):
        if kind == -1:
            group = list(it or [])
        elif kind == 0:
            group = [] if it is None else [it]
        else:
            if it is None:
                raise ValueError(f"{op}: a required {what} is None")
            group = [it]
        flat.extend(_value(v) if what == "operand" else v for v in group)
        sizes.append(len(group))
    return flat, sizes


# Result types of operations built without them (MLIR infers them in C++): set by the dialect modules that need it.
RESULT_INFERENCE: dict = {}


def infer_result_types(cls, operands: list[Value], attributes: dict) -> list[Type]:
    rule = RESULT_INFERENCE.get(cls.OPERATION_NAME)
    if rule is None:
        raise NotImplementedError(f"{cls.OPERATION_NAME}: built without result types, and the stand-in does not know "
                                  "how MLIR infers them")
    return rule(operands, attributes)


class Module:
    def __init__(self):
        self.operation = Operation("builtin.module", [], [], {}, 1)
        self.body = self.operation.regions[0].blocks.append()

    @classmethod
    def create(cls, loc: Location | None = None) -> Module:
        return cls()

    @classmethod
    def parse(cls, text: str, context: Context | None = None) -> Module:
        raise NotImplementedError("Module.parse: the stand-in reads no MLIR text")

    def __str__(self) -> str:
        return str(self.operation)

    @property
    def context(self) -> Context:
        return Context.current


# ---------------------------------------------------------------------------------------------------------------
# The generic form
# ---------------------------------------------------------------------------------------------------------------


class Printer:
    """MLIR's generic operation form, with every value numbered in order of definition."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.results = 0
        self.args = 0

    def module(self, op: Operation) -> str:
        return "\n".join(self.op(op, "")) + "\n"

    def name(self, v: Value) -> str:
        try:
            return self.names[id(v)]
        except KeyError:
            raise ValueError("an operand is not defined in the printed module") from None

    def op(self, op: Operation, indent: str) -> list[str]:
        head = ""
        if op.results:
            first = self.results
            for r in op.results:
                self.names[id(r)] = f"%{self.results}"
                self.results += 1
            head = f"%{first}" + (f":{len(op.results)}" if len(op.results) > 1 else "") + " = "
        operands = ", ".join(self.name(v) for v in op.operands)
        inherent = {k: v for k, v in op.attributes.items() if "." not in k}
        discardable = {k: v for k, v in op.attributes.items() if "." in k}
        text = f'{indent}{head}"{op.name}"({operands})'
        if inherent:
            text += " <" + _dict(inherent) + ">"
        lines = [text]
        if op.regions:
            lines[-1] += " ("
            for i, region in enumerate(op.regions):
                lines[-1] += "{"
                for block in region.blocks:
                    if block.arguments or len(region.blocks) > 1:
                        args = []
                        for a in block.arguments:
                            self.names[id(a)] = f"%arg{self.args}"
                            self.args += 1
                            args.append(f"{self.names[id(a)]}: {a.type}")
                        label = f"^bb{region.blocks.index(block)}" + (f"({', '.join(args)})" if args else "")
                        lines.append(f"{indent}{label}:")
                    for inner in block.operations:
                        lines.extend(self.op(inner, indent + "  "))
                lines.append(f"{indent}}}" + (", " if i + 1 < len(op.regions) else ""))
            lines[-1] += ")"
        tail = (" " + _dict(discardable) if discardable else "")
        types = ", ".join(str(v.type) for v in op.operands)
        res = [str(r.type) for r in op.results]
        res_text = res[0] if len(res) == 1 and not res[0].startswith("(") else f"({', '.join(res)})"
        lines[-1] += f"{tail} : ({types}) -> {res_text}"
        return lines


def _dict(attrs: dict) -> str:
    items = []
    for k in sorted(attrs):
        v = attrs[k]
        key = k if k.replace("_", "").replace(".", "").replace("$", "").isalnum() else _quote(k)
        items.append(key if v.unit else f"{key} = {v}")
    return "{" + ", ".join(items) + "}"
