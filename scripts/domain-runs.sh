# Shared by benchmark-domains.sh and compare-domains.sh (sourced, not run):
# the shipped domains to sweep, and one timed whole-process run.

# The domains to sweep into the array `domains`: the comma-separated
# DOMAINS if set, else every shipped domain (domains/*.yaml).
sweep_domains() {
    if [[ -n "${DOMAINS:-}" ]]; then
        IFS=',' read -r -a domains <<<"$DOMAINS"
    else
        mapfile -t domains < <(ls domains | sed -n "s/\.yaml$//p")
    fi
}

# `timed_run SCRATCH BIN ARGS..`: runs `BIN ARGS.. --no-sft --books none`
# (labels only) under /usr/bin/time, its log and stderr in directory
# SCRATCH, and prints "WALL CPU KB" (wall seconds, user + system seconds,
# peak RSS), or "- - -" when the run fails (the setting does not fit the
# domain).
timed_run() {
    local scratch="$1" bin="$2"
    shift 2
    if /usr/bin/time -f '%e %U %S %M' -o "$scratch/time.log" "$bin" "$@" --no-sft \
        --books none >/dev/null 2>"$scratch/stderr"; then
        awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$scratch/time.log"
    else
        echo "- - -"
    fi
}
