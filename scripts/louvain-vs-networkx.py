#!/usr/bin/env python3
"""Dev time only: compare kumo-gen's Louvain modularity with networkx.

For every domain file in DOMAINS_DIR, runs `kumo-gen graph --format json`
(default settings unless extra flags are given), rebuilds the weighted graph
in networkx from the JSON edges, and compares kumo-gen's Q with the best Q of
`networkx.algorithms.community.louvain_communities` over NX_SEEDS seeds. It
also recomputes Q of kumo-gen's own communities with networkx's `modularity`
(an independent check of the formula).

    pip install networkx      # dev time only; never needed by tests or runs
    cargo build --release
    python3 scripts/louvain-vs-networkx.py target/release/kumo-gen domains [NX_SEEDS] [-- kumo-gen flags]

Results recorded in scripts/louvain-vs-networkx.txt.
"""
import json
import os
import statistics
import subprocess
import sys

import networkx as nx
from networkx.algorithms.community import louvain_communities, modularity


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[: args.index("--")]
    binary, ddir = args[0], args[1]
    nx_seeds = int(args[2]) if len(args) > 2 else 10
    rows = []
    for f in sorted(os.listdir(ddir)):
        if not f.endswith(".yaml"):
            continue
        p = subprocess.run(
            [binary, "graph", "--domain", os.path.join(ddir, f), "--format", "json", *extra],
            capture_output=True, text=True)
        if p.returncode != 0:
            print("FAIL", f, p.stderr[:300])
            continue
        g = json.loads(p.stdout)
        G = nx.Graph()
        G.add_nodes_from(g["nodes"])
        for a, b, w in g["edges"]:
            G.add_edge(a, b, weight=w)
        if G.number_of_edges() == 0:
            continue
        ours_by_nx = modularity(G, [set(c) for c in g["communities"]], weight="weight")
        best = max(
            modularity(G, louvain_communities(G, weight="weight", seed=s), weight="weight")
            for s in range(nx_seeds))
        ratio = g["modularity"] / best if best > 1e-12 else 1.0
        rows.append((f, len(g["nodes"]), G.number_of_edges(), g["modularity"], ours_by_nx, best, ratio))
    for f, n, e, ours, ours_nx, best, ratio in rows:
        flag = "" if ratio >= 0.98 else "  <-- below 98%"
        print(f"{f:<28} n={n:>3} e={e:>4} ours={ours:.5f} nx(ours)={ours_nx:.5f} "
              f"nx_best={best:.5f} ratio={ratio:.4f}{flag}")
    ratios = [r[6] for r in rows]
    print(f"domains={len(rows)} nx_seeds={nx_seeds} ratio min={min(ratios):.4f} "
          f"median={statistics.median(ratios):.4f} max={max(ratios):.4f} "
          f"below_98%={sum(r < 0.98 for r in ratios)} "
          f"above_1={sum(r > 1 + 1e-9 for r in ratios)} below_1={sum(r < 1 - 1e-9 for r in ratios)}")
    print(f"max |Q ours - networkx modularity(our communities)| = "
          f"{max(abs(r[3] - r[4]) for r in rows):.3g}")


if __name__ == "__main__":
    main()
