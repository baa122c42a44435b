"""``specs/ptoas.yaml``: the PTO assembler as a backend (how to build it, which instructions it has an
operation for, the choices of its dialect), loaded and checked against the database."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...errors import SpecError
from ...loader import DatabaseErrors, Issues, check_schema
from ...model import Database, Text
from ...yamlsource import read_yaml

FILE = "ptoas.yaml"


@dataclass(frozen=True)
class Build:
    apt: tuple[str, ...]
    tools: tuple[str, ...]
    cmake: tuple[str, ...]
    binary: str


@dataclass(frozen=True)
class Choice:
    """A deliberate difference of the dialect: a tile normalisation of the parser, or a lowering."""

    id: str
    kind: str  # normalise | lowering
    text: Text
    source: str
    loc: str = ""  # normalise: the tile location, field and per-profile value the parser forces
    field: str = ""
    value: tuple[tuple[str, str], ...] = ()
    op: str = ""  # lowering: the instruction


@dataclass(frozen=True)
class Syntax:
    attributes_in_ins: frozenset[str]  # mnemonics whose attribute dictionary is inside ins(...)
    attributes_after_comma: frozenset[str]  # ... after a comma
    typed_operands: frozenset[str]  # mnemonics writing ins(%a : A, %b : B)
    ssa_form: frozenset[str] = frozenset()  # mnemonics written %out = pto.op %in : T -> T2 only
    absent_attributes: tuple[tuple[str, frozenset[str]], ...] = ()  # mnemonic -> attr operands it has no key for

    def absent(self, mnemonic: str) -> frozenset[str]:
        return dict(self.absent_attributes).get(mnemonic, frozenset())


@dataclass(frozen=True)
class PtoasSpec:
    sources: dict[str, dict[str, str]]
    tested_commit: str
    minimum_version: tuple[int, ...]
    arch: dict[str, str]  # profile -> --pto-arch
    build: Build
    locations: frozenset[str]
    uncovered: dict[str, Text]  # op -> why the dialect has no operation for it
    choices: tuple[Choice, ...]
    file: str
    syntax: Syntax = Syntax(frozenset(), frozenset(), frozenset())
    unwritten_modes: dict[str, tuple[tuple[str, ...], Text]] = field(default_factory=dict)  # op -> (modes, why)
    samples: dict = field(default_factory=dict)  # the sample harness's facts, as written (ptospec.samples.facts)

    def unwritten(self, mnemonic: str, mode: str) -> Text | None:
        """Why the dialect cannot write ``mode`` of ``mnemonic`` (None when it can)."""
        modes, why = self.unwritten_modes.get(mnemonic, ((), None))
        return why if mode in modes else None

    def normalisations(self, profile: str) -> list[tuple[str, str, str]]:
        """(loc, field, value) the parser forces on the tiles of a module for ``profile``."""
        return [(c.loc, c.field, dict(c.value)[profile]) for c in self.choices
                if c.kind == "normalise" and profile in dict(c.value)]


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def load_ptoas_spec(db: Database, root: Path | None = None) -> PtoasSpec:
    root = root or Path(db.root)
    path = root / FILE
    if not path.is_file():
        raise SpecError(f"{FILE} is missing from the database", where=str(root), rule="ptoas.spec")
    src = read_yaml(path, str(path))
    check_schema(src, "ptoas")
    d = src.data
    issues = Issues()
    sources = set(d["sources"])
    for profile in d["arch"]:
        if profile not in db.isa.profiles:
            issues.add(src, ("arch", profile), f"unknown profile {profile!r}", "ptoas.profile")
    for loc in d["locations"]:
        if loc not in db.isa.tile_types:
            issues.add(src, ("locations",), f"{loc} is not a tile location of specs/isa.yaml", "ptoas.location")
    for key in ("locations_source",):
        if d[key] not in sources:
            issues.add(src, (key,), f"unknown source {d[key]!r}", "ptoas.source")
    syn = d["syntax"]
    _check_syntax(src, d, db, sources, issues)
    if d["build"]["source"] not in sources:
        issues.add(src, ("build", "source"), f"unknown source {d['build']['source']!r}", "ptoas.source")
    mnemonics = {op.mnemonic for op in db.ops.values()}  # empty when only this file is linted: not checked
    for name in d["uncovered"]:
        if mnemonics and name not in mnemonics:
            issues.add(src, ("uncovered", name), f"{name} is not an instruction of the database", "ptoas.op")
    choices = _choices(src, d, db, sources, mnemonics, issues)
    _check_samples(src, d.get("samples"), sources, db, issues)
    if issues.items:
        raise DatabaseErrors(issues.items)
    b = d["build"]
    return PtoasSpec(dict(d["sources"]), d["tested_commit"], version_tuple(d["minimum_version"]), dict(d["arch"]),
                     Build(tuple(b["apt"]), tuple(b["tools"]), tuple(b["cmake"]), b["binary"]),
                     frozenset(d["locations"]), dict(d["uncovered"]), tuple(choices), str(path),
                     Syntax(frozenset(syn["attributes_in_ins"]), frozenset(syn["attributes_after_comma"]),
                            frozenset(syn["typed_operands"]), frozenset(syn.get("ssa_form", ())),
                            tuple((k, frozenset(v)) for k, v in syn.get("absent_attributes", {}).items())),
                     {k: (tuple(v["modes"]), v["text"]) for k, v in d.get("unwritten_modes", {}).items()},
                     dict(d.get("samples", {})))


def _check_syntax(src, d: dict, db: Database, sources: set[str], issues: Issues) -> None:
    """``syntax`` and ``unwritten_modes`` name known sources, instructions of the database, their attribute
    operands and modes."""
    syn = d["syntax"]
    if syn["source"] not in sources:
        issues.add(src, ("syntax", "source"), f"unknown source {syn['source']!r}", "ptoas.source")
    known = mnemonics_known(db)  # empty when only this file is linted: not checked
    for key in ("attributes_in_ins", "attributes_after_comma", "typed_operands", "ssa_form", "absent_attributes"):
        for name in syn.get(key, ()):
            if known and name not in known:
                issues.add(src, ("syntax", key), f"{name} is not an instruction of the database", "ptoas.op")
    by_mnemonic = {op.mnemonic: op for op in db.ops.values()}
    for name, attrs in syn.get("absent_attributes", {}).items():
        for attr in attrs:
            if name in by_mnemonic and not any(o.name == attr and o.is_attr and o.dialect_default is not None
                                               for m in by_mnemonic[name].modes for o in m.operands):
                issues.add(src, ("syntax", "absent_attributes", name), f"{attr} is no attribute operand of {name} "
                           "with a dialect default (the only value the operation can mean)", "ptoas.op")
    for name, entry in d.get("unwritten_modes", {}).items():
        if name not in by_mnemonic:
            if known:
                issues.add(src, ("unwritten_modes", name), f"{name} is not an instruction of the database", "ptoas.op")
            continue
        modes = {m.name for m in by_mnemonic[name].modes}
        for mode in entry["modes"]:
            if mode not in modes:
                issues.add(src, ("unwritten_modes", name), f"{name} has no mode {mode!r}", "ptoas.op")


def _choices(src, d: dict, db: Database, sources: set[str], mnemonics: set[str], issues: Issues) -> list[Choice]:
    """The dialect's choices, each once, with known sources; a normalisation names a dialect location, profiles
    with an assembler target and values of specs/isa.yaml."""
    choices = []
    seen: set[str] = set()
    for k, c in enumerate(d["choices"]):
        where = ("choices", k)
        if c["id"] in seen:
            issues.add(src, (*where, "id"), f"choice {c['id']!r} given twice", "ptoas.choice")
        seen.add(c["id"])
        if c["source"] not in sources:
            issues.add(src, (*where, "source"), f"unknown source {c['source']!r}", "ptoas.source")
        if c["kind"] == "normalise":
            if c["loc"] not in d["locations"]:
                issues.add(src, (*where, "loc"), f"{c['loc']} is not a location of the dialect", "ptoas.location")
            table = {"blayout": db.isa.blayouts, "slayout": db.isa.slayouts, "pad": db.isa.pad_values}[c["field"]]
            for profile, value in c["value"].items():
                if profile not in d["arch"]:
                    issues.add(src, (*where, "value", profile), f"{profile} has no assembler target", "ptoas.profile")
                if value not in table:
                    issues.add(src, (*where, "value", profile), f"{value!r} is no {c['field']} of specs/isa.yaml",
                               "ptoas.choice")
        elif mnemonics and c["op"] not in mnemonics:
            issues.add(src, (*where, "op"), f"{c['op']} is not an instruction of the database", "ptoas.op")
        choices.append(Choice(c["id"], c["kind"], c["text"], c["source"], c.get("loc", ""), c.get("field", ""),
                              tuple(c.get("value", {}).items()), c.get("op", "")))
    return choices


def _check_samples(src, samples: dict | None, sources: set[str], db: Database, issues: Issues) -> None:
    """The sample harness's facts name known sources, and the C types of its tables are types a kernel has."""
    if not samples:
        return
    for key in ("source", "directories_source", "scalar_types_source"):
        if samples[key] not in sources:
            issues.add(src, ("samples", key), f"unknown source {samples[key]!r}", "ptoas.source")
    if samples["builders"]["source"] not in sources:
        issues.add(src, ("samples", "builders", "source"), f"unknown source {samples['builders']['source']!r}",
                   "ptoas.source")
    cpp = {d.cpp for d in db.isa.dtypes.values()}
    for name, ctype in samples["scalar_types"].items():
        if name in db.isa.dtypes and db.isa.dtypes[name].cpp != ctype:
            issues.add(src, ("samples", "scalar_types", name), f"{name} is {db.isa.dtypes[name].cpp} in "
                       f"specs/isa.yaml, not {ctype}", "ptoas.samples")
    ctypes = cpp | set(samples["scalar_types"].values())
    for table, keys in (("host_types", samples["host_types"]), ("compare eps", samples["compare"]["eps"]),
                        ("compare ulp", samples["compare"]["ulp"])):
        for ctype in keys:
            if db.isa.dtypes and ctype not in ctypes:
                issues.add(src, ("samples", *table.split()), f"{ctype} is no C type of a kernel parameter",
                           "ptoas.samples")


def mnemonics_known(db: Database) -> set[str]:
    return {op.mnemonic for op in db.ops.values()}
