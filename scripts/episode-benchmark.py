#!/usr/bin/env python3
"""Episodes by index from Python, as trainers use them (BENCHMARKS.md
"Episodes by index"): `kumo_gen.instance(domain, truths, actions,
index=i)` at a few indices (the first call of the process, then warm),
RANDOM episodes at random indices below TOP, and ENV episodes of one
`kumo_gen.Env` played to the end by the golden player's first reply (its
memory must stay flat). Prints one line per figure with the load average.

    python3 scripts/episode-benchmark.py [DOMAIN] [TRUTHS] [ACTIONS] [TOP] [RANDOM] [ENV]

Defaults: medical 12 16 1000000 2000 100000. The line index of the
setting is built on the first call past what the cache directory holds
(`KUMO_GEN_CACHE`, docs/performance.md): point it at a fresh directory
for cold figures.
"""

from __future__ import annotations

import os
import random
import resource
import sys
import time

import kumo_gen


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    args = sys.argv[1:]
    domain = args[0] if args else "medical"
    truths, actions = (int(args[1]), int(args[2])) if len(args) > 2 else (12, 16)
    top = int(args[3]) if len(args) > 3 else 1_000_000
    count = int(args[4]) if len(args) > 4 else 2000
    episodes = int(args[5]) if len(args) > 5 else 100_000
    d = kumo_gen.load_domain(domain)
    for index in (0, 1000, top - 1):
        started = time.perf_counter()
        kumo_gen.instance(d, truths, actions, index=index)
        first = time.perf_counter() - started
        started = time.perf_counter()
        kumo_gen.instance(d, truths, actions, index=index - 1 if index else 1)
        warm = time.perf_counter() - started
        print(f"index {index}: first call {first:.3f} s, a neighbour {warm * 1000:.2f} ms (load {load()})")
    rng = random.Random(7)
    started = time.perf_counter()
    for _ in range(count):
        kumo_gen.instance(d, truths, actions, index=rng.randrange(top))
    seconds = time.perf_counter() - started
    print(f"{count} random indices below {top}: {count / seconds:.0f} episodes/s, peak RSS {rss_mb():.0f} MB (load {load()})")
    env = kumo_gen.Env(d, truths, actions, n=episodes)
    started = time.perf_counter()
    for i in range(episodes):
        env.reset(i)
        first_action = env.instance(i)["optimal"]["first_action"]
        env.step(first_action)
        if (i + 1) % (episodes // 4) == 0:
            rate = (i + 1) / (time.perf_counter() - started)
            print(f"Env: {i + 1} episodes, {rate:.0f} episodes/s, peak RSS {rss_mb():.0f} MB (load {load()})")


if __name__ == "__main__":
    main()
