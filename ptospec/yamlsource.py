"""Read YAML safely and remember where every value came from.

``yaml.safe_load`` gives data without positions, so the document is also
composed into nodes (still the safe loader) to map each path such as
``("modes", "index", "operands", 0)`` to its line.  Duplicate keys, which
PyYAML silently collapses, are reported here.

Hostile files are refused before they can cost much: a size limit, and a limit on
the document's size and depth *after* aliases are expanded (``&a [*b, *b]`` chains
double at every line, so a few lines would otherwise expand to billions of nodes).
"""

from __future__ import annotations

import marshal
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError
from .located import Located, PathKey

# The safe loader only (never the full one); libyaml's C implementation when PyYAML has it.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_BYTES = 1 << 20  # the largest spec file is about 30 kB
MAX_NODES = 200_000  # nodes of the document with every alias expanded
MAX_DEPTH = 64  # nesting of mappings and sequences
_STR_TAG = "tag:yaml.org,2002:str"


def read_spec_bytes(path: Path, display: str | None = None) -> bytes:
    """The bytes of a spec file, with the size limit applied before reading: only a regular file is read (a
    pipe, a device or ``/dev/zero`` behind a link is refused without blocking), at most ``MAX_BYTES``."""
    display = display or os.fsdecode(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without waiting for a writer
    except OSError as exc:
        raise SpecError(f"cannot read file: {exc.strerror or exc}", where=display, rule="yaml.read") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SpecError("not a regular file (a pipe, a device or a folder)", where=display, rule="yaml.read")
        if info.st_size > MAX_BYTES:
            raise SpecError(f"file is larger than {MAX_BYTES} bytes", where=display, rule="yaml.too-large")
        try:
            data = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise SpecError(f"cannot read file: {exc.strerror or exc}", where=display, rule="yaml.read") from None
    if len(data) > MAX_BYTES:  # it grew since
        raise SpecError(f"file is larger than {MAX_BYTES} bytes", where=display, rule="yaml.too-large")
    return data


def read_yaml(path: Path, display: str | None = None) -> Located:
    display = display or os.fsdecode(path)
    try:
        text = read_spec_bytes(path, display).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError("file is not UTF-8 text", where=display, rule="yaml.read") from exc
    return parse_yaml(text, display)


_PARSED: dict[str, bytes] = {}  # text -> its data and line map (marshal), for documents read before
_PARSED_MAX = 256  # documents remembered (a database has about a hundred files)


def parse_yaml(text: str, display: str) -> Located:
    """The document in ``text`` with the line of every value.  A text parsed before in this process (a
    database loaded again) is not parsed again: its data is rebuilt, as new objects, from a copy."""
    if len(text) > MAX_BYTES:
        raise SpecError(f"file is larger than {MAX_BYTES} bytes", where=display, rule="yaml.too-large")
    known = _PARSED.get(text)
    if known is not None:
        data, lines = marshal.loads(known)
        return Located(data, display, lines)
    located = _parse(text, display)
    try:
        blob = marshal.dumps((located.data, located.lines))
    except ValueError:  # a value marshal cannot copy (a YAML timestamp): not remembered
        return located
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[text] = blob
    return located


def _parse(text: str, display: str) -> Located:
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()  # one parse: positions from the nodes, data constructed from them
        if node is not None:
            _check_size(node, display)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = exc.problem or exc.context or "malformed YAML"
        raise SpecError(f"YAML syntax error: {problem}", where=f"{display}:{line}", rule="yaml.syntax") from exc
    except yaml.reader.ReaderError as exc:  # a character YAML refuses: its line, and one line of message
        line = text.count("\n", 0, exc.position) + 1
        problem = str(exc).splitlines()[0]
        raise SpecError(f"YAML syntax error: {problem}", where=f"{display}:{line}", rule="yaml.syntax") from exc
    except yaml.YAMLError as exc:
        raise SpecError(f"YAML error: {' '.join(str(exc).split())}", where=display, rule="yaml.syntax") from exc
    except (RecursionError, MemoryError):
        raise SpecError("YAML document is nested too deeply", where=display, rule="yaml.too-deep") from None
    finally:
        loader.dispose()
    lines: dict[PathKey, int] = {}
    if node is not None:
        _index(node, (), lines, display)
    return Located(data, display, lines)


def _within_limits(root: yaml.Node) -> bool:
    """Whether the document, aliases expanded, has at most ``MAX_NODES`` values and ``MAX_DEPTH`` levels:
    a walk level by level that stops as soon as either limit is passed (a recursive alias passes the
    depth limit), so it costs at most about ``MAX_NODES`` steps.  ``_check_size`` says what is wrong."""
    level, count = [root], 0
    for _depth in range(MAX_DEPTH):
        count += len(level)
        if count > MAX_NODES:
            return False
        below: list[yaml.Node] = []
        for node in level:
            if isinstance(node, yaml.MappingNode):
                for pair in node.value:
                    below += pair
            elif isinstance(node, yaml.SequenceNode):
                below += node.value
        if not below:
            return True
        level = below
    return False


def _check_size(root: yaml.Node, display: str) -> None:
    """Refuse documents that are too big or too deep once aliases are expanded (no recursion here)."""
    if _within_limits(root):
        return
    expanded: dict[int, int] = {}  # id(node) -> node count of its expansion
    depth_of: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    on_path: set[int] = set()
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if depth > MAX_DEPTH:
            raise SpecError(f"YAML nested deeper than {MAX_DEPTH} levels",
                            where=f"{display}:{node.start_mark.line + 1}", rule="yaml.too-deep")
        children = _children(node)
        if done:
            on_path.discard(key)
            expanded[key] = 1 + sum(expanded[id(c)] for c in children)
            depth_of[key] = 1 + max((depth_of[id(c)] for c in children), default=0)
            if expanded[key] > MAX_NODES:
                raise SpecError(f"YAML document expands to more than {MAX_NODES} values (aliases?)",
                                where=f"{display}:{node.start_mark.line + 1}", rule="yaml.too-large")
            continue
        if key in expanded:
            if depth + depth_of[key] - 1 > MAX_DEPTH:
                raise SpecError(f"YAML nested deeper than {MAX_DEPTH} levels",
                                where=f"{display}:{node.start_mark.line + 1}", rule="yaml.too-deep")
            continue
        if key in on_path:
            raise SpecError("recursive YAML alias", where=f"{display}:{node.start_mark.line + 1}",
                            rule="yaml.recursive")
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _index(node: yaml.Node, path: PathKey, lines: dict[PathKey, int], display: str) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if key_node.tag != _STR_TAG:
                raise SpecError(f"mapping keys must be plain names, got {key!r} ({key_node.tag.rsplit(':', 1)[-1]})",
                                where=f"{display}:{key_node.start_mark.line + 1}", rule="yaml.key")
            line = key_node.start_mark.line + 1
            if key in seen:
                raise SpecError(
                    f"duplicate key {key!r} (first at line {seen[key]})",
                    where=f"{display}:{line}",
                    rule="yaml.duplicate-key",
                )
            seen[key] = line
            lines[(*path, key)] = line
            _index(value_node, (*path, key), lines, display)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(item, (*path, i), lines, display)
