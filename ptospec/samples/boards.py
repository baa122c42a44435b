"""The samples whose board-test case is committed in the checkout: ``<Dir>/npu_validation/`` (or
``board_validation/``) with its own ``main.cpp``, ``golden.py`` and ``compare.py``.

Such a ``main.cpp`` is the harness: it reads input files into device buffers, launches one or more kernels in
order on those buffers (``LaunchX(srcDevice0, srcDevice1, dstDevice0, v9, stream)``), and writes the output
buffers back to files.  This module reads that plan from the C++ text and runs the same sequence through
``run_program``, each kernel from the ``.pto`` of the folder that defines it; the golden and compare scripts run
unchanged.  A device buffer no file initialises starts as zeros (the board's are uninitialised).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import PtospecError
from ..executor import numpy_dtype
from ..model import Database
from ..program.api import buffer_argument, entry_function, read_program, run_program
from ..program.walker import Walker, func_signature
from .facts import SampleFacts

_LAUNCH_DEF = re.compile(r"void\s+(Launch\w+)\s*\([^)]*\)\s*\{[^}]*?\b(\w+)\s*<<<\s*(\d+)\s*,", re.S)
_LAUNCH_CALL = re.compile(r"^\s*(Launch\w+)\s*\(([^;]*)\)\s*;", re.M)
_READ = re.compile(r'ReadFile\(\s*"\./(\w+)\.bin"\s*,\s*\w+\s*,\s*(\w+)\s*,')
_WRITE = re.compile(r'WriteFile\(\s*"\./(\w+)\.bin"\s*,\s*(\w+)\s*,')
_COPY = re.compile(r"aclrtMemcpy\(\s*(\w+)\s*,\s*\w+\s*,\s*(\w+)\s*,\s*\w+\s*,\s*"
                   r"ACL_MEMCPY_(HOST_TO_DEVICE|DEVICE_TO_HOST)")
_MALLOC = re.compile(r"aclrtMalloc\(\s*\(void\s*\*\*\)\s*&\s*(\w+)\s*,\s*(\w+)\s*,")
_SIZE = re.compile(r"size_t\s+(\w+)\s*=\s*([^;]+);")
_SCALAR = re.compile(r"\b(?:u?int(?:8|16|32|64)_t|int|float|bool)\s+(\w+)\s*=\s*(-?[0-9.]+f?|true|false)\s*;")


@dataclass(frozen=True)
class Launch:
    kernel: str  # the __global__ function
    blocks: int
    args: tuple[str, ...]  # device buffers and scalar variables of main.cpp


@dataclass(frozen=True)
class BoardCase:
    folder: str  # the sample folder
    path: Path  # the committed case directory
    launches: tuple[Launch, ...]
    inputs: dict[str, str]  # device buffer -> file stem it is read from
    outputs: dict[str, str]  # device buffer -> file stem it is written to
    sizes: dict[str, int]  # device buffer -> bytes
    scalars: dict[str, object]  # main.cpp's scalar variables

    @property
    def name(self) -> str:
        return f"{self.folder}/{self.path.name}"


def find_board_cases(root: Path, facts: SampleFacts) -> list[Path]:
    base = root / facts.directory
    return sorted(p.parent for sub in facts.case_folders for p in base.glob(f"*/{sub}/golden.py"))


def sizes_of(db: Database, facts: SampleFacts) -> dict[str, int]:
    """Bytes of each C type (and host type) an element of a buffer can have."""
    sizes = {d.cpp: d.bits // 8 for d in db.isa.dtypes.values() if d.bits >= 8}
    sizes.update({host: sizes[c] for c, host in facts.host_types.items() if c in sizes})
    return sizes


def read_board_case(path: Path, sizeof: dict[str, int]) -> BoardCase:
    """The plan of a committed case's main.cpp (raises PtospecError, rule samples.board, when it has none)."""
    main = (path / "main.cpp").read_text(encoding="utf-8")
    kernels = {}
    for cpp in sorted(path.glob("*.cpp")):
        for m in _LAUNCH_DEF.finditer(cpp.read_text(encoding="utf-8")):
            kernels[m.group(1)] = (m.group(2), int(m.group(3)))
    launches = []
    for m in _LAUNCH_CALL.finditer(main):
        if m.group(1) not in kernels:
            raise PtospecError(f"{path}: no definition of {m.group(1)} beside main.cpp", rule="samples.board")
        args = tuple(a.strip() for a in m.group(2).split(",") if a.strip() and a.strip() != "stream")
        launches.append(Launch(kernels[m.group(1)][0], kernels[m.group(1)][1], args))
    if not launches:
        raise PtospecError(f"{path}/main.cpp launches no kernel", rule="samples.board")
    h2d = {m.group(1): m.group(2) for m in _COPY.finditer(main) if m.group(3) == "HOST_TO_DEVICE"}
    d2h = {m.group(2): m.group(1) for m in _COPY.finditer(main) if m.group(3) == "DEVICE_TO_HOST"}
    read = {m.group(2): m.group(1) for m in _READ.finditer(main)}
    written = {m.group(2): m.group(1) for m in _WRITE.finditer(main)}
    inputs = {dev: read[host] for dev, host in h2d.items() if host in read}
    outputs = {dev: written[host] for dev, host in d2h.items() if host in written}
    env: dict[str, int] = {}
    for m in _SIZE.finditer(main):
        env[m.group(1)] = _bytes(m.group(2), env, sizeof)
    sizes = {m.group(1): env.get(m.group(2), 0) for m in _MALLOC.finditer(main)}
    scalars = {}
    for m in _SCALAR.finditer(main):
        text = m.group(2)
        scalars[m.group(1)] = (text == "true") if text in ("true", "false") else (
            float(text.rstrip("f")) if "." in text else int(text))
    return BoardCase(path.parent.name, path, tuple(launches), inputs, outputs, sizes, scalars)


def _bytes(expr: str, env: dict[str, int], sizeof: dict[str, int]) -> int:
    """A size expression of main.cpp: a product of integers, earlier sizes and sizeof(T)."""
    total = 1
    for factor in expr.split("*"):
        f = factor.strip()
        if m := re.fullmatch(r"sizeof\(\s*(\w+)\s*\)", f):
            total *= sizeof.get(m.group(1), 0)
        elif f.isdigit():
            total *= int(f)
        elif f in env:
            total *= env[f]
        else:
            return 0
    return total


def kernel_file(case: BoardCase, kernel: str, ir_dump_suffix: str) -> Path | None:
    """The .pto of the sample folder that defines ``kernel`` (None: none does, or several do; an IR dump of the
    assembler, ``ir_dump_suffix``, is none)."""
    found = [p for p in sorted(case.path.parent.glob("*.pto")) if not p.name.endswith(ir_dump_suffix)
             and re.search(rf"func\.func\s+@{re.escape(kernel)}\s*\(", p.read_text(encoding="utf-8"))]
    return found[0] if len(found) == 1 else None


def run_board_case(db: Database, case: BoardCase, work: Path, profile_of,
                   ir_dump_suffix: str) -> tuple[str, dict, list[str], float]:
    """Run the launches of ``case`` on the buffers the golden script wrote in ``work`` and write the output
    files there.  ``profile_of(program)``: the target of a kernel.  Returns (profile, our outputs by file stem,
    findings, seconds); raises PtospecError when a kernel cannot be found or run."""
    buffers: dict[str, np.ndarray] = {}
    profile, findings, seconds = "", [], 0.0
    for launch in case.launches:
        path = kernel_file(case, launch.kernel, ir_dump_suffix)
        if path is None:
            raise PtospecError(f"no single .pto of {case.folder} defines @{launch.kernel}", rule="samples.kernel")
        program = read_program(path)
        profile = profile_of(program)
        probe = Walker(db, program, profile, check=False)
        entry = entry_function(probe, program, launch.kernel)
        params = func_signature(probe, entry)
        if len(params) != len(launch.args):
            raise PtospecError(f"@{launch.kernel} takes {len(params)} arguments, main.cpp passes "
                               f"{len(launch.args)}", rule="samples.board")
        args: dict[str, object] = {}
        for (name, ty), given in zip(params, launch.args, strict=True):
            found = buffer_argument(db, ty)
            if found is None:
                if given not in case.scalars:
                    raise PtospecError(f"main.cpp passes {given} to scalar {name}: no value", rule="samples.board")
                args[name[1:]] = case.scalars[given]
                continue
            dt = numpy_dtype(db, found[0])
            if given not in buffers:
                buffers[given] = _initial(case, given, work, dt)
            args[name[1:]] = buffers[given].view(dt) if buffers[given].dtype != dt else buffers[given]
        result = run_program(db, program, args, profile, func=launch.kernel, blocks=launch.blocks)
        seconds += result.seconds
        findings += result.finding_lines()
        for (name, _), given in zip(params, launch.args, strict=True):
            if given in buffers:
                buffers[given] = np.ascontiguousarray(result.outputs[name[1:]]).reshape(-1)
    ours = {}
    for dev, stem in case.outputs.items():
        if dev not in buffers:
            raise PtospecError(f"no kernel writes {dev} ({stem}.bin)", rule="samples.board")
        buffers[dev].tofile(work / f"{stem}.bin")
        ours[stem] = buffers[dev]
    return profile, ours, findings, seconds


def _initial(case: BoardCase, dev: str, work: Path, dt: np.dtype) -> np.ndarray:
    size = case.sizes.get(dev, 0) // dt.itemsize
    if dev in case.inputs:
        data = np.fromfile(work / f"{case.inputs[dev]}.bin", dtype=dt)
        return data[:size] if size else data
    return np.zeros(size, dtype=dt)
