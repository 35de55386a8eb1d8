#!/usr/bin/env bash
# ARCHITECTURE.md names files and folders in backticks (`src/...`,
# `scripts/...`, `tests/...`, `python/...`, `examples/...`): every one of
# them must exist, so the map cannot drift from the code. Run by .ci/run.
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
