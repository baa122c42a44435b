"""The sample harness's facts (``specs/ptoas.yaml`` ``samples``) as one frozen value."""

from __future__ import annotations

from dataclasses import dataclass

from ..backends.ptoas.spec import load_ptoas_spec
from ..errors import SpecError
from ..model import Database


@dataclass(frozen=True)
class SampleFacts:
    directory: str  # the samples' folder in a checkout
    runtime: str  # validation_runtime.py, relative to a checkout
    script: str  # the tooling's generate_testcase.py
    compare_template: str
    default_arch: str
    directories: dict[str, dict]  # sample folder -> {arch, level}
    soc: dict[str, str]  # --pto-arch -> SOC_VERSION
    scalar_types: dict[str, str]  # MLIR scalar type -> C type
    defaults: dict[str, object]  # integer | float | bool -> value
    overrides_table: str  # the script's per-case table of scalar values
    zero_written_as_default: bool  # main.cpp writes a per-case value of 0 as the default
    host_types: dict[str, str]  # C type -> host type in main.cpp
    default_shape: tuple[int, int]
    eps: dict[str, float]  # C type -> allclose tolerance of the generated compare
    ulp: dict[str, int]  # C type -> units in the last place (bfloat16)
    arch_profiles: dict[str, str]  # --pto-arch -> profile
    compare_functions: dict[str, str]  # ulp | eps -> the template's function
    compare_placeholder: str  # the template's line the tooling replaces with its compares
    markers: dict[str, str]  # error | warn | failed -> what a compare script prints
    strict_env: str  # set to 1 for the compare scripts
    ptoas_flags: tuple[str, ...]  # runop.sh's flags before --pto-arch
    case_folders: tuple[str, ...]  # committed board-test case directories of a sample folder
    ir_dump_suffix: str  # the assembler's IR dumps beside the kernels
    builders: dict  # how a <case>.py builder's module is made (ptospec/samples/builders.py)

    def scalar_default(self, ctype: str) -> object:
        if ctype == "bool":
            return bool(self.defaults["bool"])
        if ctype in ("float", "double", "half", "bfloat16_t"):
            return float(self.defaults["float"])
        return int(self.defaults["integer"])

    def soc_of(self, profile: str | None) -> str:
        """SOC_VERSION the scripts see for a run on ``profile``."""
        arch = next((a for a, p in self.arch_profiles.items() if p == profile), self.default_arch)
        return self.soc.get(arch, "")

    def arch(self, folder: str) -> tuple[str, int | None]:
        """The --pto-arch and --pto-level runop.sh gives the .pto files of a sample folder."""
        entry = self.directories.get(folder, {})
        return entry.get("arch", self.default_arch), entry.get("level")


def load_sample_facts(db: Database) -> SampleFacts:
    spec = load_ptoas_spec(db)
    s = spec.samples
    if not s:
        raise SpecError("specs/ptoas.yaml has no samples section", rule="ptoas.samples")
    return SampleFacts(s["directory"], s["runtime"], s["script"], s["compare_template"], s["default_arch"],
                       {k: dict(v) for k, v in s["directories"].items()}, dict(s["soc"]), dict(s["scalar_types"]),
                       dict(s["scalar_defaults"]), s["scalar_overrides"], s["zero_override_written_as_default"],
                       dict(s["host_types"]), tuple(s["default_shape"]), dict(s["compare"]["eps"]),
                       dict(s["compare"]["ulp"]),
                       {arch: profile for profile, arch in spec.arch.items()}, dict(s["compare"]["functions"]),
                       s["compare"]["placeholder"], dict(s["compare"]["markers"]), s["strict_env"],
                       tuple(s["ptoas_flags"]), tuple(s["case_folders"]), s["ir_dump_suffix"],
                       dict(s["builders"]))
