"""``pipes`` of isa.yaml and the ``pipe`` of each instruction mode (pipes as spec data), read and checked."""

from __future__ import annotations

from typing import Any

from ..model import Isa, ModePipe, Operand, PipeChoice, Pipes, PipeUnit


def load_pipes(src, d: dict[str, Any], issues) -> Pipes | None:
    """``pipes`` of isa.yaml (None when the file declares none)."""
    p = d.get("pipes")
    if p is None:
        return None
    units = {}
    for name, u in p["units"].items():
        for k, prof in enumerate(u["ordered_within"]):
            if prof not in d["profiles"]:
                issues.add(src, ("pipes", "units", name, "ordered_within", k), f"unknown profile {prof!r}",
                           "isa.profile")
        units[name] = PipeUnit(name, u["enumerator"], tuple(u["ordered_within"]), u["text"])
    enumerators = [u.enumerator for u in units.values()]
    if len(set(enumerators)) != len(enumerators):
        issues.add(src, ("pipes", "units"), "two pipes share an enumerator", "isa.pipe")
    return Pipes(units, p["source"]["ref"], p.get("order_source", {}).get("ref", ""),
                 tuple((tuple(e["names"]), e["reason"]) for e in p.get("without_entry", ())))


def build_pipe(ctx, mp: tuple, m: dict[str, Any], operands: tuple[Operand, ...]) -> ModePipe | None:
    return mode_pipe(ctx.src, mp, m, operands, ctx.isa, ctx.issues)


def mode_pipe(src, mp: tuple, m: dict[str, Any], operands: tuple[Operand, ...], isa: Isa, issues) -> ModePipe | None:
    """A mode's ``pipe``: every unit is a pipe of isa.yaml, a location choice names a tile operand of the mode and
    tile locations, a profile is a profile.  A database that declares pipes needs one for every mode (op.pipe)."""
    if isa.pipes is None:
        return None
    if "pipe" not in m:
        issues.add(src, mp, "the mode names no pipe (pipe: one of "
                   f"{', '.join(isa.pipes.units)}; isa.yaml pipes)", "op.pipe")
        return None
    spec = m["pipe"]
    where = (*mp, "pipe")
    if isinstance(spec, dict) and "default" in spec:
        default = _choice(src, (*where, "default"), spec["default"], operands, isa, issues)
        profiles = []
        for prof, c in spec["profiles"].items():
            if prof not in isa.profiles:
                issues.add(src, (*where, "profiles", prof), f"unknown profile {prof!r}", "op.profile")
            profiles.append((prof, _choice(src, (*where, "profiles", prof), c, operands, isa, issues)))
        return ModePipe(default, tuple(profiles))
    return ModePipe(_choice(src, where, spec, operands, isa, issues))


def _choice(src, where: tuple, spec, operands: tuple[Operand, ...], isa: Isa, issues) -> PipeChoice:
    units = isa.pipes.units
    if isinstance(spec, str):
        if spec not in units:
            issues.add(src, where, f"unknown pipe {spec!r} (pipes: {', '.join(units)})", "op.pipe")
        return PipeChoice(unit=spec)
    operand = next((o for o in operands if o.name == spec["operand"]), None)
    if operand is None or operand.role not in ("in", "out", "tmp") or operand.is_global:
        issues.add(src, (*where, "operand"), f"{spec['operand']!r} is no tile operand of the mode", "op.pipe")
    for loc, unit in spec["locations"].items():
        if loc not in isa.tile_types:
            issues.add(src, (*where, "locations", loc), f"unknown tile location {loc!r}", "op.pipe")
        if unit not in units:
            issues.add(src, (*where, "locations", loc), f"unknown pipe {unit!r} (pipes: {', '.join(units)})",
                       "op.pipe")
    return PipeChoice(operand=spec["operand"], locations=tuple(spec["locations"].items()))
