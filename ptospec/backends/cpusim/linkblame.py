"""Which variants of a unit that failed to link call what is never defined.

A link error names a symbol, not a line of the unit, so it cannot be blamed on a variant the way a
``static_assert`` is.  Here the unit is compiled once to an object with one section per function, linked
(mangled names kept), and each variant's function is followed through the object's relocations (function
-> the functions it calls -> ...) to the undefined references the linker named: one compile and one link
instead of building halves down to single variants.  The answer is cached by the unit's content."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from ...private import read_private, write_private
from .build import COMPILE_TIMEOUT, Builder

_UNDEFINED = re.compile(r"undefined reference to `([^']+)'")
_RELOCATIONS = re.compile(r"^RELOCATION RECORDS FOR \[\.text\.(\S+)\]:")


def undefined_callers(builder: Builder, source: str, functions: Iterable[str]) -> dict[str, str] | None:
    """Function name -> the never-defined symbol (mangled) it reaches, for each of ``functions`` (plain C++
    names of functions at namespace scope) that reaches one; None when the unit cannot be analysed (it does
    not compile to an object, links after all, or there is no objdump)."""
    names = set(functions)
    key = builder.key("link-blame", source, " ".join(sorted(names)))
    entry = builder.cache / "link-blame" / key[:2] / f"{key}.json"
    cached = read_private(entry)
    if cached is not None:
        data = json.loads(cached)
        return data["callers"]
    callers = _analyse(builder, source, names)
    if callers is not None:  # "cannot analyse" may pass (objdump installed, a timeout not repeated): not kept
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_private(entry, json.dumps({"callers": callers}).encode())
    return callers


def _analyse(builder: Builder, source: str, names: set[str]) -> dict[str, str] | None:
    if not shutil.which("objdump"):
        return None
    pch = builder.pch()
    work = builder._scratch()
    try:
        (work / "unit.cpp").write_text(source)
        ok, _ = builder._run([*builder.command("unit.cpp", "unit.o", pch), "-c", "-ffunction-sections"], work,
                             "compiles")
        if not ok:
            return None
        ok, output = builder._run([builder.compiler.path, *builder.flags, "unit.o", "-o", "driver",
                                   "-Wl,--no-demangle"], work, "compiles")
        undefined = set(_UNDEFINED.findall(output))
        if ok or not undefined:
            return None
        return reaching(_calls(work / "unit.o"), undefined, names)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _calls(obj: Path) -> dict[str, set[str]]:
    """Function (mangled) -> the symbols its section refers to."""
    proc = subprocess.run(["objdump", "-r", str(obj)], capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
    calls: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in proc.stdout.splitlines():
        m = _RELOCATIONS.match(line)
        if m:
            current = calls.setdefault(m.group(1), set())
        elif line.startswith("RELOCATION RECORDS FOR"):
            current = None
        elif current is not None:
            parts = line.split()
            if len(parts) >= 3 and re.fullmatch(r"[0-9a-f]+", parts[0]):
                current.add(re.sub(r"[-+]0x[0-9a-f]+$", "", parts[2]).removeprefix(".text."))
    return calls


def reaching(calls: dict[str, set[str]], undefined: set[str], names: set[str]) -> dict[str, str]:
    """Plain name -> an undefined symbol reachable from that function (``_Z<len><name>...`` in ``calls``)."""
    out: dict[str, str] = {}
    for sym in calls:
        m = re.match(r"_ZL?(\d+)", sym)
        name = sym[m.end():m.end() + int(m.group(1))] if m else ""
        if name not in names:
            continue
        seen: set[str] = set()
        todo = [sym]
        while todo:
            s = todo.pop()
            if s in undefined:
                out[name] = s
                break
            if s not in seen:
                seen.add(s)
                todo.extend(calls.get(s, ()))
    return out
