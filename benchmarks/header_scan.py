"""What the element-type static_asserts of pto-isa's headers admit, per call and per code path.

A small reader of the C++ that pto-isa's headers are written in, enough to answer one question:
for an instruction's C++ call (its name, explicit template arguments and arguments, as a mode of the
database spells them) on a profile, and a binding of the operands' element types and locations, does
some ``static_assert`` on the path the compiler would instantiate certainly fail?

- the files of a profile are preprocessed with its macros (``#if defined(PTO_NPU_ARCH_A5) ...``);
- functions are read with their template parameters, parameters and bodies; a call resolves to the
  overloads of that name whose explicit template arguments and arguments fit (kinds and arity);
- a body is a sequence of ``static_assert``, type aliases, calls, and ``if constexpr`` chains whose
  conditions are evaluated when they can be (locations, element types), else both sides are possible;
- conditions and assertions are three-valued: ``std::is_same``, ``sizeof``, ``isSupportType``, the
  ``disjunction``/``conjunction`` of those, named ``constexpr bool`` predicates of the headers and
  ``::Loc == TileType::X`` are known from the binding; anything else is unknown (never a failure).

So a binding is rejected only where every path the call may take fails an assertion: no false
"looser" flag from another op's or another branch's assertions. Nothing is copied from the headers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

MACROS = {"a2a3": {"PTO_NPU_ARCH_A2A3", "__CCE_AICORE__"}, "a5": {"PTO_NPU_ARCH_A5", "__CCE_AICORE__"},
          "cpu": {"__CPU_SIM"}}
DIRS = {"a2a3": ("npu/a2a3", "common"), "a5": ("npu/a5", "common"), "cpu": ("cpu", "common")}
CPP_ALIASES = {"float16_t": "half", "float32_t": "float", "int": "int32_t", "unsigned int": "uint32_t",
               "unsigned": "uint32_t", "bfloat16": "bfloat16_t", "int64": "int64_t"}
UNKNOWN = None  # the third truth value


# ---------------------------------------------------------------- text
def balanced(text: str, start: int, open_: str = "(", close: str = ")") -> int:
    """Index just past the bracket group opening at ``start``."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside (), <> and {} (a ``<`` counts when a name precedes it)."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(text):
        c = text[i]
        if c in "({[" or (c == "<" and re.search(r"[\w:]\s*$", text[:i]) and text[i:i + 2] not in ("<<", "<=")):
            depth += 1
        elif c in ")}]" or (c == ">" and depth > 0 and text[i - 1] != "-" and text[i:i + 2] != ">="):
            depth -= 1
        if depth == 0 and text.startswith(sep, i):
            parts.append("".join(cur))
            cur, i = [], i + len(sep)
            continue
        cur.append(c)
        i += 1
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def preprocess(text: str, defined: set[str]) -> str:
    """Comments dropped, conditional sections kept as the macros ``defined`` select, continuations joined."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S).replace("\\\n", " ")
    out, stack = [], []  # stack of (taking, some branch taken)
    for line in text.splitlines():
        m = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if not m:
            if all(t for t, _ in stack):
                out.append(line)
            continue
        kw, rest = m.groups()
        if kw in ("if", "ifdef", "ifndef"):
            cond = {"if": lambda r: _macro_truth(r, defined), "ifdef": lambda r: r.strip() in defined,
                    "ifndef": lambda r: r.strip() not in defined}[kw](rest)
            stack.append((cond, cond))
        elif kw == "elif" and stack:
            taken = stack[-1][1]
            cond = not taken and _macro_truth(rest, defined)
            stack[-1] = (cond, taken or cond)
        elif kw == "else" and stack:
            stack[-1] = (not stack[-1][1], True)
        elif kw == "endif" and stack:
            stack.pop()
    return "\n".join(out)


def _macro_truth(expr: str, defined: set[str]) -> bool:
    expr = expr.strip()
    for op, fold in (("||", any), ("&&", all)):
        parts = split_top(expr, op)
        if len(parts) > 1:
            return fold(_macro_truth(p, defined) for p in parts)
    if expr.startswith("!"):
        return not _macro_truth(expr[1:], defined)
    if expr.startswith("(") and balanced(expr, 0) == len(expr):
        return _macro_truth(expr[1:-1], defined)
    m = re.fullmatch(r"defined\s*\(?\s*(\w+)\s*\)?", expr)
    return bool(m and m.group(1) in defined)


# ---------------------------------------------------------------- functions
@dataclass(frozen=True)
class TParam:
    name: str
    kind: str  # "type", a C++ type name for a non-type parameter, or "pack"
    default: bool
    default_text: str = ""  # a non-type parameter's default argument as written (true, ReluPreMode::NoRelu)


@dataclass
class Function:
    name: str
    tparams: list[TParam]
    params: list[tuple[str, str, bool]]  # (type text, name, has default)
    body: str
    file: str
    items: list | None = None


def template_params(text: str) -> list[TParam]:
    out = []
    for p in split_top(text, ","):
        if not p:
            continue
        default = "=" in split_top(p, "=")[0] or len(split_top(p, "=")) > 1
        head = split_top(p, "=")[0].strip()
        if head.startswith("std::enable_if"):
            out.append(TParam("", "enable_if", True))
            continue
        m = re.fullmatch(r"(typename|class)\s*(\.\.\.)?\s*(\w*)", head)
        if m:
            out.append(TParam(m.group(3), "pack" if m.group(2) else "type", default))
            continue
        m = re.fullmatch(r"(.+?)\s*(\.\.\.)?\s*(\w+)", head)
        if m:
            given = split_top(p, "=")[1].strip() if len(split_top(p, "=")) > 1 else ""
            out.append(TParam(m.group(3), "pack" if m.group(2) else m.group(1).split("::")[-1].strip(), default,
                              given))
    return out


def function_params(text: str) -> list[tuple[str, str, bool]]:
    out = []
    for p in split_top(text, ","):
        if not p or p == "void":
            continue
        head = split_top(p, "=")
        m = re.fullmatch(r"(.*?)[\s&*]*(\w+)", head[0].strip(), flags=re.S)
        if m:
            out.append((m.group(1).strip(), m.group(2), len(head) > 1))
    return out


SKIP_HEADS = re.compile(r"(?:^|\W)(if|for|while|switch|else|do|return|catch)\s*$")


def functions_of(text: str, file: str) -> list[Function]:
    """Every function defined in ``text`` (namespaces and structs are entered, other bodies skipped)."""
    found, i, head_start = [], 0, 0
    while i < len(text):
        c = text[i]
        if c in ";}":
            head_start = i + 1
        elif c == "{":
            head = text[head_start:i].strip()
            fn = _function_head(head, file)
            if fn is not None:
                end = balanced(text, i, "{", "}")
                fn.body = text[i + 1:end - 1]
                found.append(fn)
                i, head_start = end, end
                continue
            head_start = i + 1
        i += 1
    return found


def _function_head(head: str, file: str) -> Function | None:
    tparams: list[TParam] = []
    head = re.sub(r"^(?:\s*(?:public|private|protected)\s*:)+", "", head).strip()
    m = re.match(r"template\s*<", head)
    if m:
        end = balanced(head, m.end() - 1, "<", ">")
        tparams = template_params(head[m.end():end - 1])
        head = head[end:].strip()
    head = re.sub(r"\)\s*(?:const|noexcept|override|final|->\s*[\w:<>]+|\s)*$", ")", head)
    if not head.endswith(")") or "=" in head.split("(")[0] or SKIP_HEADS.search(head.split("(")[0]):
        return None
    depth, j = 0, len(head) - 1
    while j >= 0:
        depth += {")": 1, "(": -1}.get(head[j], 0)
        if depth == 0:
            break
        j -= 1
    m = re.search(r"(~?\w+)\s*$", head[:j])
    if not m or m.group(1) in ("if", "while", "for", "switch", "sizeof", "static_assert") or "[" in head[:j]:
        return None
    return Function(m.group(1), tparams, function_params(head[j + 1:-1]), "", file)


# ---------------------------------------------------------------- bodies
def statement_end(body: str, j: int) -> int:
    """Index just past the statement starting at ``j``: a block, a run-time ``if``/``else`` chain, or up to ``;``."""
    j = len(body) - len(body[j:].lstrip())
    m = re.compile(r"if\s*\(").match(body, j)
    if m:
        end = statement_end(body, balanced(body, m.end() - 1))
        e = re.compile(r"\s*else\b").match(body, end)
        return statement_end(body, e.end()) if e else end
    if body.startswith("{", j):
        return balanced(body, j, "{", "}")
    return body.find(";", j) + 1 or len(body)


def parse_items(body: str) -> list:
    """("assert", expr) | ("alias", name, type) | ("let", name, bool expr) | ("call", name, targs|None, args) |
    ("if", [(cond|None, items)])."""
    items, i = [], 0
    pat = re.compile(r"static_assert\s*\(|using\s+(\w+)\s*=|typedef\s|if\s+constexpr\s*\(|"
                     r"(?<![\w.>:])(?:static\s+)?constexpr\s+bool\s+(\w+)\s*=|"
                     r"(?<![\w.>:])([A-Za-z_]\w*)\s*(<|\()")
    while True:
        m = pat.search(body, i)
        if not m:
            return items
        s = m.group(0)
        if s.startswith("static_assert"):
            end = balanced(body, m.end() - 1)
            items.append(("assert", split_top(body[m.end():end - 1], ",")[0]))
            i = end
        elif m.group(2):  # a local constexpr bool: its condition, read where the name is used
            end = body.find(";", m.end())
            items.append(("let", m.group(2), body[m.end():end].strip()))
            i = end + 1
        elif s.startswith("using"):
            end = body.find(";", m.end())
            items.append(("alias", m.group(1), body[m.end():end].strip()))
            i = end + 1
        elif s.startswith("typedef"):
            end = body.find(";", m.end())
            decl = body[m.end():end].strip()
            mm = re.match(r"(.*?)\s*(\w+)$", decl, flags=re.S)
            if mm:
                items.append(("alias", mm.group(2), mm.group(1)))
            i = end + 1
        elif re.match(r"if\s+constexpr", s):
            branches, j = [], m.start()
            while True:
                cm = re.compile(r"(?:if\s+constexpr\s*\(|\{)").match(body, j)
                if cm is None:
                    break
                cond = None
                if cm.group(0) != "{":
                    cend = balanced(body, cm.end() - 1)
                    cond = body[cm.end():cend - 1]
                    j = body.index("{", cend) if body[cend:].lstrip().startswith("{") else cend
                if not body[j:].startswith("{"):  # a braceless branch: one statement
                    end = body.find(";", j) + 1 or len(body)
                else:
                    end = balanced(body, j, "{", "}")
                branches.append((cond, parse_items(body[j:end])))
                e = re.compile(r"\s*else\s*").match(body, end)
                if cond is None or not e:
                    j = end
                    break
                j = e.end()
                if re.compile(r"if\s*\(").match(body, j):  # else holds a run-time if: the whole statement
                    end = statement_end(body, j)
                    branches.append((None, parse_items(body[j:end])))
                    j = end
                    break
            items.append(("if", branches))
            i = max(j, m.end())
        else:
            name, j = m.group(3), m.end() - 1
            targs = None
            if m.group(4) == "<":
                end = balanced(body, j, "<", ">")
                rest = body[end:].lstrip()
                if not rest.startswith("("):
                    i = m.end()
                    continue
                targs = split_top(body[j + 1:end - 1], ",")
                j = end + len(body[end:]) - len(rest)
            end = balanced(body, j)
            args = [a for a in split_top(body[j + 1:end - 1], ",") if a]
            if name.startswith("MAP_INSTR_IMPL") and args:  # the public API's forwarding macros
                skip = name.count("_T") + name.count("_OUTS") + name.count("_ROLES")
                if "_T" in name and len(args) > 1:
                    inner = re.fullmatch(r"PTO_TEMPLATE_ARGS\((.*)\)", args[1], flags=re.S)
                    targs = split_top(inner.group(1), ",") if inner else None
                name, args = args[0] + "_IMPL", args[1 + skip:]
            items.append(("call", name, targs, args))
            items.extend(parse_items(body[j + 1:end - 1]))
            i = end
    return items


TYPE_TEST = re.compile(r"is_same|sizeof|isSupportType|SupportBytes|\bIs[A-Z]\w*\s*<")


def mark_type_dispatch(items: list) -> list:
    """``items`` of a function returning no value whose body is one ``if constexpr`` chain over element types,
    each branch calling something, and no ``else`` (besides aliases and assertions: GenCastCallSpecialCases, one
    intrinsic per type pair) marked
    ``("if", branches, "dispatch")``: a type no branch takes does nothing there, so it is not admitted."""
    work = [i for i in items if i[0] not in ("alias", "assert")]
    if len(work) != 1 or work[0][0] != "if":
        return items
    branches = work[0][1]
    if len(branches) < 2 or branches[-1][0] is None or not all(TYPE_TEST.search(c) for c, _ in branches):
        return items
    if not all(_calls(b) for _, b in branches):  # a chain of assertions only (A5 CheckMadValid) checks, not dispatches
        return items
    return [("if", i[1], "dispatch") if i is work[0] else i for i in items]


def _calls(items: list) -> bool:
    """Whether ``items`` (or a branch inside them) call a function."""
    return any(i[0] == "call" or (i[0] == "if" and any(_calls(b) for _, b in i[1])) for i in items)


# ---------------------------------------------------------------- the header set of a profile
# a struct template whose only member is ``static constexpr bool value = ...;`` (A5 IsValidGatherDType, a
# disjunction of is_same): a predicate like a ``constexpr bool`` variable template, unless it is specialised
STRUCT_PREDICATE = re.compile(r"template\s*<([^>]*)>\s*struct\s+(\w+)\s*\{\s*static\s+constexpr\s+bool\s+value"
                              r"\s*=\s*([^;]*);\s*\}\s*;")
@dataclass
class Headers:
    functions: dict[str, list[Function]]
    predicates: dict[str, tuple[list[TParam], str]]  # name -> (template params, bool expression)
    cpp_dtype: dict[str, str]  # C++ element type -> database dtype
    widths: dict[str, int]  # database dtype -> bytes

    @classmethod
    def read(cls, root: Path, profile: str, cpp_dtype: dict[str, str], widths: dict[str, int],
             extra_macros: frozenset[str] | set[str] = frozenset()) -> Headers:
        texts = {str(path.relative_to(root)): path.read_text(errors="replace")
                 for d in DIRS[profile] for path in sorted((root / "include/pto" / d).rglob("*.hpp"))}
        return cls.parse(texts, MACROS[profile] | set(extra_macros), cpp_dtype, widths)

    @classmethod
    def parse(cls, texts: dict[str, str], macros: set[str], cpp_dtype: dict[str, str],
              widths: dict[str, int]) -> Headers:
        functions: dict[str, list[Function]] = {}
        predicates: dict[str, tuple[list[TParam], str]] = {}
        specialised: set[str] = set()
        for name, raw in texts.items():
            text = preprocess(raw, macros)
            for fn in functions_of(text, name):
                functions.setdefault(fn.name, []).append(fn)
            for m in re.finditer(r"template\s*<([^>]*)>\s*(?:inline\s+)?constexpr\s+bool\s+(\w+)\s*=\s*([^;]*);", text):
                predicates[m.group(2)] = (template_params(m.group(1)), m.group(3))
            for m in STRUCT_PREDICATE.finditer(text):  # read as Name<T>::value
                predicates[m.group(2)] = (template_params(m.group(1)), m.group(3))
            specialised |= set(re.findall(r"\bstruct\s+(\w+)\s*<", text))
        for name in specialised & predicates.keys():  # a specialisation may answer otherwise: unknown
            del predicates[name]
        return cls(functions, predicates, cpp_dtype, widths)


# ---------------------------------------------------------------- values and evaluation
@dataclass(frozen=True)
class Tile:
    """A template type argument that is an operand's tile type."""

    dtype: str | None
    loc: str | None
    conv: bool = False  # a ConvTile (is_conv_tile_v), not a Tile
    glob: bool = False  # a GlobalTensor (is_global_data_v)


@dataclass(frozen=True)
class Elem:
    """An element type: a database dtype, a C++ type the database lacks (``foreign``), or unknown."""

    dtype: str | None = None
    foreign: str = ""


@dataclass(frozen=True)
class Value:
    """A non-type template argument: its C++ type, and its enumerator when the call names one."""

    kind: str
    value: str | None = None  # "ElementOp::OP_MUL"


@dataclass(frozen=True)
class Let:
    """A local ``constexpr bool`` of a body (CheckMadMxValid's ``isFp4``): its condition, read where it is used."""

    expr: str


@dataclass
class Scope:
    names: dict[str, object] = field(default_factory=dict)  # template/type names -> Tile | Elem | Value
    objects: dict[str, Tile] = field(default_factory=dict)  # parameter names -> tile types


def and3(values) -> bool | None:
    out: bool | None = True
    for v in values:
        if v is False:
            return False
        if v is UNKNOWN:
            out = UNKNOWN
    return out


def or3(values) -> bool | None:
    out: bool | None = False
    for v in values:
        if v is True:
            return True
        if v is UNKNOWN:
            out = UNKNOWN
    return out


class Evaluator:
    def __init__(self, headers: Headers):
        self.h = headers
        self.memo: dict[tuple, bool] = {}

    # types
    def type_of(self, text: str, scope: Scope) -> object:
        t = re.sub(r"\b(typename|const|volatile|std::|pto::|__gm__|__ubuf__)\s*", "", text).strip().rstrip("&* ")
        t = CPP_ALIASES.get(t, t)
        m = re.fullmatch(r"(\w+)::DType", t)
        if m:
            base = scope.names.get(m.group(1))
            return Elem(base.dtype) if isinstance(base, Tile) else Elem()
        m = re.fullmatch(r"decltype\((\w+)\)::DType", t)
        if m and m.group(1) in scope.objects:
            return Elem(scope.objects[m.group(1)].dtype)
        if t in scope.names:
            return scope.names[t]
        if t in self.h.cpp_dtype:
            return Elem(self.h.cpp_dtype[t])
        if re.fullmatch(r"(u?int\d+_t|\w*float\w*_t|half|float|double|bool)", t):
            return Elem(foreign=t)
        return Elem()

    def same(self, a: object, b: object) -> bool | None:
        if not (isinstance(a, Elem) and isinstance(b, Elem)):
            return UNKNOWN
        if a.foreign or b.foreign:
            return (a.foreign == b.foreign) if (a.foreign and b.foreign) else (
                False if (a.dtype or b.dtype) else UNKNOWN)
        if a.dtype is None or b.dtype is None:
            return UNKNOWN
        return a.dtype == b.dtype

    def size(self, text: str, scope: Scope) -> int | None:
        t = self.type_of(text, scope)
        if isinstance(t, Elem):
            if t.dtype:
                return self.h.widths[t.dtype]
            if t.foreign:
                return {"half": 2, "float": 4, "double": 8, "bool": 1}.get(t.foreign) or (
                    int(re.search(r"(\d+)", t.foreign).group(1)) // 8 if re.search(r"\d+", t.foreign) else None)
        return None

    # conditions
    def truth(self, expr: str, scope: Scope, depth: int = 0) -> bool | None:
        e = expr.strip()
        if depth > 30 or not e:
            return UNKNOWN
        for op, fold in (("||", or3), ("&&", and3)):
            parts = split_top(e, op)
            if len(parts) > 1:
                return fold(self.truth(p, scope, depth + 1) for p in parts)
        held = scope.names.get(e)
        if isinstance(held, Value) and held.value in ("true", "false"):
            return held.value == "true"
        if isinstance(held, Let):
            return self.truth(held.expr, scope, depth + 1)
        if e.startswith("!") and not e.startswith("!="):
            v = self.truth(e[1:], scope, depth + 1)
            return UNKNOWN if v is UNKNOWN else not v
        if e.startswith("(") and balanced(e, 0) == len(e):
            return self.truth(e[1:-1], scope, depth + 1)
        m = re.fullmatch(r"(?:std::)?is_same(?:_v)?\s*<(.*)>(?:\s*::\s*value|\s*\{\s*\}|\s*\(\s*\))?", e, flags=re.S)
        if m:
            args = split_top(m.group(1), ",")
            return self.same(self.type_of(args[0], scope), self.type_of(args[1], scope)) if len(args) == 2 else UNKNOWN
        m = re.fullmatch(r"(?:std::)?(disjunction|conjunction)(?:_v)?\s*<(.*)>(?:\s*::\s*value)?", e, flags=re.S)
        if m:
            parts = [self.truth(p, scope, depth + 1) for p in split_top(m.group(2), ",")]
            return or3(parts) if m.group(1) == "disjunction" else and3(parts)
        m = re.fullmatch(r"(?:pto::)?isSupportType\s*<(.*)>", e, flags=re.S)
        if m:
            args = split_top(m.group(1), ",")
            t = self.type_of(args[0], scope)
            return or3(self.same(t, self.type_of(a, scope)) for a in args[1:])
        m = re.fullmatch(r"(?:pto::)?SupportBytes\s*<(.*)>\s*\(\s*\)", e, flags=re.S)
        if m:  # A5's variadic size test: sizeof(T) is one of the listed byte counts
            args = split_top(m.group(1), ",")
            width = self.size(args[0], scope)
            return UNKNOWN if width is None or not all(a.isdigit() for a in args[1:]) else str(width) in args[1:]
        m = re.fullmatch(r"(?:pto::)?(is_conv_tile|is_tile_data|is_global_data)(?:_v\s*<(.*)>|\s*<(.*)>\s*::\s*value)",
                         e, flags=re.S)
        if m:
            tile = self.type_of(m.group(2) or m.group(3), scope)
            if not isinstance(tile, Tile):
                return UNKNOWN
            return {"is_conv_tile": tile.conv, "is_global_data": tile.glob,
                    "is_tile_data": not (tile.conv or tile.glob)}[m.group(1)]
        m = re.fullmatch(r"(\w+)\s*<(.*)>(?:\s*::\s*value)?", e, flags=re.S)
        if m and m.group(1) in self.h.predicates:
            params, body = self.h.predicates[m.group(1)]
            args = split_top(m.group(2), ",")
            inner = Scope(dict(scope.names), dict(scope.objects))
            for p, a in zip(params, args, strict=False):
                inner.names[p.name] = self.type_of(a, scope) if p.kind == "type" else self.argument(a, scope)
            return self.truth(body, inner, depth + 1)
        m = re.fullmatch(r"(.+?)\s*(==|!=|<=|>=|<|>)\s*(.+)", e, flags=re.S)
        if m:
            return self.compare(m.group(1).strip(), m.group(2), m.group(3).strip(), scope)
        return UNKNOWN

    def compare(self, left: str, op: str, right: str, scope: Scope) -> bool | None:
        def number(side: str) -> int | None:
            mm = re.fullmatch(r"sizeof\s*\((.*)\)", side, flags=re.S)
            if mm:
                return self.size(mm.group(1), scope)
            mm = re.fullmatch(r"(\d+)[uUlL]*", side)
            return int(mm.group(1)) if mm else None

        lm = re.fullmatch(r"(?:typename\s+)?(\w+)::Loc", left)
        rm = re.fullmatch(r"(?:pto::)?TileType::(\w+)", right)
        if lm and rm and op in ("==", "!="):
            tile = scope.names.get(lm.group(1))
            if not isinstance(tile, Tile) or tile.loc is None:
                return UNKNOWN
            return (tile.loc == rm.group(1)) == (op == "==")
        enum = re.fullmatch(r"(?:\w+::)*(\w+::\w+)", right)
        held = scope.names.get(left)
        if enum and isinstance(held, Value) and op in ("==", "!="):
            return UNKNOWN if held.value is None else (held.value == enum.group(1)) == (op == "==")
        a, b = number(left), number(right)
        if a is None or b is None:
            return UNKNOWN
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]

    # calls
    def bind(self, fn: Function, targs: list[str] | None, args: list[str], scope: Scope) -> Scope | None:
        """The callee's scope for this call, or None when the overload cannot take it."""
        plain = [p for p in fn.tparams if p.kind not in ("pack", "enable_if")]
        targs = targs or []
        if len(targs) > len(plain) and not any(p.kind == "pack" for p in fn.tparams):
            return None
        fixed = [p for p in fn.params if "..." not in p[0]]  # a pack of wait events takes none of our arguments
        required = sum(1 for p in fixed if not p[2])
        if not (required <= len(args) <= len(fixed)):
            return None
        inner = Scope()
        for p, a in zip(plain, targs, strict=False):
            value = self.argument(a, scope)
            if p.kind == "type":
                if isinstance(value, Value):
                    return None
                inner.names[p.name] = value
            else:
                if isinstance(value, (Tile, Elem)) and not re.fullmatch(r"[\w:]+", a):
                    return None
                if isinstance(value, Value) and value.kind not in (p.kind, "?", "auto") and p.kind != "auto":
                    return None  # an enumerator of another enum ("auto": forwarded from an ``auto`` parameter)
                if isinstance(value, Tile):
                    return None
                kind = value.kind if p.kind == "auto" and isinstance(value, Value) else p.kind
                inner.names[p.name] = Value(kind, value.value if isinstance(value, Value) else None)
        for (ptype, pname, _), a in zip(fn.params, args, strict=False):
            obj = scope.objects.get(re.sub(r"\.data\(\)$", "", a.strip().lstrip("&*")))
            t = re.sub(r"\b(typename|const)\s*|[&*\s]", "", ptype)
            tm = re.fullmatch(r"(\w+)(?:::TileDType)?", t)
            if obj is not None and tm:
                if tm.group(1) in inner.names and not isinstance(inner.names[tm.group(1)], Tile):
                    continue
                inner.names.setdefault(tm.group(1), obj)
                inner.objects[pname] = obj
        for ptype, pname, _ in fn.params[:len(args)]:  # a scalar parameter has its declared type
            if pname not in inner.objects and pname not in inner.names:
                declared = self.type_of(ptype, inner)
                if isinstance(declared, Elem) and (declared.dtype or declared.foreign):
                    inner.names[pname] = declared
        for p in plain[len(targs):]:
            if p.kind != "type" and p.default_text and p.name not in inner.names:
                inner.names[p.name] = self.argument(p.default_text, Scope())
        missing = [p for p in plain[len(targs):] if not p.default and p.name not in inner.names]
        if missing and any(p.kind != "type" for p in missing):
            return None
        given = " ".join(ptype for ptype, _, _ in fn.params[:len(args)])
        if any(not re.search(rf"\b{re.escape(p.name)}\b", given) for p in missing):
            return None  # a type parameter neither given nor deducible from an argument: not viable
        return inner

    def argument(self, text: str, scope: Scope) -> object:
        t = text.strip()
        if t in scope.names:
            return scope.names[t]
        if re.fullmatch(r"[\w:]+::\w+", t) and not t.endswith("::DType"):
            return Value(t.split("::")[-2], "::".join(t.split("::")[-2:]))  # an enumerator: ReluPreMode::NoRelu
        if re.fullmatch(r"-?\d+[uUlL]*|true|false", t):
            return Value("?", t)
        return self.type_of(t, scope)

    def call_admits(self, name: str, targs, args, scope: Scope, depth: int, seen: frozenset) -> bool:
        fns = self.h.functions.get(name, [])
        scopes = [(fn, s) for fn in fns if (s := self.bind(fn, targs, args, scope)) is not None]
        if not scopes:
            return True  # not a function of these headers (an intrinsic), or not resolvable: no verdict
        return any(self.admits(fn, s, depth + 1, seen) for fn, s in self.best_viable(scopes, args, scope))

    def best_viable(self, scopes: list, args: list[str], scope: Scope) -> list:
        """The overloads overload resolution may pick: those no other takes with exact argument types where
        they need a conversion (an argument of a known element type against a parameter of a known type)."""
        if len(scopes) < 2:
            return scopes

        def ranks(fn: Function, inner: Scope) -> tuple[int, ...]:
            out = []
            for (ptype, _, _), a in zip(fn.params, args, strict=False):
                arg = self.argument(a, scope)
                exact = self.same(self.type_of(ptype, inner), arg) if isinstance(arg, Elem) else UNKNOWN
                out.append(0 if exact is UNKNOWN else (1 if exact else -1))
            return tuple(out + [0] * (len(args) - len(out)))

        scored = [(fn, s, ranks(fn, s)) for fn, s in scopes]
        return [(fn, s) for fn, s, r in scored
                if not any(all(x >= y for x, y in zip(o, r, strict=True)) and o != r for _, _, o in scored)]

    def admits(self, fn: Function, scope: Scope, depth: int = 0, seen: frozenset = frozenset()) -> bool:
        key = (id(fn), tuple(sorted((k, repr(v)) for k, v in scope.names.items())))
        if depth > 14 or key in seen:
            return True
        if key in self.memo:
            return self.memo[key]
        if fn.items is None:
            items = parse_items(fn.body)
            fn.items = items if re.search(r"\breturn\s*[^;\s]", fn.body) else mark_type_dispatch(items)
        result = self.items_admit(fn.items, Scope(dict(scope.names), dict(scope.objects)), depth, seen | {key})
        self.memo[key] = result
        return result

    def items_admit(self, items: list, scope: Scope, depth: int, seen: frozenset) -> bool:
        for item in items:
            if item[0] == "alias":
                scope.names[item[1]] = self.type_of(item[2], scope)
            elif item[0] == "let":
                scope.names[item[1]] = Let(item[2])
            elif item[0] == "assert":
                if self.truth(item[1], scope) is False:
                    return False
            elif item[0] == "call":
                if not self.call_admits(item[1], item[2], item[3], scope, depth, seen):
                    return False
            else:
                possible = []
                for cond, body in item[1]:
                    value = True if cond is None else self.truth(cond, scope)
                    if value is False:
                        continue
                    possible.append(body)
                    if value is True:
                        break
                else:
                    if item[1] and item[1][-1][0] is not None and len(item) < 3:
                        possible.append([])  # no branch taken (a type dispatch does nothing then: not admitted)
                if not any(self.items_admit(b, Scope(dict(scope.names), dict(scope.objects)), depth, seen)
                           for b in possible):
                    return False
        return True
