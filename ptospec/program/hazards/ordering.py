"""What the synchronisation instructions order, as a run meets them: a vector clock per pipe (per core), advanced
by each instruction's ``orders`` in specs/program.yaml (flags, barriers, buffer tokens), and the protocol errors
a run shows (a set never waited for, a wait never satisfied, an event id set again while in flight).

The scalar unit issues every instruction to its pipe in program order; a pipe runs its own instructions in that
order.  A pipe held by a wait whose set comes later in program order keeps its later work queued until the set
runs (``later``), so a late set orders exactly what follows the wait."""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Callable

from ...model import Pipes
from ..errors import SourcePos
from ..spec import Orders
from ..values import UNKNOWN
from .clocks import Clock, PipeKey
from .findings import Protocol

ALL = "PIPE_ALL"
_EVENT = re.compile(r"^EVENT_ID([0-9]+)$")


def event_number(value) -> int | None:
    """EVENT_ID3 or 3 -> 3; anything else (unknown at this point) -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    m = _EVENT.match(str(value))
    return int(m.group(1)) if m else None


class Resolver:
    """Turns the operand values of a synchronisation instruction into pipe enumerators and units."""

    def __init__(self, pipes: Pipes, classes: dict[str, str]):
        self.pipes, self.classes = pipes, classes

    def enumerator(self, orders: Orders, field: str, values: dict) -> str | None:
        name = getattr(orders, field)
        value = values.get(name, name) if name else None
        if value is None or value is UNKNOWN:
            return None
        value = str(value)
        if orders.via == "classes":
            return self.classes.get(value)
        return value

    def unit(self, enumerator: str) -> str:
        unit = self.pipes.by_enumerator(enumerator)
        return unit.name if unit is not None else enumerator

    def enum_of(self, unit: str) -> str:
        u = self.pipes.units.get(unit)
        return u.enumerator if u is not None else unit


class Ordering:
    """The happens-before relation of one run between the pipes of its cores."""

    def __init__(self, pipes: Pipes, classes: dict[str, str], profile: str, cross_core: bool = False):
        self.resolve = Resolver(pipes, classes)
        self.cross_core = cross_core  # pair cross-core signals and waits (the cores are both in view)
        self.ordered_units = {u.name for u in pipes.units.values() if profile in u.ordered_within}
        self.clocks: dict[PipeKey, Clock] = {}
        self.floor: dict[int, Clock] = defaultdict(Clock)  # per core: what a PIPE_ALL barrier made everyone see
        self.barrier_tick: dict[PipeKey, int] = {}
        self.flags: dict[tuple, deque] = defaultdict(deque)  # (core, src, dst, event) -> [(clock, pos)]
        self.tokens: dict[tuple, tuple] = {}  # (core, token) -> (clock of its release or None, holder, pos)
        self.blocked: dict[PipeKey, tuple] = {}  # pipe -> (flag key, pos of the wait)
        self.queued: dict[PipeKey, list[Callable[[Ordering], None]]] = defaultdict(list)
        self.protocol: list[Protocol] = []
        self.explicit = 0  # intra-core ordering instructions met
        self.cross = 0  # cross-core signals and waits met (their peer is another core)

    # -- clocks ---------------------------------------------------------------------------------------
    def clock(self, pipe: PipeKey) -> Clock:
        c = self.clocks.get(pipe)
        if c is None:
            c = self.clocks[pipe] = self.floor[pipe[0]].copy()
        return c

    def issue(self, pipe: PipeKey) -> int:
        """One more instruction runs on ``pipe``: its tick."""
        c = self.clock(pipe)
        c[pipe] = c.at(pipe) + 1
        return c[pipe]

    def ordered(self, a: PipeKey, tick: int, b: PipeKey, intra: bool) -> bool:
        """Whether the access at ``tick`` of pipe ``a`` is complete before pipe ``b``'s next instruction runs."""
        if a == b:
            return not intra or a[1] in self.ordered_units or tick <= self.barrier_tick.get(a, 0)
        return self.clock(b).at(a) >= tick

    def later(self, pipe: PipeKey, action: Callable[[Ordering], None]) -> None:
        """Run ``action(self)`` on ``pipe`` now, or after the wait that holds the pipe is satisfied."""
        if pipe in self.blocked:
            self.queued[pipe].append(action)
        else:
            action(self)

    def copy(self) -> Ordering:
        """An independent copy (a branch of the static check); queued actions take the ordering they run on."""
        o = Ordering.__new__(Ordering)
        o.__dict__.update(self.__dict__)
        o.clocks = {k: c.copy() for k, c in self.clocks.items()}
        o.floor = defaultdict(Clock, {k: c.copy() for k, c in self.floor.items()})
        o.barrier_tick = dict(self.barrier_tick)
        o.flags = defaultdict(deque, {k: deque(q) for k, q in self.flags.items()})
        o.tokens = dict(self.tokens)
        o.blocked = dict(self.blocked)
        o.queued = defaultdict(list, {k: list(q) for k, q in self.queued.items()})
        o.protocol = list(self.protocol)
        return o

    def merge(self, other: Ordering) -> None:
        """After two branches: only what both order stays ordered; a pipe's own count is the larger (fresh
        ticks stay fresh); flags and tokens in flight in either stay in flight."""
        for pipe in set(self.clocks) | set(other.clocks):
            a, b = self.clock(pipe), other.clock(pipe)
            merged = Clock({k: min(a.at(k), b.at(k)) for k in set(a) | set(b)})
            merged[pipe] = max(a.at(pipe), b.at(pipe))
            self.clocks[pipe] = merged
        for core in set(self.floor) | set(other.floor):
            a, b = self.floor[core], other.floor[core]
            self.floor[core] = Clock({k: min(a.at(k), b.at(k)) for k in set(a) | set(b)})
        for pipe in set(self.barrier_tick) | set(other.barrier_tick):
            self.barrier_tick[pipe] = min(self.barrier_tick.get(pipe, 0), other.barrier_tick.get(pipe, 0))
        for key, queue in other.flags.items():
            if len(queue) > len(self.flags[key]):
                self.flags[key] = deque(queue)
        for token, held in other.tokens.items():
            self.tokens.setdefault(token, held)
        for pipe, wait in other.blocked.items():
            if pipe not in self.blocked:
                self.blocked[pipe] = wait
                self.queued[pipe] = list(other.queued.get(pipe, []))
        seen = {(p.rule, p.pos) for p in self.protocol}
        self.protocol += [p for p in other.protocol if (p.rule, p.pos) not in seen]
        self.explicit = max(self.explicit, other.explicit)
        self.cross = max(self.cross, other.cross)

    # -- synchronisation ------------------------------------------------------------------------------
    def apply(self, core: int, name: str, orders: Orders, values: dict, pos: SourcePos | None) -> None:
        r = self.resolve
        kind = orders.kind
        if kind in ("cross_signal", "cross_wait"):
            self.cross += 1
            pipe = r.enumerator(orders, "pipe", values)
            flag = event_number(values.get(orders.event, orders.event))
            if not self.cross_core or pipe is None or flag is None:
                return  # its peer runs on another core, not in view
            key = ("cross", flag)
            own = (core, r.unit(pipe))
            if kind == "cross_signal":
                self.later(own, lambda o: o._signal(key, own, name, pos))
            else:
                self.later(own, lambda o: o._wait(key, own, name, pos))
            return
        self.explicit += 1
        if kind in ("signal", "wait"):
            src, dst = r.enumerator(orders, "src", values), r.enumerator(orders, "dst", values)
            event = event_number(values.get(orders.event, orders.event))
            if src is None or dst is None or event is None:
                return
            key = (core, src, dst, event)
            if kind == "signal":
                self.later((core, r.unit(src)), lambda o: o._signal(key, (core, r.unit(src)), name, pos))
            else:
                self.later((core, r.unit(dst)), lambda o: o._wait(key, (core, r.unit(dst)), name, pos))
        elif kind == "barrier":
            pipe = r.enumerator(orders, "pipe", values)
            if pipe == ALL:
                self._barrier_all(core, pos)
            elif pipe is not None:
                key = (core, r.unit(pipe))
                self.later(key, lambda o: o.barrier_tick.__setitem__(key, o.clock(key).at(key)))
        elif kind in ("acquire", "release"):
            pipe = r.enumerator(orders, "pipe", values)
            token = event_number(values.get(orders.event, orders.event))
            if pipe is None or token is None:
                return
            key = (core, r.unit(pipe))
            act = Ordering._acquire if kind == "acquire" else Ordering._release
            self.later(key, lambda o: act(o, (core, token), key, name, pos))

    def _signal(self, key: tuple, src: PipeKey, name: str, pos) -> None:
        pending = self.flags[key]
        if pending:
            self.protocol.append(Protocol("hazard.event-in-flight", pos, f"{name} sets {_flag(key)} again while "
                                          f"the set at {pending[-1][1]} is not yet waited for (one flag per event "
                                          "id: the second set is lost or the wait passes early)"))
        pending.append((self.clock(src).copy(), pos))
        for pipe, (wanted, _wpos) in list(self.blocked.items()):
            if wanted == key and self.flags[key]:
                self.clock(pipe).join(self.flags[key].popleft()[0])
                self._unblock(pipe)

    def _wait(self, key: tuple, dst: PipeKey, name: str, pos) -> None:
        pending = self.flags[key]
        if pending:
            self.clock(dst).join(pending.popleft()[0])
        else:
            self.blocked[dst] = (key, pos)  # the set may come later in program order: the pipe waits for it

    def _unblock(self, pipe: PipeKey) -> None:
        self.blocked.pop(pipe, None)
        queue, self.queued[pipe] = self.queued[pipe], []
        for k, action in enumerate(queue):
            if pipe in self.blocked:  # blocked again by a queued wait: the rest waits too
                self.queued[pipe].extend(queue[k:])
                return
            action(self)

    def _barrier_all(self, core: int, pos) -> None:
        for pipe, (key, wpos) in list(self.blocked.items()):
            if pipe[0] != core:
                continue
            self.protocol.append(Protocol("hazard.barrier-deadlock", pos, f"pto.barrier <PIPE_ALL> waits for "
                                          f"{pipe[1]}, which waits at {wpos} for {_flag(key)}, set only after the "
                                          "barrier in program order: the core hangs"))
            self._unblock(pipe)
        joined = self.floor[core].copy()
        for pipe, c in self.clocks.items():
            if pipe[0] == core:
                joined.join(c)
        self.floor[core] = joined
        for pipe in [p for p in self.clocks if p[0] == core]:
            self.clocks[pipe] = joined.copy()
            self.barrier_tick[pipe] = joined.at(pipe)

    def _acquire(self, token: tuple, pipe: PipeKey, name: str, pos) -> None:
        held = self.tokens.get(token)
        if held is not None and held[1] is not None and held[1] != pipe:
            self.blocked[pipe] = (("token", *token), pos)  # held by another pipe: wait for its release
            return
        if held is not None and held[0] is not None:
            self.clock(pipe).join(held[0])
        self.tokens[token] = (None, pipe, pos)

    def _release(self, token: tuple, pipe: PipeKey, name: str, pos) -> None:
        held = self.tokens.get(token)
        if held is None or held[1] != pipe:
            self.protocol.append(Protocol("hazard.token-not-held", pos, f"{name} releases buffer token {token[1]} "
                                          f"for {pipe[1]}, which does not hold it"))
        self.tokens[token] = (self.clock(pipe).copy(), None, pos)
        for waiting, (wanted, wpos) in list(self.blocked.items()):
            if wanted == ("token", *token):
                self.clock(waiting).join(self.tokens[token][0])
                self.tokens[token] = (None, waiting, wpos)
                self._unblock(waiting)
                break

    # -- the end of the run ---------------------------------------------------------------------------
    def finish(self) -> list[Protocol]:
        out = list(self.protocol)
        held = {pipe for pipe in self.blocked}
        for pipe, (key, pos) in self.blocked.items():
            if key[0] not in ("token", "cross") and (key[0], self.resolve.unit(key[1])) in held:
                continue  # its set is queued behind another hang: that one is the cause
            out.append(Protocol("hazard.unset-wait", pos, f"the wait for {_flag(key)} is never satisfied: no "
                                f"{'release' if key[0] == 'token' else 'set'} of it follows in program order that "
                                f"could run, so {pipe[1]} hangs"))
        for key, pending in self.flags.items():
            for _clock, pos in pending:
                out.append(Protocol("hazard.unwaited-set", pos, f"{_flag(key)} is set and never waited for: "
                                    "the flag stays set, and the next wait on it passes before its own set"))
        for token, (_clock, holder, pos) in self.tokens.items():
            if holder is not None:
                out.append(Protocol("hazard.token-not-released", pos, f"buffer token {token[1]} is taken by "
                                    f"{holder[1]} and never released"))
        return out


def _flag(key: tuple) -> str:
    if key[0] == "token":
        return f"buffer token {key[2]}"
    if key[0] == "cross":
        return f"cross-core flag {key[1]}"
    _core, src, dst, event = key
    return f"[{src}, {dst}, EVENT_ID{event}]"
