"""benchmarks/header_scan.py and header_dtypes.py: the header screen follows calls and branches, not pools.

The reader runs on small synthetic headers here; the checks against pto-isa's own headers need the
checkout (PTO_ISA_ROOT, default /tmp/pto-isa) and are skipped without it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ptospec.dbcache import load_database_cached
from ptospec.loader import DatabaseErrors, load_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import header_scan as hs  # noqa: E402
from cpusim_env import cpusim_unavailable  # noqa: E402

PTO_ISA = Path(os.environ.get("PTO_ISA_ROOT", "/tmp/pto-isa"))
CPP = {"half": "f16", "float": "f32", "int8_t": "i8", "uint8_t": "u8", "int64_t": "i64", "float8_e4m3_t": "f8e4m3"}
WIDTHS = {"f16": 2, "f32": 4, "i8": 1, "u8": 1, "i64": 8, "f8e4m3": 1}

HEADER = """
#ifdef PTO_NPU_ARCH_A5
template <typename T> constexpr bool is_small = std::disjunction_v<std::is_same<T, int8_t>, std::is_same<T, half>>;
#endif
template <typename TileDst, typename TileSrc>
PTO_INTERNAL void CheckVec(TileDst& dst, TileSrc& src)
{
    using T = typename TileDst::DType;
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half>, "vec types");
}
template <typename TileDst, typename TileSrc>
PTO_INTERNAL void CheckMat()
{
    static_assert(is_small<typename TileDst::DType>, "mat types");
    static_assert(std::is_same<typename TileDst::DType, typename TileSrc::DType>::value, "same");
}
template <typename TileDst, typename TileSrc>
PTO_INTERNAL void TCOPY_IMPL(TileDst& dst, TileSrc& src)
{
    if (dst.GetValidRow() == 0) {
        return;
    }
    if constexpr (TileSrc::Loc == TileType::Vec) {
        CheckVec(dst, src);
    } else if constexpr (TileSrc::Loc == TileType::Mat) {
        CheckMat<TileDst, TileSrc>();
    }
}
template <typename TileDst, typename TileSrc>
PTO_INTERNAL void TCOPY_IMPL(TileDst& dst, TileSrc& src, uint64_t scalar)
{
    static_assert(sizeof(typename TileDst::DType) == 1, "one byte");
}
template <typename TileDst, typename TileSrc, typename... WaitEvents>
PTO_INST RecordEvent TCOPY(TileDst& dst, TileSrc& src, WaitEvents&... events)
{
    MAP_INSTR_IMPL(TCOPY, dst, src);
    return {};
}
template <typename TileDst, typename TileSrc, typename... WaitEvents>
PTO_INST RecordEvent TCOPY(TileDst& dst, TileSrc& src, uint64_t scalar, WaitEvents&... events)
{
    MAP_INSTR_IMPL(TCOPY, dst, src, scalar);
    return {};
}
"""


def _evaluator(profile: str = "a5") -> hs.Evaluator:
    return hs.Evaluator(hs.Headers.parse({"synthetic.hpp": HEADER}, hs.MACROS[profile], CPP, WIDTHS))


def _admits(ev: hs.Evaluator, dtype: str, src_dtype: str, loc: str, scalar: bool = False) -> bool:
    scope = hs.Scope()
    scope.names["dst"] = scope.objects["dst"] = hs.Tile(dtype, loc)
    scope.names["src"] = scope.objects["src"] = hs.Tile(src_dtype, loc)
    args = ["dst", "src", "scalar"] if scalar else ["dst", "src"]
    return ev.call_admits("TCOPY", None, args, scope, 0, frozenset())


def test_functions_are_read_with_template_parameters_and_parameters():
    fns = hs.functions_of(hs.preprocess(HEADER, set()), "x.hpp")
    names = [f.name for f in fns]
    assert names.count("TCOPY_IMPL") == 2 and "CheckVec" in names
    copy = next(f for f in fns if f.name == "TCOPY" and len(f.params) == 3)
    assert [p.kind for p in copy.tparams] == ["type", "type", "pack"]
    assert copy.params[0][1] == "dst"


def test_preprocessing_keeps_the_profiles_sections_only():
    assert "constexpr bool is_small" in hs.preprocess(HEADER, hs.MACROS["a5"])
    assert "constexpr bool is_small" not in hs.preprocess(HEADER, hs.MACROS["a2a3"])
    assert "is_small" in _evaluator("a5").h.predicates and "is_small" not in _evaluator("a2a3").h.predicates


def test_the_branch_the_location_selects_decides_not_the_pooled_asserts():
    ev = _evaluator()
    assert _admits(ev, "f32", "f32", "Vec")  # the Vec branch admits f32 ...
    assert not _admits(ev, "f32", "f32", "Mat")  # ... the Mat branch does not
    assert _admits(ev, "i8", "i8", "Mat") and not _admits(ev, "i8", "i8", "Vec")
    assert not _admits(ev, "i8", "f16", "Mat")  # the Mat branch asserts equal types


def test_an_unknown_location_leaves_every_branch_possible():
    ev = _evaluator()
    assert _admits(ev, "f32", "f32", None) and _admits(ev, "i8", "i8", None)
    assert _admits(ev, "i64", "i64", None)  # a third location takes neither branch: nothing asserted
    assert not _admits(ev, "i64", "i64", "Vec") and not _admits(ev, "i64", "i64", "Mat")


def test_overloads_are_chosen_by_their_arguments_and_sizeof_reads_widths():
    ev = _evaluator()
    assert _admits(ev, "f8e4m3", "f8e4m3", "Vec", scalar=True)  # sizeof(T) == 1 admits every one-byte type
    assert not _admits(ev, "f16", "f16", "Vec", scalar=True)


def test_three_valued_conditions():
    ev = _evaluator()
    scope = hs.Scope({"T": hs.Elem("f16"), "U": hs.Elem()})
    assert ev.truth("std::is_same_v<T, half> || std::is_same_v<U, float>", scope) is True
    assert ev.truth("std::is_same_v<T, float> && std::is_same_v<U, float>", scope) is False
    assert ev.truth("std::is_same_v<U, float>", scope) is None
    assert ev.truth("sizeof(T) == 2 && !(sizeof(T) != 2)", scope) is True
    assert ev.truth("std::is_same_v<T, hifloat8_t>", scope) is False  # a type the database lacks
    assert ev.truth("SomeTile::isRowMajor", scope) is None


def test_a_recorded_omission_must_be_absent_from_the_table(tmp_path):
    db_dir = tmp_path / "specs"
    import shutil

    shutil.copytree(ROOT / "specs", db_dir)
    path = db_dir / "ops" / "tand.yaml"
    text = path.read_text().replace("dtypes: [f16, bf16, f32, f8e4m3", "dtypes: [i8, f16, bf16, f32, f8e4m3", 1)
    path.write_text(text)
    with pytest.raises(DatabaseErrors) as raised:
        load_database(str(db_dir), reuse=False)
    assert any("omits: a5 T lists i8" in str(e) for e in raised.value.errors)


def test_an_omission_of_some_modes_is_checked_against_their_rows_only(tmp_path):
    import shutil

    db_dir = tmp_path / "specs"
    shutil.copytree(ROOT / "specs", db_dir)
    path = db_dir / "ops" / "tmov.yaml"
    text = path.read_text()
    # f16 is in the default row: an omission of mat_to_scale may name it, one of default may not
    assert "dtypes: [f16, bf16, f32, i8, f8e4m3, f8e5m2, f4e2m1x2], modes: [mat_to_scale]" in text
    path.write_text(text.replace("f4e2m1x2], modes: [mat_to_scale]}", "f4e2m1x2], modes: [default]}"))
    with pytest.raises(DatabaseErrors) as raised:
        load_database(str(db_dir), reuse=False)
    assert any("omits: a5 T lists bf16, f16, f32, f4e2m1x2, f8e4m3, f8e5m2, i8" in str(e) for e in raised.value.errors)
    path.write_text(text.replace("f4e2m1x2], modes: [mat_to_scale]}", "f4e2m1x2], modes: [no_such_mode]}"))
    with pytest.raises(DatabaseErrors) as raised:
        load_database(str(db_dir), reuse=False)
    assert any("omits: unknown mode(s) no_such_mode" in str(e) for e in raised.value.errors)


needs_upstream = pytest.mark.skipif(not (PTO_ISA / "include/pto/npu/a5").is_dir(),
                                    reason=f"needs a pto-isa checkout at {PTO_ISA} (PTO_ISA_ROOT)")


def _screen(profile: str):
    import header_dtypes

    return header_dtypes.Screen(load_database_cached(), PTO_ISA, profile)


@pytest.fixture(scope="module")
def a5_screen():
    return _screen("a5")


@pytest.fixture(scope="module")
def a2a3_screen():
    return _screen("a2a3")


def _mode(op: str, mode: str):
    spec = load_database_cached().ops[op]
    return spec, next(m for m in spec.modes if m.name == mode)


@needs_upstream
def test_upstream_tadd_a5_follows_its_own_assert(a5_screen):
    op, mode = _mode("tadd", "default")
    assert a5_screen.admits(op, mode, {"T": "i64"}) and a5_screen.admits(op, mode, {"T": "u16"})
    assert not a5_screen.admits(op, mode, {"T": "f8e4m3"})


@needs_upstream
def test_upstream_tand_a5_admits_every_one_byte_type(a5_screen):
    op, mode = _mode("tand", "default")
    assert all(a5_screen.admits(op, mode, {"T": t}) for t in ("f8e4m3", "e8m0", "f4e2m1x2", "f16"))
    assert not a5_screen.admits(op, mode, {"T": "i64"})


@needs_upstream
def test_locations_come_from_the_profiles_loc_rules_not_the_example(a2a3_screen):
    # TMOV acc_to_out's example is A5's Vec destination; A2/A3's loc rule allows a Mat one only
    op, mode = _mode("tmov", "acc_to_out")
    assert a2a3_screen.placements(op, mode) == [{"dst": "Mat", "src": "Acc"}]
    assert a2a3_screen.admits(op, mode, {"S": "f32", "D": "f16"})


@needs_upstream
def test_an_enumerator_is_forwarded_through_an_auto_parameter(a5_screen):
    # TPOW<PowAlgorithm::HIGH_PRECISION> reaches TPOW_IMPL<algo>: its branch admits floating types only
    op, mode = _mode("tpow", "high_precision")
    assert a5_screen.admits(op, mode, {"T": "bf16"}) and not a5_screen.admits(op, mode, {"T": "i8"})
    op, mode = _mode("tpow", "default")
    assert a5_screen.admits(op, mode, {"T": "i8"}) and not a5_screen.admits(op, mode, {"T": "bf16"})


@needs_upstream
def test_a_call_under_a_run_time_if_is_instantiated(a2a3_screen):
    # TCI with a scratch tile calls TMULS under a plain if: its assertion rejects unsigned types
    op, mode = _mode("tci", "tmp")
    assert a2a3_screen.admits(op, mode, {"T": "i16"}) and not a2a3_screen.admits(op, mode, {"T": "u16"})


@needs_upstream
def test_an_overload_whose_type_parameter_cannot_be_deduced_is_not_viable(a5_screen):
    # a5 TCI calls CheckValid<TileData, T>(); TGATHER's CheckValid<Dst, Src0, Src1>() cannot take that call
    op, mode = _mode("tci", "default")
    assert a5_screen.admits(op, mode, {"T": "i16"}) and not a5_screen.admits(op, mode, {"T": "f32"})


SIZED = """
template <typename T, int U, int... Args>
AICORE constexpr bool SupportBytes() { return sizeof(T) == U; }
template <typename T>
PTO_INTERNAL void Store4() { static_assert(SupportBytes<T, 1, 2, 4>(), "b8/b16/b32"); }
template <typename T>
PTO_INTERNAL void Store8() { static_assert(sizeof(T) == 8, "b64"); }
template <typename TileDst>
PTO_INTERNAL void TPICK_IMPL(TileDst& dst)
{
    using T = typename TileDst::DType;
    if constexpr (sizeof(T) == 8) {
        Store8<T>();
    } else if (sizeof(T) == 4) {
        Store4<T>();
    } else {
        Store4<T>();
    }
}
"""


def test_support_bytes_and_a_run_time_if_under_the_else_of_an_if_constexpr():
    ev = hs.Evaluator(hs.Headers.parse({"sized.hpp": SIZED}, hs.MACROS["a5"], CPP, WIDTHS))
    scope = hs.Scope({"T": hs.Elem("f16")})
    assert ev.truth("SupportBytes<T, 1, 2, 4>()", scope) is True
    assert ev.truth("SupportBytes<T, 4, 8>()", hs.Scope({"T": hs.Elem("i64")})) is True
    assert ev.truth("SupportBytes<T, 1, 2, 4>()", hs.Scope({"T": hs.Elem()})) is None

    def admits(dtype: str) -> bool:
        inner = hs.Scope()
        inner.names["dst"] = inner.objects["dst"] = hs.Tile(dtype, "Vec")
        return ev.call_admits("TPICK_IMPL", None, ["dst"], inner, 0, frozenset())

    # the run-time if belongs to the discarded else: an 8-byte type never reaches Store4's assertion
    assert admits("i64") and admits("f16") and admits("i8")


@needs_upstream
def test_upstream_tmov_a5_vector_copy_stores_one_to_four_byte_types(a5_screen):
    # the Vec to Vec copy checks no type itself; its DIST_NORM store (GetDistVst) asserts SupportBytes<T, 1, 2, 4>
    op, mode = _mode("tmov", "default")
    assert a5_screen.admits(op, mode, {"T": "u8"}) and a5_screen.admits(op, mode, {"T": "u32"})
    assert not a5_screen.admits(op, mode, {"T": "i64"})
    op, mode = _mode("tsels", "default")  # its 64-bit branch is an if constexpr whose else is a run-time if
    assert a5_screen.admits(op, mode, {"T": "i64", "M": "u8", "U": "u8"})


def test_a_packed_type_outside_any_is_recorded_by_the_database():
    import header_dtypes

    db = load_database_cached()
    # TPOW's scratch tile is `U: any` on A5: f4e2m1x2 is left out by the definition of any, not by the op
    assert header_dtypes.packed_outside_any(db, db.ops["tpow"], "a5", "U", "default") == {"f4e2m1x2"}
    assert header_dtypes.packed_outside_any(db, db.ops["tpow"], "a5", "T", "default") == set()


@needs_upstream
def test_a_variable_no_assertion_constrains_alone_is_judged_beside_the_rows_other_types(a2a3_screen, a5_screen):
    # A5 TXOR asserts T's types and ties the scratch tile's to dst's: beside each row's T, U takes T's types
    op, mode = _mode("txor", "default")
    assert not [f for f in a5_screen.screen(op, mode) if f[1] == "U" and f[0] != "unconstrained"]
    # A2/A3 TXOR only ties T and U to each other: judged by each other's table types neither would be
    # constrained by the header at all, so both stay unconstrained (read by hand), not silently accepted
    assert {(cls, var) for cls, var, _ in a2a3_screen.screen(op, mode)} == {("unconstrained", "T"),
                                                                          ("unconstrained", "U")}
    # A5 CheckTMovAccValid<.., isQuant>: an f32 accumulator quantised to f32, bf16 or fp8 e4m3 as well
    op, mode = _mode("tmov", "acc_quant")
    stricter = {t for cls, var, types in a5_screen.screen(op, mode) if cls == "stricter" and var == "D" for t in types}
    assert {"bf16", "f32", "f8e4m3"} <= stricter and "i16" not in stricter


DISPATCH = """
template <typename T>
PTO_INTERNAL void CopyRow(T* dst)
{
    if constexpr (sizeof(T) == 1) {
        copy_b8(dst);
    } else if constexpr (sizeof(T) == 2) {
        copy_b16(dst);
    }
}
template <typename T>
PTO_INTERNAL constexpr int ModeOf()
{
    int mode = 0;
    if constexpr (std::is_same<T, half>::value) {
        mode = 1;
    } else if constexpr (std::is_same<T, float>::value) {
        mode = 2;
    }
    return mode;
}
template <typename T, typename U>
PTO_INTERNAL void CheckPair()
{
    if constexpr (std::is_same_v<T, int8_t>) {
        static_assert(std::is_same_v<U, int8_t>, "i8 pairs with i8");
    } else if constexpr (std::is_same_v<T, half>) {
        static_assert(std::is_same_v<U, float>, "half pairs with float");
    }
}
template <typename T>
PTO_INTERNAL void TCHECK_IMPL(T* dst) { CheckPair<T, float>(); }
template <typename T>
PTO_INTERNAL void TROW_IMPL(T* dst) { CopyRow<T>(dst); }
template <typename T>
PTO_INTERNAL void TMODE_IMPL(T* dst) { ModeOf<T>(); }
"""


def test_a_type_no_branch_of_a_type_dispatch_takes_does_nothing_so_is_not_admitted():
    ev = hs.Evaluator(hs.Headers.parse({"dispatch.hpp": DISPATCH}, hs.MACROS["a5"], CPP, WIDTHS))
    def admits(name: str, dtype: str) -> bool:
        return ev.call_admits(name, ["T"], ["dst"], hs.Scope({"T": hs.Elem(dtype)}), 0, frozenset())
    assert admits("TROW_IMPL", "i8") and admits("TROW_IMPL", "f16") and not admits("TROW_IMPL", "i64")
    # a function that returns a value after its chain (a default) is no dispatch: every type passes
    assert admits("TMODE_IMPL", "i64") and admits("TMODE_IMPL", "f16")
    # a chain whose branches only assert (A5 CheckMadValid) checks the types it names and no others
    assert admits("TCHECK_IMPL", "f16") and not admits("TCHECK_IMPL", "i8") and admits("TCHECK_IMPL", "i64")


@needs_upstream
def test_upstream_mgather_a2a3_row_copies_one_to_four_byte_elements(a2a3_screen):
    # MGatherRowDma picks copy_gm_to_ubuf_align_b8/b16/b32 by sizeof(T) and has no branch for 8 bytes
    op, mode = _mode("mgather", "row")
    assert a2a3_screen.admits(op, mode, {"T": "i32"}) and not a2a3_screen.admits(op, mode, {"T": "i64"})


@needs_upstream
def test_a_function_only_a_debug_build_defines_is_screened_in_that_build(a2a3_screen):
    # pto_instr.hpp defines TPRINT under #if defined(_DEBUG) || defined(__CPU_SIM) only
    _op, mode = _mode("tprint", "tile")
    assert not a2a3_screen.ev.h.functions.get("TPRINT")
    assert a2a3_screen.reachable(mode) and a2a3_screen.debug_only(mode)
    assert a2a3_screen.evaluator(mode).h.functions.get("TPRINT_IMPL")


@needs_upstream
def test_an_operand_the_call_takes_as_a_struct_is_not_screened(a5_screen):
    # TMRGSORT's executedNumList is a MrgSortExecutedNumList (uint16_t fields) in C++: C is the signature's
    op, mode = _mode("tmrgsort", "two")
    assert not [f for f in a5_screen.screen(op, mode) if f[1] == "C"]


def test_a_local_constexpr_bool_is_read_where_it_is_used():
    header = """
template <typename A, typename B>
constexpr bool isFp8Pair = std::is_same_v<A, float8_e4m3_t> && std::is_same_v<B, float8_e4m3_t>;
template <typename T, typename U>
PTO_INTERNAL void TMX_IMPL(T* a, U* b)
{
    constexpr bool isFp8 = isFp8Pair<T, U>;
    static_assert(isFp8 || std::is_same_v<T, half>, "pairs");
}
"""
    ev = hs.Evaluator(hs.Headers.parse({"mx.hpp": header}, hs.MACROS["a5"], CPP, WIDTHS))
    def admits(a: str, b: str | None) -> bool:
        scope = hs.Scope({"T": hs.Elem(a), "U": hs.Elem(b)})
        return ev.call_admits("TMX_IMPL", ["T", "U"], ["a", "b"], scope, 0, frozenset())
    assert admits("f8e4m3", "f8e4m3") and admits("f16", "i8") and admits("f8e4m3", None)
    assert not admits("i8", None) and not admits("f8e4m3", "i8")


@needs_upstream
def test_upstream_tmatmul_mx_a5_takes_fp8_and_fp4_operands_only(a5_screen):
    # CheckMadMxValid: constexpr bool isFp4/isFp8 = isSupportedFp4Combo/isSupportedFp8Combo<AType, BType>
    op, mode = _mode("tmatmul_mx", "default")
    assert a5_screen.admits(op, mode, {"A": "f8e5m2"}) and a5_screen.admits(op, mode, {"A": "f4e2m1x2"})
    assert not a5_screen.admits(op, mode, {"A": "f16"}) and not a5_screen.admits(op, mode, {"A": "i8"})


# ---------------------------------------------------------------- the compile probe (cpu)

def _probes(*types: str):
    import compile_probe as cp

    db = load_database_cached()
    op, mode = _mode("tshl", "default")
    probes = [cp.make_probe(db, op, mode, "cpu", {"T": t}, ("T", t)) for t in types]
    assert all(isinstance(p, cp.Probe) for p in probes), probes
    return db, op, mode, probes


def test_the_compile_probe_maps_each_error_to_its_probe_by_its_instantiation_chain():
    import compile_probe as cp

    _, _, _, probes = _probes("f16", "i16", "u16")
    unit = cp.render(probes)
    lines = unit.text.splitlines()
    assert lines[unit.call_lines[0] - 1].strip().startswith("TSHL(")
    tile_line = unit.type_spans[probes[2].plan.operands[0].cpp][0] + 2
    output = "\n".join([
        "/x/include/pto/cpu/ElementOp.h:216:82: error: invalid operands to binary expression ('_Float16' and "
        "'_Float16')",
        "/x/include/pto/cpu/ElementTileOp.h:45:42: note: in instantiation of member function 'apply' requested here",
        f"probe.cpp:{unit.call_lines[0]}:5: note: in instantiation of function template specialization "
        "'pto::TSHL<...>' requested here",
        "/x/include/pto/cpu/ElementOp.h:217:1: error: a follow-on error printed without its backtrace",
        "/x/include/pto/common/pto_tile.hpp:1523:5: error: static assertion failed: Cols must be 32 bytes align",
        f"probe.cpp:{tile_line}:5: note: in instantiation of template class 'pto::Tile<...>' requested here",
    ])
    found, bad_types = cp.classify(unit, output, "/x")
    assert found[0].kind == "rejected" and found[0].where == "include/pto/cpu/ElementOp.h:216"
    assert "invalid operands" in found[0].message and "aka" not in found[0].message
    assert set(found) == {0}  # the follow-on error inherits probe 0; the tile type's error is no probe's
    assert list(bad_types) == [probes[2].plan.operands[0].cpp]  # u16 tiles: a type of its own


def test_completions_take_the_other_variables_from_the_rows_then_the_probed_type():
    import compile_probe as cp

    op, mode = _mode("tsel", "default")
    done = cp.completions(op, mode, "cpu", "M", "i16")
    assert all(b["M"] == "i16" for b in done) and len(done) <= cp.MAX_COMPLETIONS
    assert done[-1] == {"M": "i16", "T": "i16", "U": "i16"}


@pytest.mark.skipif(cpusim_unavailable("run the compile probe") is not None,
                    reason=cpusim_unavailable("run the compile probe") or "")
def test_the_compile_probe_tells_a_rejected_type_from_a_compiling_one(tmp_path, monkeypatch):
    import compile_probe as cp

    monkeypatch.setenv("PTOSPEC_CPUSIM_CACHE", str(tmp_path))
    db, op, mode, _ = _probes("f16")
    compiler = cp.Compiler(Path(os.environ["PTO_ISA_ROOT"]))
    verdicts = cp.judge_types(db, compiler, "cpu", [(op, mode, "T", ("f16", "u16"))])
    assert verdicts["tshl", "default", "T", "f16"].kind == "rejected"  # the simulator shifts with << on _Float16
    assert verdicts["tshl", "default", "T", "f16"].where.startswith("include/pto/cpu/")
    assert verdicts["tshl", "default", "T", "u16"].kind == "compiles"


def test_a_struct_whose_value_is_a_disjunction_of_is_same_is_a_predicate():
    header = """
template <typename T>
struct IsValidCopyDType {
    static constexpr bool value = std::is_same_v<T, int8_t> || std::is_same_v<T, half>;
};
template <typename T>
struct IsSpecialised {
    static constexpr bool value = std::is_same_v<T, int8_t>;
};
template <>
struct IsSpecialised<half> {
    static constexpr bool value = true;
};
template <typename T>
PTO_INTERNAL void TCOPY_IMPL(T* dst) { static_assert(IsValidCopyDType<T>::value, "copy types"); }
template <typename T>
PTO_INTERNAL void TSPEC_IMPL(T* dst) { static_assert(IsSpecialised<T>::value, "specialised"); }
"""
    ev = hs.Evaluator(hs.Headers.parse({"copy.hpp": header}, hs.MACROS["a5"], CPP, WIDTHS))
    def admits(name: str, dtype: str) -> bool:
        return ev.call_admits(name, ["T"], ["dst"], hs.Scope({"T": hs.Elem(dtype)}), 0, frozenset())
    assert admits("TCOPY_IMPL", "i8") and admits("TCOPY_IMPL", "f16") and not admits("TCOPY_IMPL", "i64")
    # a specialised struct may answer otherwise for some type: unknown, never a rejection
    assert admits("TSPEC_IMPL", "f16") and admits("TSPEC_IMPL", "i64")


@needs_upstream
def test_upstream_mgather_mscatter_assert_their_type_trait(a2a3_screen, a5_screen):
    # MGatherCheck / MScatterCheck assert IsValid(M)GatherDType<T>::value / IsValid(M)ScatterDType<T>::value
    for name in ("mgather", "mscatter"):
        op, mode = _mode(name, "elem")
        for screen in (a2a3_screen, a5_screen):
            assert screen.admits(op, mode, {"T": "f32"}) and not screen.admits(op, mode, {"T": "i64"})
        assert a5_screen.admits(op, mode, {"T": "f8e4m3"}) and not a5_screen.admits(op, mode, {"T": "e8m0"})


@needs_upstream
def test_a_type_a_record_lists_but_the_header_rejects_is_reported_stale_not_recorded(a2a3_screen):
    import header_dtypes

    db = load_database()
    # MGATHER's elem mode is judged (IsValidMGatherDType): no record lists a type it rejects
    a2a3_screen.screen(*_mode("mgather", "elem"))
    # pad-fill's npu-64-bit-pad lists i64/u64, which TFILLPAD's screened path rejects on A2/A3
    a2a3_screen.screen(*_mode("tfillpad", "default"))
    stale = header_dtypes.stale_omits(db, a2a3_screen, "a2a3")
    assert stale.get(("tfillpad", "T")) == {"i64", "u64"} and ("mgather", "T") not in stale
