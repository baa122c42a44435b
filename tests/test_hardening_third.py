"""Third hardening pass (issue 29): nothing outside our files is touched, no foreign code is run, every bad
input ends in one line.  One regression test (or a few) per defect, numbered as in the issue."""

from __future__ import annotations

import os
import pickle
import stat
import sys
from pathlib import Path

import pytest

from ptospec import dbcache
from ptospec.backends.cpusim import cppgen
from ptospec.backends.cpusim.build import Builder, Stats
from ptospec.backends.cpusim.toolchain import Checkout, Compiler, ToolchainError
from ptospec.model import Database

DATA = Path(__file__).resolve().parent / "data" / "cpusim"


def _another_user(monkeypatch) -> None:
    """Files this process made now look like another user's (the tests run as one user, often root)."""
    monkeypatch.setattr(os, "getuid", lambda: os.stat(".").st_uid + 4242)


# ------------------------------------------------------------------ 2. the database cache


def test_2_the_database_cache_never_writes_into_a_directory_it_does_not_own(tmp_path, db, monkeypatch):
    cache = tmp_path / "shared"
    cache.mkdir(mode=0o700)
    _another_user(monkeypatch)
    assert isinstance(dbcache.load_database_cached(db.root, cache), Database)
    assert list(cache.iterdir()) == []  # nothing read from, nothing written into another user's directory


def test_2_the_database_cache_refuses_a_directory_others_may_write(tmp_path, db):
    cache = tmp_path / "open"
    cache.mkdir()
    cache.chmod(0o777)
    assert isinstance(dbcache.load_database_cached(db.root, cache), Database)
    assert list(cache.iterdir()) == []


def test_2_planted_links_in_the_database_cache_are_never_followed(tmp_path, db):
    cache = tmp_path / "cache"
    dbcache.load_database_cached(db.root, cache)
    (path,) = cache.glob("*.pickle")
    path.unlink()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    for name in (path.name, f"{path.name}.{os.getpid()}.tmp", f"{path.name}.tmp"):  # every name an attacker can guess
        (cache / name).unlink(missing_ok=True)
        (cache / name).symlink_to(victim)
    assert isinstance(dbcache.load_database_cached(db.root, cache), Database)
    assert victim.read_text() == "precious"
    assert not path.is_symlink() and isinstance(pickle.loads(path.read_bytes()), Database)


def test_16_the_database_cache_expands_a_tilde(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(dbcache.ENV_DIR, "~/x")
    assert dbcache.default_dir() == tmp_path / "x"


# ------------------------------------------------------------------ 3. the cpusim build cache


def _builder(tmp_path: Path, cache: Path | None = None) -> Builder:
    script = tmp_path / "fake-clang++"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {DATA / 'fake_clang.py'} \"$@\"\n")
    script.chmod(0o755)
    compiler = Compiler(str(script), 19, "clang version 19.1.7 (fake)")
    return Builder(compiler, Checkout(tmp_path / "checkout", "f" * 64), cache or tmp_path / "cache", Stats())


def _unit(db, tiles):
    from ptospec.conformance.backend import Invocation
    from ptospec.conformance.data import make_inputs

    parsed = tiles(dst="vec, 1x8xf32", src="vec, 4x8xf32")
    spec = db.op("tcolmin")
    data = make_inputs(db, spec, spec.mode("default"), parsed, seed=7, pattern="random")
    plan = cppgen.plan_variant(db, Invocation("tcolmin", "default", "cpu", parsed, data))
    return ["v0"], lambda names: cppgen.render_unit([plan], names)


def test_3_a_driver_others_could_have_written_is_rebuilt_not_run(tmp_path, db, tiles, monkeypatch):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_CLANG_LOG", str(log))
    names, render = _unit(db, tiles)
    built = _builder(tmp_path).build(names, render)
    assert built.binary is not None and not built.cached
    built.binary.write_text("#!/bin/sh\necho planted\n")
    built.binary.chmod(0o777)  # anyone may have replaced it
    log.write_text("")
    again = _builder(tmp_path).build(names, render)
    assert not again.cached and "full" in log.read_text()  # built afresh
    assert not again.binary.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert "planted" not in again.binary.read_text(errors="replace")


def test_3_an_entry_of_another_user_is_never_run(tmp_path, db, tiles, monkeypatch):
    monkeypatch.setenv("FAKE_CLANG_LOG", str(tmp_path / "calls.log"))
    names, render = _unit(db, tiles)
    first = _builder(tmp_path)
    first.build(names, render)
    _another_user(monkeypatch)  # the whole cache is now another user's
    with pytest.raises(ToolchainError) as info:
        _builder(tmp_path)
    assert info.value.rule == "cpusim.cache" and "another user" in str(info.value)


def test_3_a_cache_directory_others_may_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(ToolchainError) as info:
        _builder(tmp_path, shared)
    assert info.value.rule == "cpusim.cache" and "written by other users" in str(info.value)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    with pytest.raises(ToolchainError, match="symbolic link"):
        _builder(tmp_path, link)
