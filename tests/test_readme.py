"""The README stays short and true: its two commands are the ones CI runs, every command it shows is one
the command line accepts (the cheap ones are run), and every link resolves."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from ptospec.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```sh\n(.*?)```", README, re.S)


def commands(prefix: str) -> list[str]:
    """Every command line of the README's shell blocks starting with ``prefix``, without its comment."""
    lines = [line.split("  #")[0].strip() for block in BLOCKS for line in block.splitlines()]
    return [line for line in lines if line.startswith(prefix)]


def test_short() -> None:
    words = len(re.sub(r"```.*?```", "", README, flags=re.S).split())
    assert words < 800, f"the README has {words} words of prose; move details to docs/"


def test_the_two_commands_are_what_ci_runs() -> None:
    two = [line for line in BLOCKS[0].splitlines() if line.strip()]
    assert len(two) == 2 and two[1] == "python3 -m pytest tests generated_tests"
    # CI installs quietly; otherwise the lines are the README's, word for word
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace(" --quiet", "").splitlines()
    for command in two:
        assert command in ci, f"{command!r} is not a line of .ci/run"


def test_every_link_resolves() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def _without_optional(line: str) -> list[str]:
    return shlex.split(re.sub(r"\s\[[^\]]*\]", "", line))[1:]


@pytest.mark.parametrize("line", commands("ptospec "))
def test_every_ptospec_command_parses(line: str) -> None:
    for part in line.split("&&"):
        args = _without_optional(part.strip())
        build_parser().parse_args(args)  # exits (SystemExit) on an unknown command or option


def test_the_single_instruction_commands_run(tmp_path, monkeypatch, capsys) -> None:
    """``check``, ``run``, ``show`` and ``check-program`` as shown: legal (exit 0), the run writes its output."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").symlink_to(ROOT / "docs")  # the example kernels the README names
    np.save(tmp_path / "src.npy", np.arange(256, dtype=np.float32).reshape(16, 16))
    lines = [line for line in commands("ptospec ") if line.split()[1] in ("check", "run", "show", "check-program")]
    assert len(lines) >= 4
    for line in lines:
        code = main(["--specs", str(ROOT / "specs"), *_without_optional(line)])
        assert code == 0, (line, capsys.readouterr())
    assert (tmp_path / "out.npz").is_file()
