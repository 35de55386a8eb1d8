#!/usr/bin/env bash
# The frontier settings, per domain (BENCHMARKS.md "Frontier settings"):
# for every shipped domain with at least TRUTHS truths and ACTIONS actions,
# one whole-process run of the main job,
#
#     kumo-gen --domain D --truths TRUTHS --actions ACTIONS -n N --threads THREADS
#
# with an empty cache (so the setting's reference sample is computed, as on
# a fresh machine), labels only (--no-sft --books none), stopped after
# LIMIT seconds. Prints one Markdown row per domain: lines written, wall
# time, time to the first line (the file polled every 0.1 s), the share of
# exact lines, the certified lines' mean and largest relative gap
# (upper - lower) / lower, all read from the lines themselves; and the load
# average before and after.
#
#     scripts/benchmark-frontier.sh 24 32 1000 [LIMIT]
#     KUMO_GEN=target/release/kumo-gen DOMAINS=music,fish THREADS=2 scripts/benchmark-frontier.sh 32 40 200
set -euo pipefail
cd "$(dirname "$0")/.."
truths="$1" actions="$2" n="$3" limit="${4:-600}"
bin="${KUMO_GEN:-target/release/kumo-gen}"
threads="${THREADS:-2}"
[[ -x "$bin" ]] || cargo build --release --locked
if [[ -n "${DOMAINS:-}" ]]; then
    IFS=',' read -r -a domains <<<"$DOMAINS"
else
    mapfile -t domains < <("$bin" domains | awk -v t="$truths" -v a="$actions" 'NR > 1 && $2 >= t && $3 >= a { print $1 }')
fi
# Seconds since START (a `date +%s.%N` reading).
since() { awk -v now="$(date +%s.%N)" -v start="$1" 'BEGIN { printf "%.2f", now - start }'; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $threads threads; limit ${limit} s; $("$bin" --version)"
echo
echo "| domain | setting | lines | wall s | first line s | exact % | certified | gap mean % | gap max % | status |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
for domain in "${domains[@]}"; do
    out="$scratch/$domain"
    rm -rf "$out" "$scratch/cache"
    mkdir -p "$out" "$scratch/cache"
    file="$out/$domain/truth_num=$truths+action_num=$actions+valid_truth_num=1.jsonl"
    start=$(date +%s.%N)
    KUMO_GEN_CACHE="$scratch/cache" timeout "$limit" "$bin" --domain "$domain" --truths "$truths" \
        --actions "$actions" -n "$n" --threads "$threads" --no-sft --books none --out "$out" \
        >/dev/null 2>"$scratch/stderr" &
    pid=$!
    first="-"
    while kill -0 "$pid" 2>/dev/null; do
        if [[ "$first" == "-" && -s "$file" ]]; then
            first=$(since "$start")
        fi
        sleep 0.1
    done
    status=ok
    wait "$pid" || status="exit $?"
    wall=$(since "$start")
    if [[ "$first" == "-" && -s "$file" ]]; then first="$wall"; fi
    [[ "$status" == "exit 124" ]] && status="stopped at ${limit} s"
    if grep -q "no .*draw\|cannot\|refuse" "$scratch/stderr" && [[ ! -s "$file" ]]; then
        status="refused: $(grep -m1 -o 'error: .*' "$scratch/stderr" | cut -c1-60)"
    fi
    stats=$(python3 - "$file" <<'PY'
import json, sys
lines = exact = 0
gaps = []
try:
    with open(sys.argv[1]) as f:
        for line in f:
            o = json.loads(line).get("optimal", {})
            lines += 1
            if o.get("exact"):
                exact += 1
            elif "lower_bound" in o:
                lo, hi = o["lower_bound"], o["expected_steps"]
                gaps.append((hi - lo) / lo if lo > 0 else 0.0)
except FileNotFoundError:
    pass
share = f"{100 * exact / lines:.1f}" if lines else "-"
mean = f"{100 * sum(gaps) / len(gaps):.2f}" if gaps else "-"
top = f"{100 * max(gaps):.2f}" if gaps else "-"
print(lines, share, len(gaps), mean, top)
PY
)
    read -r lines share certified mean top <<<"$stats"
    printf '| %s | %sx%s | %s | %.1f | %s | %s | %s | %s | %s | %s |\n' "$domain" "$truths" "$actions" \
        "$lines" "$wall" "$( [[ "$first" == "-" ]] && echo - || printf '%.1f' "$first")" "$share" "$certified" "$mean" "$top" "$status"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
