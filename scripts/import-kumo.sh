#!/usr/bin/env bash
# Regenerates the shipped KUMO domains (domains/<name>.yaml) from KUMO's
# Python data files with `kumo-gen import`, using the per-env metadata in
# domains/kumo-import.tsv. The import notes (every change made to a KUMO
# file) are collected in domains/kumo-import-notes.txt.
#
# Usage: scripts/import-kumo.sh [KUMO_REFERENCE_DIR]
#   KUMO_REFERENCE_DIR defaults to ../shared/kumo-reference (relative to
#   the repository root); set KUMO_GEN to use a prebuilt binary.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
ref="${1:-../shared/kumo-reference}"
data="$ref/data"
if [[ ! -d "$data" ]]; then
    echo "error: $data not found; pass the kumo-reference directory" >&2
    exit 2
fi
bin="${KUMO_GEN:-}"
if [[ -z "$bin" ]]; then
    cargo build --quiet --release --locked --bin kumo-gen
    bin="$root/target/release/kumo-gen"
fi

table="domains/kumo-import.tsv"
notes="domains/kumo-import-notes.txt"
: > "$notes.tmp"
count=0
while IFS=$'\t' read -r env file name tvar avar ovar title tnoun tplural anoun aplural goal; do
    [[ "$env" == \#* || "$env" == env || -z "$env" ]] && continue
    [[ "$name" == "-" ]] && { echo "skip  $env (shares $file; see $table)"; continue; }
    out="domains/$name.yaml"
    if ! "$bin" import "$data/$file" -o "$out" --name "$name" --title "$title" \
        --truth-noun "$tnoun" --truth-plural "$tplural" \
        --action-noun "$anoun" --action-plural "$aplural" --goal "$goal" \
        --truths-var "$tvar" --actions-var "$avar" --outcomes-var "$ovar" \
        2> >(sed "s|$data/||" >> "$notes.tmp"); then
        echo "error: importing $env ($file) failed; see $notes.tmp" >&2
        exit 1
    fi
    count=$((count + 1))
done < "$table"
wait
mv "$notes.tmp" "$notes"
echo "imported $count KUMO domains into domains/; notes in $notes"
