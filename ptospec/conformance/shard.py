"""``--shard K/N``: a deterministic share of a run for one of N machines.

Whole test files (one per instruction) are dealt out, so that one instruction's cases, and so its compile
units and divergence groups, stay on one machine and shard reports merge by concatenation: files in
decreasing order of their case count (then by name) each go to the shard with the fewest cases so far
(ties: the lowest index).  Every shard collecting the same files computes the same deal."""

from __future__ import annotations

import re

from ..errors import InvocationError

_SHARD = re.compile(r"^\s*([0-9]+)\s*/\s*([0-9]+)\s*$")


def parse_shard(text: str, where: str = "--shard") -> tuple[int, int]:
    """``K/N`` -> (K, N) with 1 <= K <= N."""
    m = _SHARD.match(text or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise InvocationError(f"expected K/N with 1 <= K <= N (e.g. 2/4), got {text!r}", rule="cli.shard",
                              where=where)
    return int(m.group(1)), int(m.group(2))


def deal(sizes: dict[str, int], shards: int) -> dict[str, int]:
    """File -> its shard (1-based), from each file's number of cases."""
    load = [0] * shards
    out: dict[str, int] = {}
    for name, size in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
        k = min(range(shards), key=lambda i: (load[i], i))
        out[name] = k + 1
        load[k] += size
    return out
