"""Fourth hardening pass (issue 29's closing red-team pass): defects found by a fresh scripted pass over every
command, spec files, kernels, arrays and signals.  One regression test (or a few) per defect."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


# ------------------------------------------------------------------ Ctrl-C while a pool is created


def test_a_ctrl_c_while_workers_are_forked_stops_them_all():
    """A Ctrl-C between two forks of a pool's creation once left forked workers that nobody stopped (the
    terminal hung on them) or a worker that died with a traceback before it could ignore the interrupt."""
    done = _python("""
        import multiprocessing, os, signal
        from multiprocessing import popen_fork
        from ptospec.workers import fork_pool

        launch = popen_fork.Popen._launch
        forks = []
        def interrupted_launch(self, process_obj):
            forks.append(1)
            if len(forks) == 2:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C between the first fork and the second
            return launch(self, process_obj)
        popen_fork.Popen._launch = interrupted_launch
        try:
            fork_pool(3)
        except KeyboardInterrupt:
            print("interrupted", len(forks), multiprocessing.active_children())
        popen_fork.Popen._launch = launch
        with fork_pool(2) as pool:  # workers ignore SIGINT, and none has it blocked
            print(pool.apply(signal.getsignal, (signal.SIGINT,)) == signal.SIG_IGN,
                  signal.SIGINT in pool.apply(signal.pthread_sigmask, (signal.SIG_BLOCK, [])))
        print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["interrupted 3 []", "True False", "False"]
    assert "Traceback" not in done.stderr


def test_a_ctrl_c_while_the_command_modules_load_is_one_line():
    """An interrupt while a module loads (NumPy's extension reports it as an ImportError caused by the
    KeyboardInterrupt) is 'interrupted', exit 130, not an internal error or a traceback."""
    for raised in ("KeyboardInterrupt()", "ImportError('numpy failed') from KeyboardInterrupt()"):
        done = _python(f"""
            import sys
            class Interrupt:
                def find_spec(self, name, path=None, target=None):
                    if name == "ptospec.commands.listing":
                        raise {raised}
            sys.meta_path.insert(0, Interrupt())
            from ptospec.cli import main
            sys.exit(main(["list"]))
        """)
        assert (done.returncode, done.stderr) == (130, "ptospec: interrupted\n"), raised


def test_an_internal_error_is_one_line(monkeypatch, capsys):
    from ptospec import cli

    def broken(args):
        raise ValueError("a message\nof several\nlines")

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda *command: _with_func(parser(*command), broken))
    assert cli.main(["list"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ValueError: a message of several lines (at" in err
    assert not cli.by_interrupt(ValueError("x"))


def _with_func(parser, func):
    parser.set_defaults(func=func)
    for action in parser._subparsers._group_actions:
        for sub in action.choices.values():
            sub.set_defaults(func=func)
    return parser


# ------------------------------------------------------------------ .npz inputs


def _npz(path: Path, members: dict[str, bytes], compression: int = 0) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_an_npz_member_that_is_not_an_array_is_refused_by_name(tmp_path):
    """np.load hands such a member over as bytes: it used to reach the run as 'give it an array, not a number'."""
    import io

    import numpy as np
    import pytest

    from ptospec.commands._arrays import load_arrays
    from ptospec.errors import InvocationError

    array = io.BytesIO()
    np.save(array, np.ones((16, 16), np.float32))
    path = _npz(tmp_path / "in.npz", {"src0.npy": b"not an array", "src1.npy": array.getvalue()})
    with pytest.raises(InvocationError, match=r"member 'src0' is not a NumPy array") as caught:
        load_arrays(str(path), "--inputs")
    assert caught.value.rule == "run.input"


def test_a_corrupt_compressed_npz_member_is_one_line(tmp_path):
    import io
    import zipfile

    import numpy as np
    import pytest

    from ptospec.commands._arrays import load_arrays
    from ptospec.errors import InvocationError

    array = io.BytesIO()
    np.save(array, np.arange(4096, dtype=np.float32))
    path = _npz(tmp_path / "in.npz", {"src.npy": array.getvalue()}, zipfile.ZIP_DEFLATED)
    data = bytearray(path.read_bytes())
    start = data.index(b"src.npy") + len(b"src.npy")  # the first member's compressed bytes follow its name
    for k in range(start + 8, start + 40):
        data[k] ^= 0x5A
    path.write_bytes(bytes(data))
    with pytest.raises(InvocationError, match=r"cannot read .*in\.npz") as caught:
        load_arrays(str(path), "--inputs")
    assert caught.value.rule == "run.input"


# ------------------------------------------------------------------ reports: atomic, never through a planted link


def _shard(folder: Path, secret: Path) -> Path:
    import json

    (folder / "repros").mkdir(parents=True)
    (folder / "report.json").write_text(json.dumps({"backend": "reference", "totals": {"total": 1, "passed": 1},
                                                    "divergences": []}))
    (folder / "repros" / "tadd.cpp").write_text("// a reproducer\n")
    (folder / "repros" / "leak.cpp").symlink_to(secret)  # a link in a shard's folder is not copied
    return folder


def test_merge_reports_copies_no_link_and_writes_through_none(tmp_path):
    import pytest

    from ptospec.conformance.merge import merge_reports
    from ptospec.outputs import OutputError

    secret = tmp_path / "secret"
    secret.write_text("private\n")
    shard = _shard(tmp_path / "shard1", secret)
    out = tmp_path / "merged"
    merge_reports([shard], out)
    assert (out / "repros" / "tadd.cpp").read_text() == "// a reproducer\n"
    assert not (out / "repros" / "leak.cpp").exists()
    assert "None." in (out / "report.md").read_text()
    (out / "report.md").unlink()
    (out / "report.md").symlink_to(secret)  # planted in a shared report folder
    with pytest.raises(OutputError, match="symbolic link") as caught:
        merge_reports([shard], out)
    assert caught.value.rule == "output.symlink" and secret.read_text() == "private\n"


def test_merge_reports_of_another_shape_is_one_line_and_writes_nothing(tmp_path, capsys):
    import json

    from ptospec.cli import main

    shapes = [{"backend": [], "totals": {}, "divergences": []}, {"backend": "x", "totals": [], "divergences": []},
              {"backend": "x", "totals": {}, "divergences": [1]}, {"totals": {}, "divergences": []},
              {"backend": "x", "totals": {}, "divergences": [{"category": "c", "op": "o", "mode": "m"}]},
              {"backend": "x", "totals": {}, "divergences": [], "environment": []}]
    for k, shape in enumerate(shapes):
        (tmp_path / f"r{k}.json").write_text(json.dumps(shape))
        assert main(["merge-reports", "--out", str(tmp_path / "out"), str(tmp_path / f"r{k}.json")]) == 2, shape
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "[merge.read]" in err, err
    assert not (tmp_path / "out").exists()


def test_a_linked_repros_folder_is_refused_before_anything_is_removed(tmp_path):
    import pytest

    from ptospec.outputs import OutputError, real_folder, replace_in

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.cpp").write_text("keep")
    (tmp_path / "report" / "repros").parent.mkdir()
    (tmp_path / "report" / "repros").symlink_to(elsewhere)
    with pytest.raises(OutputError):
        real_folder(tmp_path / "report" / "repros")
    with pytest.raises(OutputError):
        replace_in(tmp_path / "report", "repros/x.cpp", "x")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["mine.cpp"]


# ------------------------------------------------------------------ the PTOAS build cache runs build.ninja


def test_the_ptoas_build_cache_must_be_private(tmp_path, db, monkeypatch):
    """``ptoas build`` runs ninja in a cache folder: one that another user could write would run their
    build.ninja as you.  Refused like the cpusim cache, before anything runs; a ``~`` is the home folder."""
    import os

    import pytest

    from ptospec.backends.ptoas import build
    from ptospec.backends.ptoas.spec import load_ptoas_spec
    from ptospec.errors import InvocationError

    source = tmp_path / "ptoas"
    (source / "tools" / "ptoas").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text("")
    monkeypatch.setattr(build, "_run", lambda *a: pytest.fail("ran a command in an untrusted folder"))
    spec = load_ptoas_spec(db)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(InvocationError, match="can be written by other users") as caught:
        build.build_ptoas(spec, source, cache=shared)
    assert caught.value.rule == "ptoas.cache"
    planted = tmp_path / "planted"
    planted.mkdir()
    planted.chmod(0o775)
    with pytest.raises(InvocationError, match="can be written by other users"):
        build.build_ptoas(spec, source, build_dir=planted)
    monkeypatch.setenv("PTOSPEC_PTOAS_CACHE", "~/ptoas-cache")
    assert build.default_cache() == Path(os.path.expanduser("~/ptoas-cache"))


# ------------------------------------------------------------------ the lowered form's views


def test_a_negative_offset_or_stride_of_a_reinterpret_cast_is_named_where_it_is_written(db):
    """It used to surface at the instruction that read the view, as a syntax error of a descriptor the user
    never wrote ('strides must look like 32x1 ... strides=32x-100000')."""
    import numpy as np
    import pytest

    from ptospec.errors import PtospecError
    from ptospec.program.api import check_program, run_program
    from ptospec.program.syntax import parse_program

    text = (REPO / "tests" / "programs" / "memref_add.pto").read_text(encoding="utf-8")
    text = text.replace("offset: [%c0]", "offset: [%c1]").replace("%c1 = arith.constant 1 : index",
                                                                    "%c1 = arith.constant -7 : index")
    program = parse_program(text, "neg.pto")
    found = {v.rule for v in check_program(db, program).violations}
    assert {"memref.cast-offset", "memref.cast-extent"} <= found
    with pytest.raises(PtospecError) as caught:
        run_program(db, program, {n: np.ones(512, np.float32) for n in "xyz"})
    assert caught.value.rule in ("memref.cast-offset", "memref.cast-extent")
    assert "-7" in str(caught.value) and "neg.pto:" in caught.value.one_line()


# ------------------------------------------------------------------ spec files


def test_a_character_yaml_refuses_is_one_line_with_its_line(tmp_path, capsys):
    from ptospec.cli import main

    path = tmp_path / "tadd.yaml"
    path.write_bytes(b"name: tadd\nsummary: {en: \"a\x1fb\"}\n")
    assert main(["lint", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: [yaml.syntax] YAML syntax error: unacceptable character #x001f" in err
    assert "position" not in err and "<unicode string>" not in err



def test_merge_reports_reads_only_a_regular_report_of_sane_depth(tmp_path, capsys):
    """A pipe made merge-reports wait forever, /dev/zero read until memory ran out, a deeply nested report was
    an internal error."""
    import os

    from ptospec.cli import main

    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for name in ("pipe.json", "zero.json", "deep.json"):
        assert main(["merge-reports", "--out", str(tmp_path / "out"), str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "[merge.read]" in err, err


def test_an_input_that_is_a_pipe_is_named_as_one(tmp_path):
    import os

    import pytest

    from ptospec.commands._arrays import load_arrays
    from ptospec.errors import InvocationError

    os.mkfifo(tmp_path / "x.npy")
    with pytest.raises(InvocationError, match="not a regular file"):
        load_arrays(str(tmp_path / "x.npy"), "--input")
    with pytest.raises(InvocationError, match="no such file"):
        load_arrays(str(tmp_path / "missing.npy"), "--input")
