from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptospec.asm.forms import FORMS, parse_line, print_form
from ptospec.asm.types import format_descriptor, parse_descriptor
from ptospec.attrs import sample_values
from ptospec.errors import PtospecError
from ptospec.tile import AttrDesc, ScalarDesc, TileDesc


@st.composite
def tile_descs(draw, isa):
    rows = draw(st.integers(1, 512))
    cols = draw(st.integers(1, 512))
    unknown = draw(st.booleans())
    return TileDesc(
        loc=draw(st.sampled_from(list(isa.tile_types))),
        dtype=draw(st.sampled_from(list(isa.dtypes))),
        rows=rows, cols=cols,
        valid_row=None if unknown else draw(st.integers(0, rows)),
        valid_col=None if unknown else draw(st.integers(0, cols)),
        blayout=draw(st.sampled_from(list(isa.blayouts))),
        slayout=draw(st.sampled_from(list(isa.slayouts))),
        fractal=draw(st.sampled_from([32, 512, 1024])),
        pad=draw(st.sampled_from(list(isa.pad_values))),
    )


def operand_descs(isa, operand):
    """A descriptor of the operand's kind: an enumerator, a scalar dtype, or a tile."""
    if operand.is_attr:
        return st.sampled_from(sample_values(isa, operand)).map(AttrDesc)
    if operand.role == "scalar":
        return st.sampled_from(list(isa.dtypes)).map(ScalarDesc)
    return tile_descs(isa)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_round_trip_every_op_mode_form(db, data):
    op = data.draw(st.sampled_from(sorted(db.ops)))
    spec = db.ops[op]
    mode = data.draw(st.sampled_from(spec.modes))
    form = data.draw(st.sampled_from(FORMS))
    tiles = {o.name: ScalarDesc(spec.scalar_dtype(mode, o)) if o.asm_type else data.draw(operand_descs(db.isa, o))
             for o in mode.operands}  # a scalar typed `index` in assembly has its one dtype
    line = print_form(db, spec, mode, form, tiles)
    parsed = parse_line(db, line, mode.name)
    assert parsed.op == op and parsed.mode == mode.name and parsed.form == form
    shown = set(mode.asm[form].ins) | set(mode.asm[form].outs) | {o.name for o in mode.attrs}
    assert parsed.operands == {n: tiles[n] for n in shown}
    assert print_form(db, spec, mode, form, {**tiles, **parsed.operands}) == line


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_descriptor_round_trip(db, data):
    tile = data.draw(tile_descs(db.isa))
    assert parse_descriptor(format_descriptor(tile, db.isa), db.isa) == tile


def test_upstream_spellings_are_aliases(db):
    t = parse_line(db, "%dst = tmax %a, %b : !pto.tile<f32, 16, 16>")
    assert t.operands["src0"] == t.operands["dst"] == TileDesc("Vec", "f32", 16, 16, 16, 16)
    t = parse_line(db, "%d = pto.tcolmin %s : !pto.tile<16x32xf16> -> !pto.tile<1x32xf16>")
    assert t.operands["dst"].shape == (1, 32)
    t = parse_line(db, "pto.tcolmin ins(%s : !pto.tile_buf<vec, 32x32xf16, valid=?x?>) "
                       "outs(%d : !pto.tile_buf<vec, 1x32xf16>)")
    assert t.operands["src"].valid_row is None
    t = parse_line(db, "%d = pto.tcolexpandmax %a, %b : !pto.tile<16x16xf32>, !pto.tile<1x16xf32> -> "
                       "!pto.tile<16x16xf32>")
    assert t.operands["src1"].rows == 1
    desc = parse_descriptor("loc=mat, bf16, 16, 16, RowMajor, NoneBox, None, Null", db.isa)
    assert desc.loc == "Mat" and desc.dtype == "bf16" and desc.fractal == 512


def test_ssa_functional_type_wraps_only_several_inputs(db):
    """One input prints bare, as MLIR's functional type and the upstream pages write it; several in parentheses."""
    from ptospec.asm.forms import print_template

    tcolmin, tmax = db.ops["tcolmin"], db.ops["tmax"]
    one = print_template(tcolmin, tcolmin.mode("default"), "ssa")
    assert one == "%dst = pto.tcolmin %src : !pto.tile<...> -> !pto.tile<...>"
    two = print_template(tmax, tmax.mode("default"), "ssa")
    assert two == "%dst = pto.tmax %src0, %src1 : (!pto.tile<...>, !pto.tile<...>) -> !pto.tile<...>"
    for line in (one, one.replace(": !pto.tile<...> ->", ": (!pto.tile<...>) ->"),
                 two, two.replace(": (!pto.tile<...>, !pto.tile<...>)", ": !pto.tile<...>, !pto.tile<...>")):
        assert parse_line(db, line.replace("...", "vec, 16x16xf32")).op in ("tcolmin", "tmax")


def test_boxed_layouts_are_named_as_the_messages_name_them(db):
    """``layout=`` takes the storage orders the rules' messages say (NZ, ZN, ZZ, NN), in any case."""
    for word, pair in (("nz", ("ColMajor", "RowMajor")), ("ZN", ("RowMajor", "ColMajor")),
                       ("zz", ("RowMajor", "RowMajor")), ("nn", ("ColMajor", "ColMajor")),
                       ("dn", ("ColMajor", "NoneBox"))):
        desc = parse_descriptor(f"left,16x16xf16,layout={word}", db.isa)
        assert (desc.blayout, desc.slayout) == pair, word
    with pytest.raises(PtospecError, match=r"unknown layout 'qq'.*known: ND, DN, NZ"):
        parse_descriptor("left,16x16xf16,layout=qq", db.isa)


def test_the_short_tile_form_takes_a_pad_value_by_its_number(db):
    """TileBufType::print writes the pad as its PadValue number (pad=1: zero), as the keyword form does."""
    assert parse_descriptor("vec,32x32xf32,pad=1", db.isa).pad == parse_descriptor("vec,32x32xf32,pad=zero",
                                                                                   db.isa).pad == "Zero"
    with pytest.raises(PtospecError, match=r"pad number 7 is not a PadValue"):
        parse_descriptor("vec,32x32xf32,pad=7", db.isa)


def test_dps_line_gives_the_validator_its_tiles(db):
    from ptospec.validator import validate

    line = ("pto.tcolargmax ins(%src, %tmp : !pto.tile_buf<vec, 16x256xf32, valid=16x255>, "
            "!pto.tile_buf<vec, 1x128xf32>) outs(%dstIdx : !pto.tile_buf<vec, 1x256xu32, valid=1x255>)")
    parsed = parse_line(db, line)
    assert validate(db, parsed.op, parsed.mode, "a2a3", parsed.operands).ok


@pytest.mark.parametrize("line, fragment", [
    ("", "empty"),
    ("pto.tnothing ins() outs(%d : !pto.tile_buf<vec, 1x16xf32>)", "unknown instruction"),
    ("%d = pto.tcolmin %s : (!pto.tile<16x16xf32>) -> !pto.tile<1x16xq32>", "unknown dtype"),
    ("%d = pto.tcolmin %s, %t : (!pto.tile<16x16xf32>) -> !pto.tile<1x16xf32>", "operand"),
    ("pto.tcolmin ins(%s : !pto.tile_buf<vec, 16x16xf32>) outs(%d, %e : !pto.tile_buf<vec, 1x16xf32>)", "type"),
    ("%d = pto.tcolmin %s : (!pto.tile<vec, 16x16xf32, valid=3>) -> !pto.tile<1x16xf32>", "valid shape"),
    ("%d = pto.tcolmin %s : (!pto.tile<vec, 16x16xf32, colour=red>) -> !pto.tile<1x16xf32>", "unknown parameter"),
    ("hello world", "not an assembly line"),
    ("%d = pto.tcolmin s : (!pto.tile<16x16xf32>) -> !pto.tile<1x16xf32>", "SSA value"),
])
def test_bad_asm_is_one_clear_error(db, line, fragment):
    with pytest.raises(PtospecError, match=fragment):
        parse_line(db, line)
