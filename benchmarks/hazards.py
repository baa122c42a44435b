"""Synchronisation hazards on the PTO assembler's kernels: findings as published, a mutation score, the slowdown.

    python benchmarks/hazards.py --ptoas-root PATH [--ptoas BIN] [--list] [--mutants N]

Kernels (nothing is copied from the checkout; mutants are made in memory):
- published: every ``.pto`` under ``test/`` and ``docs/`` of a PTOAS checkout whose text carries explicit
  intra-core synchronisation (a flag, event, barrier or buffer token outside comments) and that
  ``check-program`` reads without violation;
- with ``--ptoas BIN`` (a build of the assembler), also the kernels ptospec runs that carry no synchronisation,
  with the synchronisation the assembler inserts (``--enable-insert-sync``; its debug print of the pass's
  result) put back into the kernel between the same instructions.

For each kernel: the static check, and, where it runs on random inputs (as ``benchmarks/programs.py``), the
run with ``--hazards``.  Mutants: each synchronisation statement removed, and moved by one instruction (a
wait, barrier or token acquisition after the next instruction, a set or release before the previous one).
A mutant's ground truth comes from an oracle independent of the detector's clocks and shadow memory: the run's
explicit happens-before graph (each pipe's events in order, each set to the wait it satisfies, barriers) and
every pair of conflicting accesses of the run, compared pairwise; a "real race" is a conflicting pair on two
pipes that no path of the graph orders, a "hang" a wait the graph can never satisfy (what the graph puts after
it never runs, so it races with nothing).  Slowdown: the run with
``--hazards`` over the run without, per runnable kernel (best of three).

Figures (PTOAS a56b18c3, --ptoas from that commit, 2-core machine shared with other jobs): see docs/hazards.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from programs import _inputs

from ptospec.errors import PtospecError
from ptospec.loader import load_database
from ptospec.program.api import check_program, run_program
from ptospec.program.hazards.dynamic import HazardDetector, memory_of
from ptospec.program.hazards.ordering import ALL, Resolver, event_number
from ptospec.program.hazards.static import check_hazards
from ptospec.program.spec import program_spec
from ptospec.program.syntax import parse_program
from ptospec.program.trace import Tee, footprint
from ptospec.storage import valid_bytes
from ptospec.tile import GlobalDesc, TileDesc

_COMMENT = re.compile(r"//.*$", re.M)
_STATEMENT = re.compile(r"^\s*(?:%[\w#:, %]+=\s*)?(pto\.[\w.]+|scf\.\w+|func\.\w+|arith\.\w+)")


# -- the oracle: the run's happens-before graph, every conflicting pair ------------------------------------
@dataclass
class _Node:
    pipe: tuple
    kind: str  # access | signal | wait | barrier | acquire | release | all
    key: tuple = ()


@dataclass
class Oracle:
    """A ``walker.Tracer`` that records the run as a graph; ``races()`` and ``hangs()`` after it."""

    db: object
    profile: str
    nodes: list = field(default_factory=list)
    accesses: list = field(default_factory=list)  # (node, memory id, lo, hi, indices, writes, atomic, pos, stmt)
    core: int = 0

    def __post_init__(self):
        spec = program_spec(self.db)
        self.spec = spec
        self.resolve = Resolver(self.db.isa.pipes, spec.classes)
        self.last_all: dict[int, int] = {}

    def begin(self, buffers) -> None: ...

    def alloc(self, op, tile) -> None: ...

    def block(self, index: int) -> None:
        self.core = index

    def _node(self, pipe, kind, key=()) -> int:
        self.nodes.append(_Node(pipe, kind, key))
        return len(self.nodes) - 1

    def synchronisation(self, op, name="", values=None) -> None:
        instr = self.spec.instructions.get(name)
        o = instr.orders if instr is not None else None
        if o is None or o.kind.startswith("cross"):
            return
        values = values or {}
        r = self.resolve
        if o.kind in ("signal", "wait"):
            src, dst = r.enumerator(o, "src", values), r.enumerator(o, "dst", values)
            ev = event_number(values.get(o.event, o.event))
            key = (self.core, src, dst, ev)
            pipe = (self.core, r.unit(src if o.kind == "signal" else dst))
            self._node(pipe, o.kind, key)
        elif o.kind == "barrier":
            p = r.enumerator(o, "pipe", values)
            if p == ALL:
                self.last_all[self.core] = self._node((self.core, "ALL"), "all")
            else:
                self._node((self.core, r.unit(p)), "barrier")
        else:
            p = r.enumerator(o, "pipe", values)
            token = event_number(values.get(o.event, o.event))
            self._node((self.core, r.unit(p)), o.kind, (self.core, "token", token))

    def instruction(self, ex) -> None:
        mode = self.db.op(ex.name).mode(ex.mode)
        locs = {n: d.loc for n, d in ex.operands.items() if isinstance(d, TileDesc)}
        unit = mode.pipe.unit(self.profile, locs)
        node = self._node((self.core, unit), "access")
        atomic = any(s.combine == "add" for s in mode.semantics)
        for o in mode.operands:
            if o.role not in ("in", "out", "tmp"):
                continue
            writes = o.role == "tmp" or o.name in ex.outputs
            if o.name in ex.buffers:
                idx = footprint(ex.operands[o.name]) if isinstance(ex.operands[o.name], GlobalDesc) else None
                mem = ("g", id(ex.buffers[o.name]))
            elif o.name in ex.tiles:
                tile = ex.tiles[o.name]
                while tile.window is not None:
                    tile = tile.window[0]
                root, off = memory_of(tile.storage)
                d = ex.operands[o.name]
                idx = np.flatnonzero(valid_bytes(self.db.isa, d)) + off
                mem = ("t", id(root))
                self.__dict__.setdefault("_keep", []).append(root)
            else:
                continue
            if idx is None or not idx.size:
                continue
            self.accesses.append((node, mem, int(idx.min()), int(idx.max()), idx, writes,
                                  atomic and o.is_global, ex.op.pos, ex.op.name))

    def _graph(self):
        n = len(self.nodes)
        preds: list[list[int]] = [[] for _ in range(n)]
        last: dict = {}
        last_all: dict[int, int] = {}
        signals: dict = defaultdict(deque)
        waits: dict = defaultdict(deque)
        tokens: dict = {}
        for i, nd in enumerate(self.nodes):
            core = nd.pipe[0]
            if nd.kind == "all":  # everything issued before on this core, then everything after
                for pipe, j in last.items():
                    if pipe[0] == core:
                        preds[i].append(j)
                last_all[core] = i
                continue
            if nd.pipe in last:
                preds[i].append(last[nd.pipe])
            if core in last_all and (nd.pipe not in last or last[nd.pipe] < last_all[core]):
                preds[i].append(last_all[core])
            last[nd.pipe] = i
            if nd.kind == "signal":
                signals[nd.key].append(i)
            elif nd.kind == "wait":
                waits[nd.key].append(i)
            elif nd.kind == "release":
                tokens[nd.key] = i
            elif nd.kind == "acquire" and nd.key in tokens:
                preds[i].append(tokens[nd.key])
        never: list[int] = []  # waits no signal satisfies
        for key, ws in waits.items():
            ss = signals.get(key, deque())
            for k, w in enumerate(ws):
                if k < len(ss):
                    preds[w].append(ss[k])
                else:
                    never.append(w)
        return preds, never

    def analyse(self) -> tuple[int, int]:
        """(unordered conflicting statement pairs on two pipes, waits that never pass).

        A hang stops its pipe: what follows a wait that never passes (or a cycle of waits) in the graph never
        runs, so its accesses race with nothing."""
        preds, never = self._graph()
        n = len(self.nodes)
        succ: list[list[int]] = [[] for _ in range(n)]
        indeg = [0] * n
        for i, ps in enumerate(preds):
            for p in ps:
                succ[p].append(i)
                indeg[i] += 1
        anc = [0] * n
        runs = [False] * n
        stuck = set(never)
        queue = deque(i for i in range(n) if indeg[i] == 0)
        done = 0
        while queue:
            i = queue.popleft()
            done += 1
            bits = 0
            for p in preds[i]:
                bits |= anc[p] | (1 << p)
            anc[i] = bits
            runs[i] = i not in stuck and all(runs[p] for p in preds[i])
            for s in succ[i]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    queue.append(s)
        hangs = len(never) + (n - done)  # a cycle: a pipe waits for itself
        by_mem = defaultdict(list)
        for a in self.accesses:
            if runs[a[0]]:
                by_mem[a[1]].append(a)
        pairs = set()
        for accs in by_mem.values():
            lo = np.array([a[2] for a in accs])
            hi = np.array([a[3] for a in accs])
            for k, a in enumerate(accs):
                if not a[5]:
                    continue
                cand = np.flatnonzero((lo <= a[3]) & (hi >= a[2]))
                for j in cand:
                    b = accs[j]
                    if j == k or b[0] == a[0] or self.nodes[a[0]].pipe == self.nodes[b[0]].pipe:
                        continue
                    if a[6] and b[6] and a[5] and b[5]:
                        continue  # atomic updates
                    if (anc[b[0]] >> a[0]) & 1 or (anc[a[0]] >> b[0]) & 1:
                        continue
                    if not np.intersect1d(a[4], b[4]).size:
                        continue
                    first, second = sorted((a, b), key=lambda x: x[0])
                    pairs.add((str(first[7]), str(second[7])))
        return len(pairs), hangs


# -- kernels --------------------------------------------------------------------------------------------------
def _sync_names(db) -> set[str]:
    return {f"pto.{n}" for n, i in program_spec(db).instructions.items() if i.orders is not None
            and not i.orders.kind.startswith("cross")}


def published(db, root: Path) -> list[tuple[str, str]]:
    names = _sync_names(db)
    found = []
    for path in sorted(p for sub in ("test", "docs") for p in (root / sub).rglob("*.pto")):
        text = path.read_text(errors="replace")
        if any(m.group(1) in names for m in map(_STATEMENT.match, _COMMENT.sub("", text).splitlines()) if m):
            found.append((str(path.relative_to(root)), text))
    return found


def assembler_synchronised(db, root: Path, ptoas: str, names: set[str]) -> list[tuple[str, str]]:
    """Kernels without synchronisation, with the synchronisation ``ptoas --enable-insert-sync`` inserts."""
    out = []
    for path in sorted(p for sub in ("test", "docs") for p in (root / sub).rglob("*.pto")):
        text = path.read_text(errors="replace")
        lines = _COMMENT.sub("", text).splitlines()
        if any(m.group(1) in names for m in map(_STATEMENT.match, lines) if m):
            continue
        if sum(1 for ln in lines if ln.strip().startswith("func.func")) != 1:
            continue
        try:
            program = parse_program(text, str(path))
            result = check_program(db, program)
        except PtospecError:
            continue
        if result.violations or result.stats.unknown or result.stats.instructions < 2:
            continue
        arch = "a5" if result.profile == "a5" else "a3"
        try:
            done = subprocess.run([ptoas, str(path), "--enable-insert-sync", "--pto-insert-sync-debug=1",
                                   f"--pto-arch={arch}", "-o", "/dev/null"], capture_output=True, text=True,
                                  timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            continue
        merged = _transplant(db, text, done.stdout + done.stderr, names)
        if merged is not None:
            out.append((str(path.relative_to(root)) + " +ptoas-sync", merged))
    return out


def _anchor(db, line: str, names: set[str]) -> str | None:
    s = line.strip()
    if s == "}" or s.startswith("} else"):
        return s[:6]
    m = _STATEMENT.match(line)
    if m is None:
        return None
    name = m.group(1)
    if name in ("scf.for", "scf.if", "scf.while"):
        return name
    if name.startswith("pto.") and name not in names and db.by_mnemonic(name[4:].split(".")[0]) is not None:
        return name
    return None


def _transplant(db, text: str, log: str, names: set[str]) -> str | None:
    start, end = log.find("// === [PTOInsertSync] Final Result"), log.find("// === [PTOInsertSync] End")
    if start < 0 or end < 0:
        return None
    after: dict[int, list[str]] = defaultdict(list)
    anchors: list[str] = []
    for line in log[start:end].splitlines()[1:]:
        m = _STATEMENT.match(line)
        if m and m.group(1) in names:
            if "%" in line:
                return None  # an event id held in a value: not moved between programs
            after[len(anchors)].append(line.strip())
        elif (a := _anchor(db, line, names)) is not None:
            anchors.append(a)
    lines = text.splitlines()
    mine = [(k, a) for k, ln in enumerate(lines) if (a := _anchor(db, ln, names)) is not None]
    if [a for _, a in mine[:len(anchors)]] != anchors or any(a != "}" for _, a in mine[len(anchors):]):
        return None
    if not any(after.values()):
        return None
    out = []
    first = mine[0][0] if mine else len(lines)
    for k, ln in enumerate(lines):
        if k == first:
            out += [_indent(lines[first]) + s for s in after.get(0, [])]
        out.append(ln)
        for n, (at, _a) in enumerate(mine):
            if at == k:
                out += [_indent(ln) + s for s in after.get(n + 1, [])]
    return "\n".join(out) + "\n"


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


# -- mutants --------------------------------------------------------------------------------------------------
def mutants(db, text: str, names: set[str]) -> list[tuple[str, str]]:
    lines = text.splitlines()
    syncs = [k for k, ln in enumerate(lines) if (m := _STATEMENT.match(ln)) and m.group(1) in names]
    out = []
    for k in syncs:
        name = _STATEMENT.match(lines[k]).group(1)
        out.append((f"remove line {k + 1} ({name})", "\n".join(lines[:k] + lines[k + 1:]) + "\n"))
        down = not any(w in name for w in ("set_flag", "record_event", "rls_buf"))
        j = _neighbour(db, lines, k, +1 if down else -1, names)
        if j is None:
            continue
        moved = lines[:k] + lines[k + 1:]
        moved.insert(j, lines[k])  # down: the instruction moved up by one with the removal, so after it
        out.append((f"move line {k + 1} ({name}) {'after the next' if down else 'before the previous'} "
                    "instruction", "\n".join(moved) + "\n"))
    return out


def _neighbour(db, lines: list[str], k: int, step: int, names: set[str]) -> int | None:
    """The index of the next (previous) database instruction in the same block, or None."""
    indent = len(_indent(lines[k]))
    j = k + step
    while 0 <= j < len(lines):
        ln = lines[j]
        if ln.strip() and len(_indent(ln)) < indent:
            return None
        a = _anchor(db, ln, names)
        if a is not None and len(_indent(ln)) == indent and a.startswith("pto."):
            return j
        if a is not None and len(_indent(ln)) == indent:
            return None  # a loop or branch first
        j += step
    return None


# -- running --------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    runnable: bool
    dynamic: int = 0  # races the detector reports
    dyn_protocol: int = 0
    static: int = 0
    static_may: int = 0
    st_protocol: int = 0
    real: int = 0  # oracle: unordered conflicting pairs
    hangs: int = 0
    seconds: float = 0.0
    why: str = ""


def examine(db, text: str, name: str, rng) -> Outcome:
    program = parse_program(text, name)
    try:
        result = check_program(db, program)
        st = check_hazards(db, program)
    except PtospecError as exc:
        return Outcome(False, why=exc.rule or "error")
    out = Outcome(False, static=len(st.hazards), static_may=sum(h.may for h in st.hazards),
                  st_protocol=len(st.protocol))
    if result.violations or result.stats.unknown:
        out.why = "not clean" if result.violations else "instruction not in the database"
        return out
    inputs, reason = _inputs(db, program, result.profile, result.extents, rng)
    if inputs is None:
        out.why = reason
        return out
    detector, oracle = HazardDetector(db, result.profile), Oracle(db, result.profile)
    try:
        t0 = time.perf_counter()
        run_program(db, program, inputs, result.profile, tracer=Tee(detector, oracle))
        out.seconds = time.perf_counter() - t0
    except PtospecError as exc:
        out.why = exc.rule or "error"
        return out
    rep = detector.report()
    out.runnable, out.dynamic, out.dyn_protocol = True, len(rep.hazards), len(rep.protocol)
    out.real, out.hangs = oracle.analyse()
    return out


def slowdown(db, text: str, name: str, rng) -> float | None:
    program = parse_program(text, name)
    result = check_program(db, program)
    inputs, _ = _inputs(db, program, result.profile, result.extents, rng)
    if inputs is None:
        return None
    plain, watched = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        run_program(db, program, inputs, result.profile)
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run_program(db, program, inputs, result.profile, tracer=HazardDetector(db, result.profile))
        watched.append(time.perf_counter() - t0)
    return min(watched) / min(plain)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptoas-root", required=True, help="checkout of hw-native-sys/PTOAS")
    ap.add_argument("--ptoas", default=None, help="a build of the assembler: also its inserted synchronisation")
    ap.add_argument("--list", action="store_true", help="print every kernel and mutant")
    ap.add_argument("--mutants", type=int, default=0, help="at most this many mutants per kernel (0: all)")
    args = ap.parse_args()
    root = Path(args.ptoas_root)
    db = load_database(None)
    names = _sync_names(db)
    kernels = published(db, root)
    print(f"published kernels with explicit synchronisation: {len(kernels)}")
    if args.ptoas:
        extra = assembler_synchronised(db, root, args.ptoas, names)
        print(f"kernels with the assembler's inserted synchronisation (--enable-insert-sync): {len(extra)}")
        kernels += extra
    rng = np.random.default_rng(0)
    totals = defaultdict(int)
    slow = []
    for name, text in kernels:
        base = examine(db, text, name, rng)
        run = "ran" if base.runnable else f"not run ({base.why})"
        print(f"  {name}: {run}; run: {base.dynamic} race(s) {base.dyn_protocol} protocol, oracle "
              f"{base.real} race(s) {base.hangs} hang(s); static: {base.static} race(s) ({base.static_may} may) "
              f"{base.st_protocol} protocol")
        totals["kernels"] += 1
        totals["kernels run"] += base.runnable
        totals["findings as published (run)"] += base.dynamic + base.dyn_protocol
        totals["findings as published (static)"] += base.static + base.st_protocol
        if base.runnable:
            ratio = slowdown(db, text, name, rng)
            if ratio is not None:
                slow.append((ratio, name))
        muts = mutants(db, text, names)
        if args.mutants:
            muts = muts[:args.mutants]
        for what, mtext in muts:
            m = examine(db, mtext, name, rng)
            totals["mutants"] += 1
            if not m.runnable:
                totals["mutants not run"] += 1
                if m.static or m.st_protocol:
                    totals["mutants not run, static finds something"] += 1
                continue
            totals["mutants run"] += 1
            if m.real:
                totals["real races"] += 1
                totals["real races found by the run"] += m.dynamic > 0
                totals["real races found statically"] += m.static > 0
            else:
                totals["race-free mutants"] += 1
                totals["race-free mutants with a run finding (false positive)"] += m.dynamic > 0
                totals["race-free mutants with a static race finding"] += m.static > 0
            if m.hangs:
                totals["hanging mutants"] += 1
                totals["hangs found by the run"] += m.dyn_protocol > 0
                totals["hangs found statically"] += m.st_protocol > 0
            if args.list:
                print(f"    {what}: oracle {m.real} race(s) {m.hangs} hang(s); run {m.dynamic}+{m.dyn_protocol}; "
                      f"static {m.static}+{m.st_protocol}")
    print("totals:")
    for k, v in totals.items():
        print(f"  {k}: {v}")
    if slow:
        ratios = sorted(r for r, _ in slow)
        worst = max(slow)
        print(f"slowdown with --hazards: median x{statistics.median(ratios):.2f}, worst x{worst[0]:.2f} "
              f"({worst[1]}), over {len(ratios)} runnable kernel(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
