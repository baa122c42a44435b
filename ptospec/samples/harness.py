"""Run the assembler's sample kernels against their NumPy goldens, with the sample harness's own arguments.

For a sample ``<Dir>/<case>.pto`` with a ``<case>_golden.py`` beside it, in a scratch directory (nothing of the
checkout is copied into the repository): write the case metadata the tooling would write (``meta``), run the
golden script unchanged (its seed, scalar arguments and batch offsets are its own), feed the buffers it wrote
to ``run_program``, write our outputs where the board run writes its own, and compare with the sample's
``<case>_compare.py``, or with the compare.py the tooling writes for a case without one (its template, filled
with one line per output as the tooling fills it).  ``cross_check`` compares our metadata with the one the
tooling itself writes from the assembler's C++ (it needs a built ``ptoas``).
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import PtospecError
from ..executor import numpy_dtype
from ..model import Database
from ..program.api import choose_profile, device_target, read_program, run_program, target_arch
from ..program.spec import program_spec
from .boards import find_board_cases, kernel_file, read_board_case, run_board_case, sizes_of
from .builders import Made, make_kernel
from .facts import SampleFacts
from .meta import CaseMeta, MetaError, derive_meta

SCRIPT_SECONDS = 600  # one golden or compare script
# validation_runtime's functions that read or check the metadata we write: a golden script failing in one fails on it
META_READERS = ("load_case_meta", "write_buffers", "write_golden", "load_scalar_assignments")


@dataclass(frozen=True)
class Sample:
    folder: str
    case: str
    golden: Path
    pto: Path | None  # the kernel beside the golden (None: only a builder, or nothing)
    builder: Path | None  # <case>.py: builds the .pto through the assembler's Python bindings
    compare: Path | None  # <case>_compare.py
    board: bool = False  # a committed case directory (boards.py): golden.py, compare.py and main.cpp in it

    @property
    def name(self) -> str:
        return f"{self.folder}/{self.case}"


@dataclass
class Outcome:
    sample: Sample
    status: str  # match | mismatch | refused | error | not-runnable
    detail: str = ""
    profile: str | None = None
    findings: list[str] = field(default_factory=list)
    max_error: dict[str, float] = field(default_factory=dict)  # output -> largest |ours - golden|
    seconds: float = 0.0  # our run
    meta_check: str | None = None  # cross-check with the tooling's own metadata: "agrees" or the differences


def find_samples(root: Path, facts: SampleFacts) -> list[Sample]:
    """Every ``*_golden.py`` of the samples folder of a checkout, with what is beside it."""
    base = root.resolve() / facts.directory
    if not base.is_dir():
        raise PtospecError(f"{base} is not a directory (give the root of a PTOAS checkout)", rule="samples.root")
    found = []
    for golden in sorted(base.glob("*/*_golden.py")):
        case = golden.name[: -len("_golden.py")]
        d = golden.parent

        def beside(suffix: str, d=d, case=case) -> Path | None:
            p = d / f"{case}{suffix}"
            return p if p.is_file() else None
        found.append(Sample(d.name, case, golden, beside(".pto"), beside(".py"), beside("_compare.py")))
    for case_dir in find_board_cases(root, facts):
        compare = case_dir / "compare.py"
        found.append(Sample(case_dir.parent.name, case_dir.name, case_dir / "golden.py", None, None,
                            compare if compare.is_file() else None, True))
    return found


def scalar_overrides(root: Path, facts: SampleFacts) -> dict[str, dict[str, int]]:
    """The tooling's per-case table of scalar values (a literal in its script, read without running it)."""
    script = root / facts.script
    if not script.is_file():
        return {}
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"), str(script))
    except (SyntaxError, ValueError) as exc:
        raise PtospecError(f"{script}: not readable Python ({exc})", rule="samples.overrides") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == facts.overrides_table
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
                return {str(k): {str(n): int(v) for n, v in d.items()} for k, d in value.items()}
            except (ValueError, TypeError, AttributeError, SyntaxError) as exc:
                raise PtospecError(f"{script}:{node.lineno}: {facts.overrides_table} is not a literal table of "
                                   f"case -> {{scalar: integer}} ({type(exc).__name__}: {exc})",
                                   rule="samples.overrides") from None
    return {}


def sample_profile(db: Database, program, folder: str, facts: SampleFacts) -> str:
    """The program's own target (``pto.target_arch`` or ``pto.device-spec``), else its folder's --pto-arch."""
    if target_arch(program) is not None or device_target(program, program_spec(db).device_specs)[0] is not None:
        return choose_profile(db, program, None)
    return facts.arch_profiles[facts.arch(folder)[0]]


@dataclass(frozen=True)
class Kit:
    """The MLIR stand-in assembled for the builder scripts (``builders.prepare_kit``), or why there is none."""

    path: Path | None
    ptobc: Path | None = None
    reason: str = ""


def not_runnable_reason(sample: Sample, kit: Kit | None = None) -> str:
    if sample.builder is None:
        return f"no kernel beside the golden (neither {sample.case}.pto nor {sample.case}.py)"
    why = (kit.reason if kit is not None else "give --ptoas: the assembler judges the module ptospec's MLIR "
           "stand-in prints, and its ptobc prints it again for run_program")
    return f"no .pto beside the golden, only the builder {sample.case}.py: {why}"


def run_sample(db: Database, root: Path, facts: SampleFacts, sample: Sample, overrides: dict,
               ptoas: Path | None = None, keep: Path | None = None, kit: Kit | None = None) -> Outcome:
    """Run one sample (``keep``: a directory to leave its scratch files in, for a look; ``kit``: the MLIR stand-in
    a builder script runs on, when its kernel has no .pto)."""
    root = root.resolve()
    if sample.board:
        with _workdir(keep, sample) as work:
            return _run_board(db, facts, sample, work)
    if sample.pto is None and (sample.builder is None or ptoas is None or kit is None or kit.path is None):
        return Outcome(sample, "not-runnable", not_runnable_reason(sample, kit))
    with _workdir(keep, sample) as work:
        if sample.pto is None:
            made = _build(facts, sample, kit, ptoas, work / "kernel")
            if made.pto is None:
                return Outcome(sample, made.status, made.detail)
            sample = replace(sample, pto=made.pto)
        try:
            program = read_program(sample.pto)
            profile = sample_profile(db, program, sample.folder, facts)
            meta = derive_meta(db, program, profile, facts, overrides.get(sample.case))
        except MetaError as exc:
            return Outcome(sample, "not-runnable", f"case metadata not derived: {exc}")
        except PtospecError as exc:
            return Outcome(sample, "refused", _refusal(exc))
        return _run_in(db, root, facts, sample, program, profile, meta, work, ptoas)


def ptoas_command_flags(facts: SampleFacts, folder: str) -> list[str]:
    """runop.sh's flags for a kernel of ``folder``."""
    arch, level = facts.arch(folder)
    return [*facts.ptoas_flags, "--pto-arch", arch] + ([f"--pto-level=level{level}"] if level else [])


def _build(facts: SampleFacts, sample: Sample, kit: Kit, ptoas: Path, work: Path) -> Made:
    """The builder's kernel: run on the stand-in, judged by ptoas, printed again by ptobc."""
    work.mkdir(parents=True, exist_ok=True)
    soc = facts.soc.get(facts.arch(sample.folder)[0], "")
    env = script_env(facts, str(kit.path), soc)
    return make_kernel(sample.builder, sample.case, kit.path, work, env, ptoas,
                       ptoas_command_flags(facts, sample.folder), kit.ptobc, facts.builders["ptobc_encode_env"])


@contextlib.contextmanager
def _workdir(keep: Path | None, sample: Sample):
    """The sample's scratch directory: under ``keep`` (left there), else a temporary one."""
    if keep is not None:
        work = keep / sample.folder / sample.case
        work.mkdir(parents=True, exist_ok=True)
        yield work
        return
    with tempfile.TemporaryDirectory(prefix="ptospec-sample-") as tmp:
        yield Path(tmp)


def _run_in(db, root, facts, sample, program, profile, meta: CaseMeta, work: Path, ptoas) -> Outcome:
    out = Outcome(sample, "match", profile=profile)
    (work / "main.cpp").write_text(meta.main_cpp(), encoding="utf-8")
    (work / "outputs.txt").write_text(meta.outputs_txt(), encoding="utf-8")
    # the tooling copies validation_runtime.py beside each case's scripts: here it is found on the path
    env = script_env(facts, str((root / facts.runtime).parent), facts.soc_of(profile))
    if ptoas is not None:
        out.meta_check = cross_check(root, facts, sample, meta, ptoas, work / "tooling", env)
    done = _script(sample.golden, work, env)
    if done.returncode != 0:
        return _golden_failed(out, done)
    missing = [f for f in [f"{p.name}.bin" for p in meta.buffers] + [f"golden_{n}.bin" for n in meta.outputs]
               if not (work / f).is_file()]
    if missing:
        return _error(out, f"the golden script exited 0 without writing {', '.join(missing)}")
    args: dict[str, object] = {}
    for p in meta.buffers:
        data = np.fromfile(work / f"{p.name}.bin", dtype=numpy_dtype(db, p.dtype))
        if data.size != meta.elem_counts[p.name]:
            return _error(out, f"the golden script wrote {data.size} elements of {p.name}, our metadata says "
                               f"{meta.elem_counts[p.name]}")
        args[p.arg] = data
    for p in meta.params:
        if not p.pointer:
            args[p.arg] = meta.scalars[p.name]
    try:
        result = run_program(db, program, args, profile)
    except PtospecError as exc:
        out.status, out.detail = "refused", _refusal(exc)
        return out
    out.seconds = result.seconds
    out.findings = result.finding_lines()
    by_name = {p.name: p for p in meta.params}
    for name in meta.outputs:
        ours = np.ascontiguousarray(result.outputs[by_name[name].arg]).reshape(-1)
        ours.tofile(work / f"{name}.bin")
        golden = np.fromfile(work / f"golden_{name}.bin", dtype=ours.dtype)
        if golden.size != ours.size:
            return _error(out, f"golden_{name}.bin holds {golden.size} elements, our {name} {ours.size}")
        out.max_error[name] = max_error(ours, golden)
    if sample.compare is None and not (root / facts.compare_template).is_file():
        return _not_runnable(out, f"no {sample.case}_compare.py and no {facts.compare_template} to write one from")
    compare = sample.compare or _generated_compare(db, root, facts, meta, work)
    _judge(out, _script(compare, work, env), facts.markers)
    return out


def max_error(ours: np.ndarray, golden: np.ndarray) -> float:
    """The largest |ours - golden| (NaN against NaN counts as equal; NaN against a number is NaN)."""
    a, b = ours.astype(np.float64), golden.astype(np.float64)
    diff = np.abs(a - b)
    diff[np.isnan(a) & np.isnan(b)] = 0.0
    return float("nan") if np.isnan(diff).any() else float(np.max(diff, initial=0.0))


def script_env(facts: SampleFacts, pythonpath: str, soc: str) -> dict[str, str]:
    """The environment a third-party script gets: what it needs to run, none of ours."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env.update({"PYTHONPATH": pythonpath, "SOC_VERSION": soc, facts.strict_env: "1"})
    return env


def _golden_failed(out: Outcome, done: subprocess.CompletedProcess) -> Outcome:
    """A golden script failing where it reads or checks our metadata is our error; elsewhere, not runnable."""
    if any(f"in {fn}" in done.stderr for fn in META_READERS):
        return _error(out, f"golden script failed on our metadata: {_last_line(done)}")
    return _not_runnable(out, f"golden script failed: {_last_line(done)}")


def _judge(out: Outcome, done: subprocess.CompletedProcess, markers: dict[str, str]) -> None:
    """A compare script's verdict: a failing exit, an error line or a failed compare it ignores (some committed
    compare.py print "[WARN] compare failed (ignored)" and exit 0) is a mismatch."""
    lines = done.stdout.splitlines()
    errors = [ln for ln in lines if ln.startswith(markers["error"]) and markers["failed"] not in ln]
    ignored = [ln for ln in lines if ln.startswith(markers["warn"]) and markers["failed"] in ln]
    if done.returncode != 0 or errors or ignored:
        out.status = "mismatch"
        out.detail = "; ".join(errors[:2] + ignored[:1]) or _last_line(done)


def _run_board(db: Database, facts: SampleFacts, sample: Sample, work: Path) -> Outcome:
    """A committed case: its golden.py, the launches of its main.cpp, its compare.py."""
    out = Outcome(sample, "match")
    try:
        case = read_board_case(sample.golden.parent, sizes_of(db, facts))
    except PtospecError as exc:
        return _not_runnable(out, str(exc))
    missing = [launch.kernel for launch in case.launches
               if kernel_file(case, launch.kernel, facts.ir_dump_suffix) is None]
    if missing:
        builders = [p.name for p in sorted(sample.golden.parent.parent.glob("*.py"))]
        return _not_runnable(out, f"no single .pto of {sample.folder} defines @{', @'.join(missing)}"
                                  + (f" (only its builders {', '.join(builders)} make it: a board case runs "
                                     "no builder)" if builders else ""))
    env = script_env(facts, str(sample.golden.parent), "")
    done = _script(sample.golden, work, env)
    if done.returncode != 0:
        return _golden_failed(out, done)
    missing = [f"{stem}.bin" for stem in case.inputs.values() if not (work / f"{stem}.bin").is_file()]
    missing += [f"golden_{stem}.bin" for stem in case.outputs.values() if not (work / f"golden_{stem}.bin").is_file()]
    if missing:
        return _error(out, f"the golden script exited 0 without writing {', '.join(sorted(set(missing)))}")

    def profile_of(program) -> str:
        return sample_profile(db, program, sample.folder, facts)
    try:
        out.profile, ours, out.findings, out.seconds = run_board_case(db, case, work, profile_of,
                                                                      facts.ir_dump_suffix)
    except PtospecError as exc:
        out.status, out.detail = "refused", _refusal(exc)
        return out
    for stem, arr in ours.items():
        golden = np.fromfile(work / f"golden_{stem}.bin", dtype=arr.dtype)
        if golden.size != arr.size:
            return _error(out, f"golden_{stem}.bin holds {golden.size} elements, our {stem} {arr.size}")
        out.max_error[stem] = max_error(arr, golden)
    if not ours:
        return _error(out, "main.cpp writes no output: nothing to compare")
    if sample.compare is None:
        return _not_runnable(out, "no compare.py in the case directory")
    env["SOC_VERSION"] = facts.soc_of(out.profile)
    _judge(out, _script(sample.compare, work, env), facts.markers)
    return out


def _refusal(exc: PtospecError) -> str:
    """The error's line, its rule id once."""
    text = str(exc)
    return text if f"[{exc.rule}]" in text else f"[{exc.rule}] {text}"


def _error(out: Outcome, why: str) -> Outcome:
    out.status, out.detail = "error", why
    return out


def _not_runnable(out: Outcome, why: str) -> Outcome:
    out.status, out.detail = "not-runnable", why
    return out


def _script(path: Path, cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    """A Python script of the checkout, run in ``cwd``."""
    return _run([sys.executable, str(path), *args], cwd, env)


def _run(command: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """A command of the checkout (a timeout or an unstartable program: a failed run, never an exception)."""
    try:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=SCRIPT_SECONDS)
    except subprocess.TimeoutExpired:
        program = Path(command[1] if command[0] == sys.executable else command[0]).name
        return subprocess.CompletedProcess(command, 124, "", f"{program}: timed out after {SCRIPT_SECONDS} s")
    except OSError as exc:
        return subprocess.CompletedProcess(command, 126, "", f"{command[0]}: {exc}")


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in (done.stderr + "\n" + done.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit status {done.returncode}"


def _generated_compare(db: Database, root: Path, facts: SampleFacts, meta: CaseMeta, work: Path) -> Path:
    """The compare.py the tooling writes for a case without its own: its template, one line per output."""
    template = (root / facts.compare_template).read_text(encoding="utf-8")
    lines = ["    ok = True"]
    for name in meta.outputs:
        ctype = next(p.ctype for p in meta.params if p.name == name)
        if ctype in facts.ulp:
            lines.append(f'    ok = {facts.compare_functions["ulp"]}("golden_{name}.bin", "{name}.bin", '
                         f'{facts.ulp[ctype]}) and ok')
        else:
            dtype = np.dtype(numpy_dtype(db, next(p.dtype for p in meta.params if p.name == name))).name
            lines.append(f'    ok = {facts.compare_functions["eps"]}("golden_{name}.bin", "{name}.bin", '
                         f'np.dtype("{dtype}"), {facts.eps.get(ctype, 0.0)}) and ok')
    path = work / "compare.py"
    path.write_text(template.replace(facts.compare_placeholder, "\n".join(lines)), encoding="utf-8")
    return path


_LOAD_META = """
import json, sys
sys.path.insert(0, sys.argv[1])
from validation_runtime import load_case_meta, load_int32_assignments
m = load_case_meta()
print(json.dumps({"elem_counts": m.elem_counts, "types": {k: str(v) for k, v in m.np_types.items()},
                  "read_order": m.read_order, "outputs": m.outputs, "int32": load_int32_assignments()}))
"""


def case_meta_as_read(root: Path, facts: SampleFacts, work: Path, env: dict) -> dict:
    """What ``validation_runtime.load_case_meta`` (and ``load_int32_assignments``) read in ``work``."""
    reader = work / "ptospec_load_meta.py"
    reader.write_text(_LOAD_META, encoding="utf-8")
    try:
        done = _script(reader, work, env, str((root / facts.runtime).parent))
    finally:
        reader.unlink()
    if done.returncode != 0:
        raise PtospecError(f"load_case_meta failed in {work}: {_last_line(done)}", rule="samples.meta")
    return json.loads(done.stdout)


def cross_check(root: Path, facts: SampleFacts, sample: Sample, meta: CaseMeta, ptoas: Path, work: Path,
                env: dict) -> str:
    """Compile the sample with the assembler as runop.sh does, let the tooling write its case, and compare
    what the golden script would read there with what it reads from ours: "agrees" or the differences (every
    command runs in ``work``; a failure is reported in the text, never raised)."""
    work.mkdir(parents=True, exist_ok=True)
    cpp = work / sample.folder / f"{sample.case}-pto.cpp"
    cpp.parent.mkdir(parents=True, exist_ok=True)
    flags = ptoas_command_flags(facts, sample.folder)
    done = _run([str(ptoas), *flags, str(sample.pto), "-o", str(cpp)], work, env)
    if done.returncode != 0:
        return f"ptoas failed: {_last_line(done)}"
    gen = work / "gen"
    done = _script(root / facts.script, work, env, "--input", str(cpp), "--testcase", sample.case,
                   "--output-root", str(gen), "--run-mode", "sim", "--soc-version", env["SOC_VERSION"])
    if done.returncode != 0:
        return f"the tooling failed: {_last_line(done)}"
    try:
        theirs = case_meta_as_read(root, facts, gen / sample.folder / sample.case, env)
        ours = case_meta_as_read(root, facts, work.parent, env)
    except PtospecError as exc:
        return str(exc)
    diffs = [f"{k}: tooling {theirs[k]}, ours {ours[k]}" for k in theirs if theirs[k] != ours.get(k)]
    return "agrees" if not diffs else "; ".join(diffs)
