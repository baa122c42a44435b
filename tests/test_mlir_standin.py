"""The MLIR stand-in a sample builder script runs on (ptospec/samples/builders.py, mlir_standin): a fake dialect's
ODS of our own, its op classes written by MLIR's generator, a fake builder, the generic form it prints (read back
by mlir-opt when installed); with PTOSPEC_PTOAS_ROOT and PTOSPEC_PTOAS, two builder samples against their goldens."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptospec.samples.builders import KitUnavailable, prepare_kit
from ptospec.samples.facts import load_sample_facts

FAKE_ODS = """
include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Fake_Dialect : Dialect { let name = "pto"; let cppNamespace = "::mlir::pto"; }
def Fake_Kind : I32EnumAttr<"Kind", "a kind", [I32EnumAttrCase<"Alpha", 0, "alpha">,
                                               I32EnumAttrCase<"Beta", 3, "beta">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::pto";
}
def Fake_KindAttr : EnumAttr<Fake_Dialect, Fake_Kind, "kind">;
def Fake_CopyOp : Op<Fake_Dialect, "copy", [AttrSizedOperandSegments]> {
  let arguments = (ins AnyType:$src, Variadic<Index>:$offsets, Optional<Index>:$pad,
                   OptionalAttr<Fake_KindAttr>:$kind);
}
def Fake_DimOp : Op<Fake_Dialect, "dim", []> {
  let arguments = (ins AnyType:$src);
  let results = (outs Index:$result);
}
"""

FAKE_DIALECT_MODULE = """
from ._pto_ops_gen import *
from .._mlir_libs._pto import *
"""

FAKE_BUILDER = """
from mlir.ir import Context, F32Type, IndexType, InsertionPoint, Location, Module, UnitAttr
from mlir.dialects import arith, func, pto

with Context() as ctx, Location.unknown():
    pto.register_dialect(ctx, load=True)
    m = Module.create()
    f32 = F32Type.get()
    ptr = pto.PtrType.get(f32)
    with InsertionPoint(m.body):
        fn = func.FuncOp("kernel", func.FunctionType.get([ptr, IndexType.get()], []))
        fn.operation.attributes["pto.entry"] = UnitAttr.get(ctx)
        entry = fn.add_entry_block()
    with InsertionPoint(entry):
        c0 = arith.ConstantOp(IndexType.get(), 0).result
        arith.ConstantOp(f32, 3.14)
        dim = pto.DimOp(entry.arguments[0]).result  # its index result as MLIR infers it
        pto.CopyOp(entry.arguments[0], [c0, dim], kind=pto.KindAttr.get(pto.Kind.Beta))
        pto.CopyOp(entry.arguments[0], [], pad=entry.arguments[1])
        func.ReturnOp([])
    m.operation.verify()
    print(m)
"""

EXPECTED = """\
"builtin.module"() ({
  "func.func"() <{function_type = (!pto.ptr<f32>, index) -> (), sym_name = "kernel"}> ({
  ^bb0(%arg0: !pto.ptr<f32>, %arg1: index):
    %0 = "arith.constant"() <{value = 0 : index}> : () -> index
    %1 = "arith.constant"() <{value = 3.140000104904175 : f32}> : () -> f32
    %2 = "pto.dim"(%arg0) : (!pto.ptr<f32>) -> index
    "pto.copy"(%arg0, %0, %2) <{kind = #pto<kind beta>, operandSegmentSizes = array<i32: 1, 2, 0>}> : \
(!pto.ptr<f32>, index, index) -> ()
    "pto.copy"(%arg0, %arg1) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (!pto.ptr<f32>, index) -> ()
    "func.return"() : () -> ()
  }) {pto.entry} : () -> ()
}) : () -> ()
"""


@pytest.fixture(scope="module")
def facts(db):
    return load_sample_facts(db)


def _fake_checkout(root: Path, facts) -> Path:
    b = facts.builders
    (root / b["ods"]).parent.mkdir(parents=True)
    (root / b["ods"]).write_text(FAKE_ODS)
    (root / b["dialect_module"]).write_text(FAKE_DIALECT_MODULE)
    (root / b["include"]).mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="module")
def kit(facts, tmp_path_factory):
    root = _fake_checkout(tmp_path_factory.mktemp("checkout"), facts)
    try:
        return prepare_kit(root, facts, tmp_path_factory.mktemp("kit"))
    except KitUnavailable as exc:
        pytest.skip(f"MLIR's TableGen is not installed: {exc}")


def _build(kit: Path, script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    builder = tmp_path / "builder.py"
    builder.write_text(script)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(kit)}
    return subprocess.run([sys.executable, str(builder)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_dialect_facts_come_from_its_ods(kit):
    import json

    facts = json.loads((kit / "mlir" / "_mlir_libs" / "pto_dialect.json").read_text())
    assert facts["enums"] == {"Kind": [["Alpha", "alpha", 0], ["Beta", "beta", 3]]}
    assert facts["attrs"] == {"KindAttr": {"enum": "Kind", "mnemonic": "kind", "style": "value"}}
    assert facts["infer"] == {"pto.dim": {"type": "index"}}


def test_a_builder_prints_its_module_in_the_generic_form(kit, tmp_path):
    done = _build(kit, FAKE_BUILDER, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED + "\n"
    opt = shutil.which("mlir-opt-19") or shutil.which("mlir-opt")
    if opt is None:
        return
    checked = subprocess.run([opt, "--allow-unregistered-dialect", "--mlir-print-op-generic"], input=done.stdout,
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert '"pto.copy"(%arg0, %0, %2)' in checked.stdout


UNDEFINED = """
from mlir.ir import Context, IndexType, InsertionPoint, Location, Module
from mlir.dialects import arith, func

with Context(), Location.unknown():
    m = Module.create()
    with InsertionPoint(m.body):
        fn = func.FuncOp("f", func.FunctionType.get([], [IndexType.get()]))
        entry = fn.add_entry_block()
    detached = arith.ConstantOp(IndexType.get(), 1)  # outside any insertion point: in no block
    with InsertionPoint(entry):
        func.ReturnOp([detached.result])
    m.operation.verify()
"""


def test_an_undefined_operand_fails_verify_and_a_missing_operand_fails_the_build(kit, tmp_path):
    done = _build(kit, UNDEFINED, tmp_path)
    assert done.returncode != 0 and "used before it is defined" in done.stderr
    done = _build(kit, FAKE_BUILDER.replace("pto.CopyOp(entry.arguments[0], [], pad=entry.arguments[1])",
                                            "pto.CopyOp(None, [])"), tmp_path)
    assert done.returncode != 0 and "expected an operation or a value, got NoneType" in done.stderr


ROOT = os.environ.get("PTOSPEC_PTOAS_ROOT")
PTOAS = os.environ.get("PTOSPEC_PTOAS")


@pytest.mark.skipif(not (ROOT and PTOAS), reason="PTOSPEC_PTOAS_ROOT and PTOSPEC_PTOAS are not both set")
@pytest.mark.parametrize("name", ["Abs/abs", "Adds/adds"])
def test_a_builder_sample_matches_its_golden(db, facts, name, tmp_path):
    from ptospec.samples.builders import ptobc_of
    from ptospec.samples.harness import Kit, find_samples, run_sample, scalar_overrides

    root, ptoas = Path(ROOT), Path(PTOAS)
    kit = Kit(prepare_kit(root, facts, tmp_path), ptobc_of(ptoas, facts))
    sample = next(s for s in find_samples(root, facts) if s.name == name)
    assert sample.pto is None and sample.builder is not None
    outcome = run_sample(db, root, facts, sample, scalar_overrides(root, facts), ptoas, kit=kit)
    assert outcome.status == "match", outcome.detail
    assert outcome.max_error


def test_a_builder_failure_is_ours_only_when_its_traceback_ends_in_the_stand_in(tmp_path):
    """A traceback whose innermost frame is in the stand-in is an ``error`` of ours; one that ends in the builder
    (its own mistake, although its text names mlir) leaves the sample not runnable."""
    from ptospec.samples.builders import failure_kind

    kit = tmp_path / "kit"
    ours = (f'Traceback (most recent call last):\n  File "/src/abs.py", line 9, in <module>\n'
            f'  File "{kit}/mlir/ir.py", line 40, in get\nTypeError: bad\n')
    theirs = ('Traceback (most recent call last):\n  File "/src/abs.py", line 3, in <module>\n'
              '    from mlir.dialects import pto, missing\n'
              'ImportError: cannot import name missing from mlir.dialects\n')
    assert failure_kind(ours, kit) == "error"
    assert failure_kind(theirs, kit) == "not-runnable"
    assert failure_kind("Killed\n", kit) == "not-runnable"
