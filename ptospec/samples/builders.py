"""The kernels that only a ``<case>.py`` builder script makes, made here without MLIR's Python bindings.

A builder imports ``mlir.ir`` and ``mlir.dialects.{func, arith, pto}``, builds the module and prints it; runop.sh
runs it as ``python <case>.py > <case>-pto-ir.pto``.  ``prepare_kit`` assembles, in a scratch directory, a package
``mlir`` made of ptospec's pure-Python stand-in (``mlir_standin``: the core IR, func, arith, and the dialect's types
and attributes), the dialect's op classes that MLIR's own generator writes from the checkout's ODS (as the
assembler's python/CMakeLists.txt does), the checkout's own ``pto.py`` dialect module, and the dialect's enums as
its ODS records them.  ``make_kernel`` runs a builder on it (the checkout's script, with the same minimal
environment as the golden scripts), gives the printed module (MLIR's generic form) to ``ptoas``, which judges
it, and has the assembler's bytecode tool print it again in the dialect's custom form (``ptobc`` encode, decode,
as runop.sh --enablebc does), which ``run_program`` reads.  Nothing generated is kept in the repository.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .facts import SampleFacts

STANDIN = Path(__file__).with_name("mlir_standin") / "mlir"
TOOL_SECONDS = 600


class KitUnavailable(Exception):
    """The stand-in package cannot be assembled (a tool or a file of the checkout is missing)."""


@dataclass(frozen=True)
class Made:
    """A builder's run: the kernel in the dialect's custom form, or why there is none (``status``: the harness's
    outcome, ``error`` when the fault is probably ours, ``not-runnable`` when a tool of the checkout stops)."""

    pto: Path | None
    status: str = ""
    detail: str = ""


def find_tool(names: list[str]) -> Path | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


def prepare_kit(root: Path, facts: SampleFacts, dest: Path) -> Path:
    """The directory to put on a builder's PYTHONPATH (``dest``/``mlir`` is the assembled package)."""
    b = facts.builders
    ods, include, module = root / b["ods"], root / b["include"], root / b["dialect_module"]
    for path in (ods, module):
        if not path.is_file():
            raise KitUnavailable(f"no {path.relative_to(root)} in the checkout")
    ops_tool, records_tool = find_tool(b["tblgen"]["ops"]), find_tool(b["tblgen"]["records"])
    if ops_tool is None or records_tool is None:
        missing = b["tblgen"]["ops"] if ops_tool is None else b["tblgen"]["records"]
        raise KitUnavailable(f"none of {', '.join(missing)} on PATH (MLIR's TableGen writes the dialect's op classes)")
    mlir_include = ops_tool.resolve().parent.parent / "include"
    package = dest / "mlir"
    shutil.copytree(STANDIN, package, ignore=shutil.ignore_patterns("__pycache__"))
    dialect = b["dialect"]
    includes = ["-I", str(include), "-I", str(mlir_include)]
    _tool([str(ops_tool), "-gen-python-op-bindings", f"-bind-dialect={dialect}", *includes, str(ods), "-o",
           str(package / "dialects" / f"_{dialect}_ops_gen.py")])
    records = dest / "records.json"
    _tool([str(records_tool), "--dump-json", *includes, str(ods), "-o", str(records)])
    dialect_json = json.dumps(dialect_facts(json.loads(records.read_text(encoding="utf-8")), dialect), indent=1)
    (package / "_mlir_libs" / f"{dialect}_dialect.json").write_text(dialect_json, encoding="utf-8")
    records.unlink()
    shutil.copyfile(module, package / "dialects" / f"{dialect}.py")
    return dest


def _tool(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TOOL_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KitUnavailable(f"{Path(command[0]).name}: {exc}") from None
    if done.returncode != 0:
        raise KitUnavailable(f"{Path(command[0]).name} failed: {_last_line(done)}")


# ---------------------------------------------------------------------------------------------------------------
# The dialect's enums, enum attributes and inferred result types, from its ODS records (llvm-tblgen --dump-json)
# ---------------------------------------------------------------------------------------------------------------

_BUILDER_CALLS = ((re.compile(r"getIndexType\(\)"), lambda m: "index"),
                  (re.compile(r"getIntegerType\((\d+)\)"), lambda m: f"i{m.group(1)}"),
                  (re.compile(r"getI(\d+)Type\(\)"), lambda m: f"i{m.group(1)}"),
                  (re.compile(r"get(F16|BF16|F32|F64)Type\(\)"), lambda m: m.group(1).lower()))


def dialect_facts(records: dict, dialect: str) -> dict:
    """``enums``: class -> [symbol, spelling, value] per case; ``attrs``: attribute class -> its enum, mnemonic and
    printing style (``params``: #d.mnemonic<case>; ``value``: #d<mnemonic case>); ``infer``: operation -> the
    result type MLIR infers when a builder gives none (a fixed type, or an operand's)."""
    instances = records["!instanceof"]

    def of_dialect(rec: dict) -> bool:
        d = rec.get("dialect") or rec.get("opDialect")  # an attribute's, an operation's
        return isinstance(d, dict) and records.get(d.get("def"), {}).get("name") == dialect

    enums = {}
    for name in instances.get("EnumAttrInfo", []):
        rec = records[name]
        if rec.get("cppNamespace", "").split("::")[-1] != dialect:
            continue
        enums[rec["className"]] = [[records[c["def"]]["symbol"], records[c["def"]]["str"], records[c["def"]]["value"]]
                                   for c in rec["enumerants"]]
    attrs = {}
    for name in instances.get("AttrDef", []):
        rec = records[name]
        if not of_dialect(rec) or not rec.get("mnemonic"):
            continue
        enum = None
        if isinstance(rec.get("enum"), dict):
            enum = records[rec["enum"]["def"]]["className"]
        else:
            params = rec.get("parameters", {}).get("args", [])
            if len(params) == 1 and isinstance(params[0][0], dict):
                param = records.get(params[0][0].get("def"), {})
                if "EnumParameter" in param.get("!superclasses", []):
                    enum = param["cppType"].split("::")[-1]
        if enum not in enums:
            continue
        style = "value" if (rec.get("assemblyFormat") or "").strip() == "$value" else "params"
        attrs[rec["cppClassName"]] = {"enum": enum, "mnemonic": rec["mnemonic"], "style": style}
    infer = {}
    for name in instances.get("Op", []):
        rec = records[name]
        if not of_dialect(rec):
            continue
        rule = _inferred_result(records, rec)
        if rule is not None:
            infer[f"{dialect}.{rec['opName']}"] = rule
    return {"enums": enums, "attrs": attrs, "infer": infer}


def _inferred_result(records: dict, op: dict) -> dict | None:
    results = op["results"]["args"]
    if len(results) != 1:
        return None
    constraint = records.get(results[0][0]["def"], {})
    call = constraint.get("builderCall") or ""
    for pattern, text in _BUILDER_CALLS:
        m = pattern.search(call)
        if m:
            return {"type": text(m)}
    operands = []
    for arg, arg_name in op["arguments"]["args"]:
        rec = records.get(arg["def"], {}) if isinstance(arg, dict) else {}
        supers = rec.get("!superclasses", [])
        if "Attr" in supers or "AttrConstraint" in supers or "Property" in supers:
            continue
        operands.append((arg_name, "Variadic" in supers or "Optional" in supers))
    for trait in op.get("traits", []):
        rec = records.get(trait["def"], {})
        values = rec.get("values")
        if "AllTypesMatch" not in rec.get("!superclasses", []) or not values or results[0][1] not in values:
            continue
        for i, (arg_name, variadic) in enumerate(operands):
            if arg_name in values and not variadic and not any(v for _n, v in operands[:i]):
                return {"operand": i}
    return None


# ---------------------------------------------------------------------------------------------------------------
# Running a builder
# ---------------------------------------------------------------------------------------------------------------


def make_kernel(builder: Path, case: str, kit: Path, work: Path, env: dict, ptoas: Path, flags: list[str],
                ptobc: Path, encode_env: dict[str, str]) -> Made:
    """Run the builder on the stand-in, let ``ptoas`` judge its module, and have ``ptobc`` print it again."""
    generic = work / f"{case}-standin.pto"
    done = _run([sys.executable, str(builder)], work, {**env, "PYTHONPATH": str(kit)})
    if done.returncode != 0:
        return Made(None, failure_kind(done.stderr, kit), f"{builder.name} failed on the MLIR stand-in: "
                                                          f"{_last_line(done)}")
    if not done.stdout.strip():
        return Made(None, "error", f"{builder.name} printed no module")
    generic.write_text(done.stdout, encoding="utf-8")
    done = _run([str(ptoas), *flags, str(generic), "-o", str(work / f"{case}-standin.cpp")], work, env)
    if done.returncode != 0:
        return Made(None, "error", f"ptoas refuses the stand-in's module of {builder.name}: {_last_line(done)}")
    code, pto = work / f"{case}.ptobc", work / f"{case}.pto"
    for command, extra in (([str(ptobc), "encode", str(generic), "-o", str(code)], encode_env),
                           ([str(ptobc), "decode", str(code), "-o", str(pto)], {})):
        done = _run(command, work, {**env, **extra})
        if done.returncode != 0 or (command[1] == "decode" and not pto.is_file()):
            return Made(None, "not-runnable", f"ptoas accepts the module of {builder.name}, ptobc {command[1]} fails "
                                              f"on it: {_last_line(done)}")
    return Made(pto)


def failure_kind(stderr: str, kit: Path) -> str:
    """``error`` (ours) when the builder's traceback ends in the stand-in (a file under ``kit``), else
    ``not-runnable`` (the builder itself fails: a missing module, a syntax error, its own assertion)."""
    frames = [line for line in stderr.splitlines() if line.lstrip().startswith('File "')]
    return "error" if frames and str(kit) in frames[-1] else "not-runnable"


def ptobc_of(ptoas: Path, facts: SampleFacts) -> Path:
    return (ptoas.parent / facts.builders["ptobc"]).resolve()


def _run(command: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TOOL_SECONDS)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, 124, "", f"{' '.join(Path(c).name for c in command[:2])}: "
                                                             f"timed out after {TOOL_SECONDS} s")
    except OSError as exc:
        return subprocess.CompletedProcess(command, 126, "", f"{command[0]}: {exc}")


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in (done.stderr + "\n" + done.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit status {done.returncode}"
