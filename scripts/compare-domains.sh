#!/usr/bin/env bash
# Two builds of kumo-gen side by side on every shipped domain: for each
# domain with a 12x16 setting (or the comma-separated DOMAINS), `BASE
# --domain D --truths 12 --actions 16 -n N --no-sft --books none` then the
# same with NEW, one right after the other (so a change in the machine's
# load hits both), each timed by /usr/bin/time, and their outputs compared
# byte for byte (every file but manifest.json, which records timings).
#
#     cargo build --release
#     scripts/compare-domains.sh BASE NEW [N] > compare.md   # N defaults to 1000
#
# Prints one Markdown row per domain: wall and CPU seconds (user + system)
# of both runs, the CPU ratio NEW / BASE, and whether the outputs are
# identical; a last row with the sums, and the load average at the end.
# Exits 1 if any output differs.
set -euo pipefail

base="${1:?usage: compare-domains.sh BASE NEW [N]}"
new="${2:?usage: compare-domains.sh BASE NEW [N]}"
n="${3:-1000}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

source "$(dirname "$0")/domain-runs.sh"
sweep_domains

# "WALL CPU" of one run of binary $1 into directory $2 on domain $3, or
# "- -" when the run fails (see timed_run).
timed() {
    timed_run "$out" "$1" --domain "$3" --truths 12 --actions 16 -n "$n" --out "$2" --force |
        cut -d' ' -f1-2
}

echo "| domain | base wall s | base CPU s | new wall s | new CPU s | CPU new / base | outputs |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
totals=(0 0 0 0)
differ=0
for d in "${domains[@]}"; do
    read -r bw bc < <(timed "$base" "$out/base" "$d")
    [[ "$bc" == "-" ]] && continue
    read -r nw nc < <(timed "$new" "$out/new" "$d")
    if diff -r -x manifest.json "$out/base" "$out/new" >/dev/null; then
        same="identical"
    else
        same="**differ**"
        differ=1
    fi
    ratio=$(awk -v a="$nc" -v b="$bc" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    printf '| %s | %.2f | %.2f | %.2f | %.2f | %s | %s |\n' "$d" "$bw" "$bc" "$nw" "$nc" "$ratio" "$same"
    totals=($(awk -v a="${totals[0]}" -v b="${totals[1]}" -v c="${totals[2]}" -v e="${totals[3]}" \
        -v w="$bw" -v x="$bc" -v y="$nw" -v z="$nc" 'BEGIN { print a + w, b + x, c + y, e + z }'))
    rm -rf "$out/base" "$out/new"
done
ratio=$(awk -v a="${totals[3]}" -v b="${totals[1]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
printf '| **all** | %.1f | %.1f | %.1f | %.1f | %s | |\n' "${totals[@]}" "$ratio"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$differ"
