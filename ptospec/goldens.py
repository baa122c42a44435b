"""``specs/goldens.yaml``: what upstream's golden test directories exercise, as data.

Facts about pto-isa's ``gen_data.py`` scripts that their file and parameter names do not say reliably:
which instruction and mode a directory (or some of its cases) tests, which file is which operand, which
parameters give the element types and an operand's valid and tile shapes, which files hold a global view's
buffer, and why a case cannot be compared at all. ``benchmarks/upstream_goldens.py`` configures each case as its
entry says, with no name matching. Loaded and checked against the database here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import ExprError, SpecError
from .expr.ast import Binary, Call, Name, Node, Num, Unary
from .expr.parser import parse_expr
from .loader import DatabaseErrors, Issues, check_schema
from .model import Database
from .yamlsource import read_yaml

FILE = "goldens.yaml"
PLATFORMS = ("a2a3", "a5", "cpu")
FUNCTIONS = {"roundup": lambda x, n: -(-x // n) * n, "max": max, "min": min}  # name -> function of two integers
_OPS = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__, "//": int.__floordiv__, "%": int.__mod__}


@dataclass(frozen=True)
class Extent:
    """An integer expression over case parameters: integers, names, ``+ - * // %``, parentheses and the
    functions ``roundup(x, n)``, ``max(a, b)``, ``min(a, b)`` (``valid_col0 + valid_col1``, ``roundup(k, 64) // 32``);
    read by the spec's expression parser, never evaluated as Python."""

    text: str
    tree: Node

    def value(self, params: dict[str, object]) -> int | None:
        return _value(self.tree, params)


def _value(node: Node, params: dict[str, object]) -> int | None:
    if isinstance(node, Num):
        return int(node.value)
    if isinstance(node, Name):
        v = params.get(node.id)
        return int(v) if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, Unary):
        v = _value(node.operand, params)
        return None if v is None else -v
    op, (a, b) = (node.op, (node.left, node.right)) if isinstance(node, Binary) else (node.func, node.args)
    a, b = _value(a, params), _value(b, params)
    if a is None or b is None or (op in ("//", "%", "roundup") and b == 0):
        return None
    return FUNCTIONS[op](a, b) if op in FUNCTIONS else _OPS[op](a, b)


def _integer_expression(node: Node, text: str) -> None:
    """ValueError unless ``node`` is made of what ``Extent`` computes."""
    if isinstance(node, Num):
        if not isinstance(node.value, int):
            raise ValueError(f"{text!r}: {node.value} is not an integer")
    elif isinstance(node, Unary) and node.op == "-":
        _integer_expression(node.operand, text)
    elif isinstance(node, Binary) and node.op in _OPS:
        _integer_expression(node.left, text)
        _integer_expression(node.right, text)
    elif isinstance(node, Call):
        if node.func not in FUNCTIONS:
            raise ValueError(f"{text!r}: no function {node.func!r} (known: {', '.join(FUNCTIONS)})")
        if len(node.args) != 2:
            raise ValueError(f"{text!r}: {node.func} takes two arguments")
        for arg in node.args:
            _integer_expression(arg, text)
    elif not isinstance(node, Name):
        what = node.op if isinstance(node, Binary | Unary) else type(node).__name__
        raise ValueError(f"{text!r}: {what!r} is not part of a size expression")


def parse_extent(text: str | int) -> Extent:
    """``text`` as an ``Extent``; ValueError names what is wrong."""
    source = str(text).lower()
    try:
        tree = parse_expr(source)
    except ExprError as exc:
        raise ValueError(f"{text!r}: {exc.message}") from None
    _integer_expression(tree, str(text))
    return Extent(str(text), tree)


@dataclass(frozen=True)
class View:
    """A global view a file is the buffer of: its 5-D shape, layout and (packed) buffer shape."""

    shape: tuple[Extent, ...]
    layout: str
    buffer: tuple[Extent, ...] = ()  # empty: the view is its whole buffer

    def dims(self, params: dict[str, object]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        shape = tuple(e.value(params) for e in self.shape)
        buffer = tuple(e.value(params) for e in self.buffer) or shape
        return None if None in shape or None in buffer else (shape, buffer)  # type: ignore[return-value]


@dataclass(frozen=True)
class GoldenDir:
    """One upstream test directory (``testcase/<dir>``) on some platforms, or the cases of it a
    name word (``word``) or parameter values (``when``) single out."""

    dir: str
    op: str
    platforms: tuple[str, ...]
    source: str
    modes: dict[str, str] = field(default_factory=dict)  # case word ("" for every case) -> mode
    files: dict[str, str | None] = field(default_factory=dict)  # file stem -> operand (None: set aside)
    shapes: dict[str, dict[str, tuple[Extent, Extent]]] = field(default_factory=dict)  # operand -> valid|tile
    layouts: dict[str, dict[str, str]] = field(default_factory=dict)  # operand -> loc/blayout/slayout (C++ names)
    word: tuple[str, ...] | None = None  # every one of these words is in the case's name
    cases: tuple[str, ...] = ()  # only these cases (their names after the test class: case_float_16x16)
    when: dict[str, object] = field(default_factory=dict)
    unmapped: str | None = None
    types: dict[str, str] = field(default_factory=dict)  # type variable -> parameter naming it, or a dtype
    type_words: tuple[str, ...] = ()  # type variables the case name's type words bind, in order
    views: dict[str, View] = field(default_factory=dict)
    attrs: dict[str, object] = field(default_factory=dict)  # attribute operand -> its value for these cases
    attr_params: dict[str, str] = field(default_factory=dict)  # attribute operand -> the parameter giving it
    attr_words: tuple[str, ...] = ()  # attribute operands whose enumerator is a word of the case's name
    scalars: dict[str, str] = field(default_factory=dict)  # scalar operand -> parameter or expression giving it
    file_shapes: dict[str, tuple[Extent, Extent]] = field(default_factory=dict)  # file stem -> [rows, cols]
    initial: tuple[str, ...] = ()  # files holding an output's contents before the instruction (not its golden)

    def selects(self, name: str, words: list[str], params: dict[str, object]) -> bool:
        if self.cases and name.split(".", 1)[-1] not in self.cases:
            return False
        if self.word is not None and not {w.upper() for w in self.word} <= {w.upper() for w in words}:
            return False
        return all(_same(params.get(k.lower()), v) for k, v in self.when.items())

    def mode_for(self, words: list[str]) -> str | None:
        lowered = {w.lower() for w in words}
        return next((m for w, m in self.modes.items() if w and w.lower() in lowered), self.modes.get(""))

    def shapes_for(self, params: dict[str, object], operands: set[str]) -> dict[str, dict[str, tuple[int, int]]] | None:
        """The valid and tile shapes of a case's operands (those of its mode); None when a parameter is missing."""
        out: dict[str, dict[str, tuple[int, int]]] = {}
        for operand, kinds in self.shapes.items():
            if operand not in operands:
                continue
            for kind, (rows, cols) in kinds.items():
                r, c = rows.value(params), cols.value(params)
                if r is None or c is None:
                    return None
                out.setdefault(operand, {})[kind] = (r, c)
        return out


def _same(value: object, wanted: object) -> bool:
    if isinstance(wanted, bool) or isinstance(value, bool):
        return bool(value) == wanted if isinstance(value, bool | int) and value in (0, 1, True, False) else False
    return str(value).lower() == str(wanted).lower()


@dataclass(frozen=True)
class Goldens:
    """The file: its entries per (platform, directory), and upstream's spellings of element types."""

    entries: dict[tuple[str, str], list[GoldenDir]]
    type_names: dict[str, str]  # a word of upstream's case names or parameters -> a dtype of the database


def entry_for(entries: dict[tuple[str, str], list[GoldenDir]], platform: str, directory: str, name: str,
              words: list[str], params: dict[str, object]) -> GoldenDir | None:
    """The first entry of the directory on the platform that selects the case (by its name, words and
    parameters)."""
    return next((e for e in entries.get((platform, directory), ()) if e.selects(name, words, params)), None)


def load_goldens(db: Database, root: Path | None = None) -> Goldens:
    """The entries per (platform, directory), those with a selector first, and the type names;
    ``DatabaseErrors`` lists every problem."""
    root = root or Path(db.root)
    path = root / FILE
    if not path.is_file():
        raise SpecError(f"{FILE} is missing from the database", where=str(root), rule="goldens.spec")
    src = read_yaml(path, str(path))
    check_schema(src, "goldens")
    issues = Issues()
    out: dict[tuple[str, str], list[GoldenDir]] = {}
    for i, d in enumerate(src.data["directories"]):
        entry = _entry(db, d, lambda msg, rule, i=i: issues.add(src, ("directories", i), msg, rule))
        if entry is None:
            continue
        for p in entry.platforms:
            same = [e for e in out.get((p, entry.dir), ())
                    if (e.word, e.when, e.cases) == (entry.word, entry.when, entry.cases)]
            if same:
                issues.add(src, ("directories", i), f"directory {entry.dir!r} on {p} has two entries for the same "
                           "cases", "goldens.duplicate")
            out.setdefault((p, entry.dir), []).append(entry)
    type_names = dict(src.data.get("type_names", {}))
    for word, dtype in type_names.items():
        if dtype not in db.isa.dtypes:
            issues.add(src, ("type_names", word), f"type name {word!r}: no dtype {dtype!r}", "goldens.type")
    if issues.items:
        raise DatabaseErrors(issues.items)
    for entries in out.values():
        entries.sort(key=lambda e: e.word is None and not e.when and not e.cases)
    return Goldens(out, type_names)


def _words(word: str | list[str] | None) -> tuple[str, ...] | None:
    return None if word is None else (word,) if isinstance(word, str) else tuple(word)


def _entry(db: Database, d: dict, problem) -> GoldenDir | None:
    if "op" not in d:  # an unmapped directory testing no instruction of the database
        return GoldenDir(d["dir"], "", tuple(d.get("platforms", PLATFORMS)), d["source"], unmapped=d["unmapped"])
    op = db.ops.get(d["op"])
    if op is None:
        problem(f"unknown op {d['op']!r}", "goldens.op")
        return None
    modes = {m.name: m for m in op.modes}
    chosen = {"": d["mode"]} if "mode" in d else dict(d.get("modes", {}))
    for m in chosen.values():
        if m not in modes:
            problem(f"{op.name} has no mode {m!r}", "goldens.mode")
    named = [modes[m] for m in chosen.values() if m in modes] if chosen else list(modes.values())
    operands = {o.name for m in named for o in m.operands}
    type_vars = {v for m in named for v in m.type_vars}
    for stem, operand in d.get("files", {}).items():
        if operand is not None and operand not in operands:
            problem(f"file {stem!r}: no operand {operand!r} in the mode(s)", "goldens.operand")
    for var in [*d.get("types", {}), *d.get("type_words", ())]:
        if var not in type_vars:
            problem(f"types: no type variable {var!r} in the mode(s)", "goldens.type")
    shapes, layouts = _shapes(db, d, operands, problem)
    _check_attrs(db, d, named, problem)
    scalar_ops = {o.name for m in named for o in m.operands if o.role == "scalar"}
    for name, text in d.get("scalars", {}).items():
        if name not in scalar_ops:
            problem(f"scalars: no scalar operand {name!r} in the mode(s)", "goldens.operand")
        _extents([text], f"scalars of {name}", problem)
    out_ops = {o.name for m in named for o in m.operands if o.role == "out"}
    for stem in d.get("initial", ()):
        if d.get("files", {}).get(stem) not in out_ops:
            problem(f"initial: file {stem!r} is no output's file", "goldens.operand")
    file_shapes = {}
    for stem, shape in d.get("file_shapes", {}).items():
        if stem not in d.get("files", {}):
            problem(f"file_shapes: no file {stem!r} in files", "goldens.operand")
        file_shapes[stem] = _extents(shape, f"file_shapes of {stem}", problem)
    return GoldenDir(d["dir"], op.name, tuple(d.get("platforms", PLATFORMS)), d["source"], chosen,
                     dict(d.get("files", {})), {k: v for k, v in shapes.items() if v},
                     {k: v for k, v in layouts.items() if v}, _words(d.get("word")), tuple(d.get("cases", ())),
                     dict(d.get("when", {})),
                     d.get("unmapped"), dict(d.get("types", {})), tuple(d.get("type_words", ())),
                     _views(db, d, operands, problem),
                     dict(d.get("attrs", {})), dict(d.get("attr_params", {})), tuple(d.get("attr_words", ())),
                     {k: str(v) for k, v in d.get("scalars", {}).items()}, file_shapes, tuple(d.get("initial", ())))


def _extents(texts, what: str, problem) -> tuple[Extent, ...]:
    try:
        return tuple(parse_extent(t) for t in texts)
    except ValueError as exc:
        problem(f"{what}: {exc.args[0]} is not an expression of parameter names and integers", "goldens.extent")
        return ()


def _shapes(db: Database, d: dict, operands: set[str], problem) -> tuple[dict, dict]:
    """An entry's ``shapes``: per operand, its valid and tile extents, and its location and layouts."""
    shapes, layouts = {}, {}
    known = {"loc": db.isa.tile_types, "blayout": db.isa.blayouts, "slayout": db.isa.slayouts}
    for operand, kinds in d.get("shapes", {}).items():
        if operand not in operands:
            problem(f"shapes: no operand {operand!r} in the mode(s)", "goldens.operand")
        shapes[operand] = {k: _extents(v, f"shapes of {operand}", problem) for k, v in kinds.items()
                           if k in ("valid", "tile")}
        layouts[operand] = {k: v for k, v in kinds.items() if k in ("loc", "blayout", "slayout")}
        for k, v in layouts[operand].items():
            if v not in known[k]:
                problem(f"shapes of {operand}: no {k} {v!r}", "goldens.layout")
    return shapes, layouts


def _check_attrs(db: Database, d: dict, named: list, problem) -> None:
    """An entry's ``attrs``, ``attr_params`` and ``attr_words`` name attribute operands of its modes (and
    enumerators of theirs)."""
    attr_ops = {o.name: o for m in named for o in m.operands if o.role == "attr"}
    for name, value in d.get("attrs", {}).items():
        o = attr_ops.get(name)
        if o is None:
            problem(f"attrs: no attribute operand {name!r} in the mode(s)", "goldens.attr")
        elif o.enum and value not in db.isa.enums[o.enum].values:
            problem(f"attrs: {value!r} is no enumerator of {o.enum}", "goldens.attr")
    for name in d.get("attr_params", {}):
        if name not in attr_ops:
            problem(f"attr_params: no attribute operand {name!r} in the mode(s)", "goldens.attr")
    for name in d.get("attr_words", ()):
        if name not in attr_ops or not attr_ops[name].enum:
            problem(f"attr_words: no enumerated attribute operand {name!r} in the mode(s)", "goldens.attr")


def _views(db: Database, d: dict, operands: set[str], problem) -> dict[str, View]:
    """An entry's ``views``: the global view each named operand is read through."""
    views = {}
    for operand, v in d.get("views", {}).items():
        if operand not in operands:
            problem(f"views: no operand {operand!r} in the mode(s)", "goldens.operand")
        if v["layout"] not in db.isa.global_layouts:
            problem(f"views of {operand}: no global layout {v['layout']!r}", "goldens.layout")
        views[operand] = View(_extents(v["shape"], f"views of {operand}", problem), v["layout"],
                              _extents(v.get("buffer", ()), f"views of {operand}", problem))
    return views
