"""Where the spec files are, and how their paths appear in messages."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SpecError

SPEC_ENV = "PTOSPEC_SPECS"


def find_specs_root(explicit: str | os.PathLike | None = None) -> Path:
    """Where the database lives: ``--specs``, ``$PTOSPEC_SPECS``, ``./specs`` or above, or the source tree."""
    if explicit:
        root = Path(explicit)
        if not (root / "isa.yaml").is_file():
            raise SpecError(f"{root} is not a spec directory (no isa.yaml in it)", rule="specs.root")
        return root
    env = os.environ.get(SPEC_ENV)
    if env:
        return find_specs_root(env)
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "specs" / "isa.yaml").is_file():
            return folder / "specs"
    bundled = Path(__file__).resolve().parent.parent.parent / "specs"
    if (bundled / "isa.yaml").is_file():
        return bundled
    raise SpecError("cannot find the spec database; pass --specs DIR or set PTOSPEC_SPECS", rule="specs.root")


def op_files(root: Path) -> list[Path]:
    return sorted((root / "ops").glob("*.yaml"))


def kind_files(root: Path) -> list[Path]:
    return sorted((root / "kinds").glob("*.yaml"))


def display_path(path: Path) -> str:
    """A path as shown in messages: relative to the working directory when inside it."""
    try:  # os.path.realpath, not Path.resolve: a loop of links is a file that cannot be read, not an exception here
        return str(Path(os.path.realpath(path)).relative_to(os.path.realpath(Path.cwd())))
    except ValueError:
        return str(path)
