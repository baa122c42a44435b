"""The database kept on disk between processes (``ptospec conformance`` reads it instead of the specs)."""

from __future__ import annotations

import pickle

from ptospec import dbcache
from ptospec.model import Database


def test_a_second_process_reads_the_database_the_first_one_built(tmp_path, db):
    first = dbcache.load_database_cached(db.root, tmp_path)
    files = list(tmp_path.glob("*.pickle"))
    assert len(files) == 1
    second = dbcache.load_database_cached(db.root, tmp_path)  # read from the file: another object, same content
    assert isinstance(second, Database) and second is not first
    assert sorted(second.ops) == sorted(first.ops) and second.isa.profiles.keys() == first.isa.profiles.keys()


def test_a_damaged_file_is_a_plain_load_and_is_rewritten(tmp_path, db):
    dbcache.load_database_cached(db.root, tmp_path)
    (path,) = tmp_path.glob("*.pickle")
    path.write_bytes(b"not a pickle")
    again = dbcache.load_database_cached(db.root, tmp_path)
    assert isinstance(again, Database)
    assert isinstance(pickle.loads(path.read_bytes()), Database)


def test_off_loads_the_specs(monkeypatch, db):
    monkeypatch.setenv(dbcache.ENV_DIR, "off")
    assert dbcache.default_dir() is None
    assert dbcache.load_database_cached(db.root) is not None


def test_a_file_others_may_write_is_never_unpickled(tmp_path, db, monkeypatch):
    dbcache.load_database_cached(db.root, tmp_path)
    (path,) = tmp_path.glob("*.pickle")
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o664)  # group-writable: a pickle can run code, so it is loaded afresh instead
    read = []
    monkeypatch.setattr(dbcache.pickle, "load", lambda f: read.append(f) or pickle.load(f))
    assert isinstance(dbcache.load_database_cached(db.root, tmp_path), Database)
    assert not read and path.stat().st_mode & 0o777 == 0o600  # rewritten by this user, privately


def test_an_edited_spec_is_loaded_again(tmp_path, db):
    """The key is the files' status: an edit (new size, times) misses the database built before it."""
    import shutil

    specs = tmp_path / "specs"
    shutil.copytree(db.root, specs)
    cache = tmp_path / "cache"
    first = dbcache.load_database_cached(specs, cache)
    op_file = specs / "ops" / "tadd.yaml"
    op_file.write_text(op_file.read_text() + "\n# an edit\n")
    second = dbcache.load_database_cached(specs, cache)
    assert second is not first and len(list(cache.glob("database-*.pickle"))) == 2
    assert dbcache.load_database_cached(specs, cache).ops.keys() == second.ops.keys()
    assert len(list(cache.glob("database-*.pickle"))) == 2  # unchanged since: read, not built again


def test_the_program_layer_is_kept_under_its_database_and_its_own_file(tmp_path, db, monkeypatch):
    """The program layer's key is the database's (remembered from its read: no second status of every spec file)
    and the status of program.yaml: an edit of either is read again, nothing else is."""
    import shutil

    from ptospec.program.spec import FILE, program_spec

    specs = tmp_path / "specs"
    shutil.copytree(db.root, specs)
    cache = tmp_path / "cache"
    monkeypatch.setenv(dbcache.ENV_DIR, str(cache))

    def programs() -> int:
        program_spec(dbcache.load_database_cached(specs))
        return len(list(cache.glob("program-*.pickle")))

    assert programs() == 1 and programs() == 1
    (specs / FILE).write_text((specs / FILE).read_text() + "\n# an edit\n")
    assert programs() == 2
    op_file = specs / "ops" / "tadd.yaml"
    op_file.write_text(op_file.read_text() + "\n# an edit\n")
    assert programs() == 3 and programs() == 3


def test_equal_strings_and_tuples_of_strings_are_written_once():
    """What the file keeps: equal strings (and tuples of strings) as one object each, values and types as they
    were."""
    from ptospec.model import Family

    a, b = "".join(["f", "32"]), "".join(["f3", "2"])
    assert a is not b
    value = {"x": [a, (a, b)], "y": (b, a), "flags": (True, 1, 1.0), "family": Family(b, {"en": a}, {"en": b})}
    out = dbcache.share_equal(value)
    assert out is value and out == {"x": ["f32", ("f32", "f32")], "y": ("f32", "f32"), "flags": (True, 1, 1.0),
                                    "family": Family("f32", {"en": "f32"}, {"en": "f32"})}
    assert out["x"][0] is out["y"][0] is out["family"].name is out["family"].title["en"]
    assert out["x"][1] is out["y"] and [type(v) for v in out["flags"]] == [bool, int, float]


def test_an_op_is_read_from_the_file_when_it_is_looked_up(tmp_path, db):
    """The file keeps one pickle per op (``lazyops``): a read database reads only the ops asked for, finds an
    op by its assembly mnemonic without reading the others, and is equal to the database it was built from."""
    from ptospec.lazyops import OpsOnDisk

    first = dbcache.load_database_cached(db.root, tmp_path)
    second = dbcache.load_database_cached(db.root, tmp_path)
    ops = second.ops
    assert isinstance(ops, OpsOnDisk) and not ops._read
    assert "tadd" in ops and "nosuch" not in ops and len(ops) == len(first.ops) and list(ops) == list(first.ops)
    assert second.op("TADD") == first.ops["tadd"] and second.op("tadd") is ops["tadd"]
    assert second.by_mnemonic("tgemv.acc") == first.by_mnemonic("tgemv.acc") == first.ops["tgemv_acc"]
    assert second.by_mnemonic("tgemv_acc") is None is first.by_mnemonic("tgemv_acc")
    assert sorted(ops._read) == ["tadd", "tgemv_acc"]
    assert dict(ops.items()) == first.ops and second == first and len(ops._read) == len(first.ops)
    assert pickle.loads(pickle.dumps(second)) == first
