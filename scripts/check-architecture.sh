#!/usr/bin/env bash
# The map and the floors hold (run by .ci/run):
# 1. ARCHITECTURE.md names files and folders in backticks (`src/...`,
#    `scripts/...`, `tests/...`, `python/...`, `examples/...`): every one
#    of them must exist, so the map cannot drift from the code.
# 2. The floors: FLOORS below is the one table of which rooms (folders of
#    src/, or files of their own such as `error`) each room may import;
#    ARCHITECTURE.md shows the same table. scripts/architecture.py reads
#    every import from the code and fails on one the table does not allow,
#    on a room the table does not name, on a circle in the table, and on
#    any circle of imports between files (docs in ARCHITECTURE.md
#    "Floors").
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
while IFS= read -r path; do
    # A glob names files that must exist too (`domains/*.yaml`).
    if ! compgen -G "$path" > /dev/null; then
        echo "ARCHITECTURE.md names \`$path\`, which does not exist" >&2
        missing=1
    fi
done < <(grep -oE '`(src|scripts|tests|python|examples|benches|domains|templates|docs)/[^` ]*`' ARCHITECTURE.md | tr -d '`' | sed 's/[*]$//' | sort -u)
if [ "$missing" -ne 0 ]; then
    echo "fix ARCHITECTURE.md (or restore the file) so that every path it names exists" >&2
    exit 1
fi
echo "ARCHITECTURE.md: every path it names exists"

# room: the rooms it may import (a room's own files always may).
FLOORS='
flag_tables:
fnv:
progress:
python_repr:
files: fnv
domain: files fnv python_repr
cache: files fnv
synth: domain fnv
graph: domain
import: domain python_repr
family: domain fnv
search: domain fnv synth
render: domain files fnv python_repr synth
difficulty: cache domain fnv search synth
game: domain files fnv python_repr render search synth
dataset: difficulty domain files fnv game render search synth
contamination: dataset domain files fnv python_repr synth
derived: dataset domain files fnv game progress render
results: dataset domain files fnv game search
analysis: dataset domain game render results search
score: dataset domain game results search
eval: dataset domain files fnv game progress render results
pipeline: cache contamination dataset derived difficulty domain family files fnv game progress render score search synth
stats: domain game render results
propose: dataset domain eval files graph render synth
report: analysis dataset domain game render results score search stats
serve: analysis dataset domain eval files fnv game progress render results search
error: contamination dataset domain eval family files game graph pipeline propose render results search serve stats synth
cli: analysis cache contamination dataset derived difficulty domain error eval family files flag_tables fnv game graph import pipeline progress propose python_repr render report results score search serve stats synth
'

# ARCHITECTURE.md's floors table is this one (its rows, in any order).
doc=$(awk '/^\| floor \| room \| may import/{on=1; next} on && /^\|/ {print} on && !/^\|/ {exit}' ARCHITECTURE.md \
    | awk -F'|' 'NR>1 {gsub(/`/,""); gsub(/^ +| +$/,"",$3); gsub(/^ +| +$/,"",$4); if ($4=="nothing") $4=""; print $3": "$4}' | sed 's/ *$//' | sort)
want=$(printf '%s\n' "$FLOORS" | sed '/^$/d; s/ *$//' | sort)
if [ "$doc" != "$want" ]; then
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$doc") >&2 || true
    echo "ARCHITECTURE.md's floors table (< here, > there) differs from scripts/check-architecture.sh's: make them one" >&2
    exit 1
fi
python3 scripts/architecture.py <(printf '%s\n' "$FLOORS") --doc ARCHITECTURE.md "$@"
