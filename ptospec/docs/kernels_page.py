"""The site page walking whole kernels: the kernels of ``docs/examples/`` (written in the PTO assembler's
dialect), and what ``ptospec check-program`` and ``ptospec run-program`` say about them.

Nothing on the page is pasted: the sources are read from the files, the commands are run in-process when the
site is generated (on inputs made here from fixed seeds), and their output is shown as printed, with only the
timings and temporary folders blanked so that the page is the same on every build (``docs build --check``
then notices a kernel or a command whose output changed).
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..memo import PerDatabase
from ..model import Database
from .labels import label
from .markdown import HEADER, code, fence
from .pages import language_link

PATH = "kernels.md"
EXAMPLES = Path("docs") / "examples"  # beside specs/, in the repository


@dataclass(frozen=True)
class Kernel:
    file: str
    key: str  # labels kernel_<key>_*
    inputs: Callable[[], dict[str, np.ndarray]]  # argument files, from fixed seeds
    scalars: dict[str, int]
    expected: Callable[[dict[str, np.ndarray]], tuple[str, np.ndarray]]  # (output name, NumPy's result)


def _softmax_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2024)
    x = (rng.standard_normal((32, 32)) * 4).astype(np.float32)
    return {"x": x, "y": np.zeros_like(x)}


def _softmax_expected(args: dict[str, np.ndarray]) -> tuple[str, np.ndarray]:
    x = args["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return "y", e / e.sum(axis=1, keepdims=True)


def _matmul_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2025)
    return {"a": rng.integers(-4, 5, (16, 48)).astype(np.float16),
            "b": rng.integers(-4, 5, (48, 16)).astype(np.float16), "c": np.zeros((16, 16), np.float32)}


def _matmul_expected(args: dict[str, np.ndarray]) -> tuple[str, np.ndarray]:
    return "c", args["a"].astype(np.float64) @ args["b"].astype(np.float64)


KERNELS = (
    Kernel("softmax_rows.pto", "softmax", _softmax_inputs, {"n": 32}, _softmax_expected),
    Kernel("matmul_k_loop.pto", "matmul", _matmul_inputs, {"kb": 3}, _matmul_expected),
)
# The finding walked through: the matrix kernel with its Left tile declared ZZ (row-major blocks) instead of NZ.
FINDING = ("matmul_k_loop.pto", "!left = ", "blayout=col_major", "blayout=row_major")

_TIMES = (re.compile(r"\(\d+\.\d+ s\)"), re.compile(r"in \d+\.\d+ s \([\d,.]+ statements/s\)"))


def _ptospec(db: Database, args: list[str], cwd: Path) -> str:
    """What ``ptospec ARGS`` prints, run in ``cwd``, its timings blanked."""
    from ..cli import main

    out = io.StringIO()
    specs = str(Path(db.root).resolve())
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = main(["--specs", specs, *args], database=db)  # the database in hand, not loaded again
    text = _TIMES[1].sub("in … s", _TIMES[0].sub("(… s)", out.getvalue()))
    return text.rstrip("\n") + f"\n[exit status {status}]"


def _command(args: list[str]) -> str:
    return "ptospec " + " ".join(args)


def _printed(body: str) -> str:
    """A command and what it printed, its long lines wrapped on the page (``.ptospec-output``) so that a finding
    at the end of a line stays in view."""
    return f'<div class="ptospec-output" markdown="1">\n\n{fence(body, "text")}\n</div>\n'


@dataclass(frozen=True)
class _Walked:
    """What the commands printed for one kernel, the same in every language."""

    rel: str  # the kernel's path as the commands name it
    checked: str  # check-program's output
    run: list[str]  # the run-program command line
    ran: str  # its output
    inputs: dict[str, np.ndarray]
    name: str  # the output compared with NumPy
    error: float  # the largest difference from NumPy's result


def _run_kernel(db: Database, kernel: Kernel, source: str, work: Path) -> _Walked:
    rel = (EXAMPLES / kernel.file).as_posix()
    (work / EXAMPLES).mkdir(parents=True, exist_ok=True)
    (work / rel).write_text(source, encoding="utf-8")
    checked = _ptospec(db, ["check-program", rel], work)
    inputs = kernel.inputs()
    for name, array in inputs.items():
        np.save(work / f"{name}.npy", array)
    run = ["run-program", rel]
    for n in inputs:
        run += ["--arg", f"{n}={n}.npy"]
    for n, v in kernel.scalars.items():
        run += ["--arg", f"{n}={v}"]
    run += ["-o", "out.npz"]
    ran = _ptospec(db, run, work)
    name, expected = kernel.expected(inputs)
    got = np.load(work / "out.npz")[name].astype(np.float64)
    return _Walked(rel, checked, run, ran, inputs, name, float(np.max(np.abs(got - expected))))


def _walk(db: Database, kernel: Kernel, source: str, walked: _Walked, lang: str) -> list[str]:
    out = [f"## {label(f'kernel_{kernel.key}_title', lang)}\n", label(f"kernel_{kernel.key}_intro", lang) + "\n",
           fence(source.rstrip("\n"), "mlir")]
    ops = sorted({m.group(1).replace(".", "_") for m in re.finditer(r"\bpto\.([a-z0-9_.]+) ins\(", source)}
                 & set(db.ops))
    out.append(label("kernel_ops", lang) + " " + ", ".join(f"[{op.upper()}](ops/{op}.md)" for op in ops) + ".\n")
    out += [f"### {label('kernel_check', lang)}\n",
            _printed(_command(["check-program", walked.rel]) + "\n" + walked.checked),
            label("kernel_check_read", lang) + "\n"]
    described = ", ".join(f"{code(n)}: {a.shape[0]}×{a.shape[1]} {a.dtype}" for n, a in walked.inputs.items())
    out += [f"### {label('kernel_run', lang)}\n", label("kernel_inputs", lang).format(inputs=described) + "\n",
            _printed(_command(walked.run) + "\n" + walked.ran),
            label("kernel_result", lang).format(name=code(walked.name), error=f"{walked.error:.3g}") + "\n"]
    return out


def _finding(sources: dict[str, str]) -> tuple[str, int, str]:
    """(the finding's kernel path as the command names it, the changed line's index, the changed source)."""
    file, line_start, good, bad = FINDING
    lines = sources[file].splitlines(keepends=True)
    changed = [k for k, line in enumerate(lines) if line.startswith(line_start)]
    lines[changed[0]] = lines[changed[0]].replace(good, bad)
    return (EXAMPLES / f"finding_{file}").as_posix(), changed[0], "".join(lines)


# The last database's runs, with the sources they ran (one slot): the commands' output is in English in every
# language, so a build runs each once for both pages.
_RUNS: PerDatabase[tuple[dict[str, _Walked], str]] = PerDatabase(1)


def _runs(db: Database, sources: dict[str, str]) -> tuple[dict[str, _Walked], str]:
    """Each kernel's runs and what check-program says about the finding, run in a temporary folder."""
    return _RUNS.get(db, dict(sources), lambda: _run_all(db, sources))


def _run_all(db: Database, sources: dict[str, str]) -> tuple[dict[str, _Walked], str]:
    with tempfile.TemporaryDirectory(prefix="ptospec-kernels-") as tmp:
        work = Path(tmp)
        walked = {k.file: _run_kernel(db, k, sources[k.file], work) for k in KERNELS}
        rel, _line, text = _finding(sources)
        (work / rel).write_text(text, encoding="utf-8")
        finding = _ptospec(db, ["check-program", rel], work)
    return walked, finding


def kernel_sources(db: Database) -> dict[str, str]:
    """The example kernels the page walks through, read from ``docs/examples/`` beside the database."""
    root = Path(db.root).resolve().parent
    return {k.file: (root / EXAMPLES / k.file).read_text(encoding="utf-8") for k in KERNELS}


def kernels_page(db: Database, lang: str) -> str:
    out = [HEADER, f"# {label('kernels_page', lang)}\n", language_link(lang, PATH),
           label("kernels_intro", lang) + "\n"]
    sources = kernel_sources(db)
    walked, finding = _runs(db, sources)
    for kernel in KERNELS:
        out += _walk(db, kernel, sources[kernel.file], walked[kernel.file], lang)
    file, _line_start, good, bad = FINDING
    rel, line, _text = _finding(sources)
    out += [f"## {label('kernel_finding_title', lang)}\n",
            label("kernel_finding_intro", lang).format(file=code(file), line=line + 1, good=code(good),
                                                       bad=code(bad)) + "\n",
            _printed(_command(["check-program", rel]) + "\n" + finding),
            label("kernel_finding_read", lang) + "\n"]
    return "\n".join(out)
