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

# Floors: the rooms below the pipeline never name it (nor the CLI) in
# code; doc comments may point up. An error the pipeline must see enters
# its own error type through `From` instead (`files::FileError`,
# `derived::DerivedError` -> `pipeline::write::OutputError`).
up=$(grep -rnE 'crate::(pipeline|cli)\b' src/files src/dataset src/derived src/game src/render src/search src/synth src/domain | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
if [ -n "$up" ]; then
    echo "$up" >&2
    echo "these lower rooms import crate::pipeline or crate::cli (an arrow back up): give the room its own error and a From above" >&2
    exit 1
fi
echo "floors: no room below the pipeline imports it"
