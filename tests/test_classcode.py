"""The code ``dataclasses`` compiles for the package's classes, kept between processes (``ptospec/classcode.py``)
under the database cache's rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from ptospec import classcode

PROBE = textwrap.dedent("""
    import dataclasses, json
    from ptospec import classcode
    classcode.install()  # as the command line does
    import ptospec.model as m, ptospec.program.api
    a = m.DType("f32", "float", 32, "float", "float32")
    try:
        a.bits = 8
        frozen = False
    except dataclasses.FrozenInstanceError:
        frozen = True
    print(json.dumps({"compiled": len(classcode._compiled), "served": dataclasses.__dict__.get("exec") is not None,
                      "repr": repr(a), "eq": a == m.DType("f32", "float", 32, "float", "float32"),
                      "hash": hash(a) == hash(m.DType("f32", "float", 32, "float", "float32")), "frozen": frozen}))
""")


def _probe(cache) -> dict:
    env = {**os.environ, "PTOSPEC_DATABASE_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_second_process_compiles_nothing_and_makes_the_same_classes(tmp_path):
    first = _probe(tmp_path)
    assert first["served"] and first["compiled"] > 100  # every class of the model and the program layer
    (table,) = tmp_path.glob("classcode-*.marshal")
    assert table.stat().st_mode & 0o777 == 0o600
    second = _probe(tmp_path)
    assert second == {**first, "compiled": 0}
    assert second["eq"] and second["hash"] and second["frozen"] and second["repr"].startswith("DType(name='f32'")


def test_a_table_others_may_write_or_a_damaged_one_is_not_read(tmp_path):
    _probe(tmp_path)
    (table,) = tmp_path.glob("classcode-*.marshal")
    assert classcode.read(table)
    table.chmod(0o664)  # code objects are code: a file another user could have written is never loaded
    assert classcode.read(table) == {}
    table.chmod(0o600)
    table.write_bytes(table.read_bytes()[:1000])
    assert classcode.read(table) == {}
    assert _probe(tmp_path)["compiled"] > 100 and classcode.read(table)  # compiled as before, written again


def test_a_directory_others_may_write_is_neither_read_nor_written(tmp_path):
    cache = tmp_path / "open"
    cache.mkdir()
    cache.chmod(0o777)
    probe = _probe(cache)
    assert not probe["served"] and probe["eq"] and probe["frozen"]
    assert list(cache.iterdir()) == []


def test_texts_of_other_modules_are_compiled_as_ever():
    before = dict(classcode._codes)
    namespace: dict = {}
    classcode._exec("def f():\n return 1\n", {"__name__": "elsewhere"}, namespace)
    assert namespace["f"]() == 1 and classcode._codes == before


def test_importing_the_library_leaves_dataclasses_alone(tmp_path):
    probe = "import dataclasses, ptospec.model, ptospec.program.api; print('exec' in dataclasses.__dict__)"
    env = {**os.environ, "PTOSPEC_DATABASE_CACHE": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False" and list(tmp_path.glob("classcode-*")) == []
