#!/usr/bin/env bash
# The per-domain table of BENCHMARKS.md from real whole-process runs: for
# every shipped domain (or the comma-separated DOMAINS), `kumo-gen
# --domain D --truths 12 --actions 16 -n N --no-sft --books none` (labels
# only: no books, no SFT records) timed by /usr/bin/time, after a `-n 1`
# run of the same setting whose time is the fixed cost (process start,
# domain load, the reference sample, the manifest). Domains smaller than
# 12x16 are skipped (the run refuses the setting up front).
#
#     cargo build --release
#     scripts/benchmark-domains.sh [N] > sweep.md      # N defaults to 1000
#
# Prints one Markdown row per domain: CPU seconds (user + system) and wall
# seconds of the `-n 1` run (the fixed cost) and of the `-n N` run, the
# CPU time projected to 5 000 instances (fixed + (N-run - fixed) * 5000 /
# N; on two idle cores the wall time is about half of it: the labels run
# in parallel), and peak RSS; a last row with the sums, and the load
# average at the end. CPU time is what a loaded machine does not
# inflate. The runs use the default thread count (every core) and a
# fresh `--out`.
set -euo pipefail

n="${1:-1000}"
bin="${KUMO_GEN:-target/release/kumo-gen}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

source "$(dirname "$0")/domain-runs.sh"
sweep_domains

# Wall seconds, CPU seconds and peak RSS (kB) of one run (see timed_run).
timed() {
    timed_run "$out" "$bin" "$@" --out "$out/data" --force
}

echo "| domain | -n 1 CPU s | -n 1 wall s | -n $n CPU s | -n $n wall s | 5 000 CPU s (projected) | peak RSS MB |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
sum() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
total_fixed=0
total_run=0
total_projected=0
for d in "${domains[@]}"; do
    read -r fixed_wall fixed _ < <(timed --domain "$d" --truths 12 --actions 16 -n 1)
    [[ "$fixed" == "-" ]] && continue
    read -r run_wall run rss < <(timed --domain "$d" --truths 12 --actions 16 -n "$n")
    [[ "$run" == "-" ]] && continue
    projected=$(awk -v f="$fixed" -v r="$run" -v n="$n" \
        'BEGIN { printf "%.1f", f + (r - f) * 5000 / n }')
    printf '| %s | %.2f | %.2f | %.2f | %.2f | %s | %d |\n' "$d" "$fixed" "$fixed_wall" "$run" \
        "$run_wall" "$projected" $((rss / 1024))
    total_fixed=$(sum "$total_fixed" "$fixed")
    total_run=$(sum "$total_run" "$run")
    total_projected=$(sum "$total_projected" "$projected")
done
printf '| **all** | %.1f | | %.1f | | %.1f | |\n' "$total_fixed" "$total_run" "$total_projected"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
