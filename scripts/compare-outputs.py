#!/usr/bin/env python3
"""Compares two kumo-gen output folders byte for byte (.ci/run: the release
archive's binary against the binary built from source, same command).

Every file must be in both with the same bytes, except `manifest.json`,
whose wall-clock `timings` (one run's, not the dataset's) are removed from
each dataset entry before the JSON values are compared. Exit 0 when equal,
1 with the first differences named otherwise.

    python3 scripts/compare-outputs.py OUT_A OUT_B
"""

import json
import sys
from pathlib import Path


def files(root: Path) -> set:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def manifest_without_timings(path: Path):
    manifest = json.loads(path.read_bytes())
    for entry in manifest.get("datasets", {}).values():
        entry.pop("timings", None)
    return manifest


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    a, b = Path(sys.argv[1]), Path(sys.argv[2])
    for root in (a, b):
        if not root.is_dir():
            print(f"{root}: not a folder", file=sys.stderr)
            return 2
    in_a, in_b = files(a), files(b)
    problems = [f"only in {a}: {p}" for p in sorted(in_a - in_b)]
    problems += [f"only in {b}: {p}" for p in sorted(in_b - in_a)]
    for rel in sorted(in_a & in_b):
        if rel.name == "manifest.json":
            same = manifest_without_timings(a / rel) == manifest_without_timings(b / rel)
        else:
            same = (a / rel).read_bytes() == (b / rel).read_bytes()
        if not same:
            problems.append(f"differs: {rel}")
    if problems:
        print("\n".join(problems[:20]), file=sys.stderr)
        print(f"{len(problems)} differences between {a} and {b}", file=sys.stderr)
        return 1
    print(f"{len(in_a)} files equal ({a} and {b}; manifest.json without timings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
