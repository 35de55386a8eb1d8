#!/usr/bin/env bash
# The layout rules ARCHITECTURE.md states, checked: every Rust source file
# under src/ (and python/src/) opens with a `//!` module doc saying what it
# is for, and none is longer than 800 lines; and no code under src/ writes
# with `eprintln!`/`println!`/`eprint!`/`print!` (they panic on a closed
# stream: messages go through `stderr_line!`). Prints each offending file
# with the rule and the fix; exits 1 when there is one. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=800
status=0
while IFS= read -r -d '' file; do
    lines=$(wc -l < "$file")
    if (( lines > limit )); then
        echo "$file: $lines lines, over the limit of $limit: split it by concern (one idea per file)" >&2
        status=1
    fi
    if ! head -n 1 "$file" | grep -q '^//!'; then
        echo "$file:1: no opening \`//!\` module doc: say in its first line what the module is for" >&2
        status=1
    fi
done < <(find src python/src -name '*.rs' -print0 | sort -z)
# `stderr_line!` is the one writer of message lines (src/stderr_line.rs).
if grep -rnE '(^|[^_[:alnum:]])e?print(ln)?!\(' src --include='*.rs' | grep -v '^src/stderr_line.rs:' | grep -vE '^[^:]+:[0-9]+:\s*//' >&2; then
    echo "the lines above write with print!/println!/eprint!/eprintln!, which panic on a closed stream: use crate::stderr_line! (or write!/writeln! and handle the error)" >&2
    status=1
fi
exit "$status"
