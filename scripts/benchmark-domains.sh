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
# Prints one Markdown row per domain (wall seconds of the `-n 1` and the
# `-n N` run, their difference projected to 5 000 instances, peak RSS)
# and a last row with the sums and the load average at the end. The
# runs use the default thread count (every core) and a fresh `--out`.
set -euo pipefail

n="${1:-1000}"
bin="${KUMO_GEN:-target/release/kumo-gen}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

if [[ -n "${DOMAINS:-}" ]]; then
    IFS=',' read -r -a domains <<<"$DOMAINS"
else
    mapfile -t domains < <(ls domains | sed -n "s/\.yaml$//p")
fi

# Wall seconds and peak RSS (kB) of one run: "SECONDS KB", or "- -" when
# the run fails (the setting does not fit the domain).
timed() {
    local log="$out/time.log"
    if /usr/bin/time -f '%e %M' -o "$log" "$bin" "$@" --out "$out/data" --force \
        --no-sft --books none >/dev/null 2>"$out/stderr"; then
        cat "$log"
    else
        echo "- -"
    fi
}

echo "| domain | -n 1 (fixed) s | -n $n s | per 5 000 s (projected) | peak RSS MB |"
echo "| --- | ---: | ---: | ---: | ---: |"
total_fixed=0
total_run=0
total_projected=0
for d in "${domains[@]}"; do
    read -r fixed _ < <(timed --domain "$d" --truths 12 --actions 16 -n 1)
    [[ "$fixed" == "-" ]] && continue
    read -r run rss < <(timed --domain "$d" --truths 12 --actions 16 -n "$n")
    [[ "$run" == "-" ]] && continue
    projected=$(awk -v f="$fixed" -v r="$run" -v n="$n" \
        'BEGIN { printf "%.1f", f + (r - f) * 5000 / n }')
    printf '| %s | %.2f | %.2f | %s | %d |\n' "$d" "$fixed" "$run" "$projected" $((rss / 1024))
    total_fixed=$(awk -v a="$total_fixed" -v b="$fixed" 'BEGIN { print a + b }')
    total_run=$(awk -v a="$total_run" -v b="$run" 'BEGIN { print a + b }')
    total_projected=$(awk -v a="$total_projected" -v b="$projected" 'BEGIN { print a + b }')
done
printf '| **all** | %.1f | %.1f | %.1f | |\n' "$total_fixed" "$total_run" "$total_projected"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
