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
                    if name == "ptospec.commands.check":
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
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser(), broken))
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
