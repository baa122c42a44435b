"""What a command that reads the database imports when the database kept on disk is fresh: neither the YAML
reader nor JSON Schema, and NumPy only for the commands that compute with it (benchmarks/startup.py times them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json, sys
from ptospec.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(m for m in ("numpy", "yaml", "jsonschema") if m in sys.modules)}),
      file=sys.stderr)
"""


def _run(cache: Path, *args: str) -> dict:
    env = {**os.environ, "PTOSPEC_DATABASE_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env, capture_output=True, text=True)
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_reading_commands_import_only_what_they_use(tmp_path):
    check = ("check", "tadd", "--profile", "a5", "--tile", "dst=vec,16x16xf32", "--tile", "src0=vec,16x16xf32",
             "--tile", "src1=vec,16x16xf32")
    built = _run(tmp_path, *check)  # loads the specs (YAML) and keeps the database
    assert built["code"] == 0 and "yaml" in built["modules"]
    assert _run(tmp_path, *check) == {"code": 0, "modules": []}
    assert _run(tmp_path, "show", "tcolmax") == {"code": 0, "modules": []}
    assert _run(tmp_path, "list", "--family", "reduce-and-expand") == {"code": 0, "modules": []}
