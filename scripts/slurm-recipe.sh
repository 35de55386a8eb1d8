#!/usr/bin/env bash
# The Slurm recipe of docs/cluster.md (`--shard K/N` array job, then `merge`) run on a
# real one-node Slurm, checked byte for byte against an unsharded run.
#
# For a Debian machine (or container) where you are root: it installs
# slurm-wlm and munge from the distribution (apt-get), starts munged,
# slurmctld and slurmd on loopback (127.0.0.1 only) with a private config
# in a work directory (SLURM_CONF; /etc/slurm is not touched), submits the
# array job of docs/cluster.md with N tasks, waits for it, runs `kumo-gen merge`, runs
# the same generation unsharded, and compares every dataset file (the
# instance JSONL, the SFT records, the knowledge books, the derived-file
# record) byte for byte, and manifest.json without its timings and the
# `merged_shards` count. It stops the daemons it started (also on failure).
# The packages stay installed. Not part of CI: it installs system packages.
#
# Usage (from the repository, after `cargo build --release`):
#   sudo scripts/slurm-recipe.sh [N_SHARDS] [N_INSTANCES]
# Environment: KUMO_GEN (binary, default target/release/kumo-gen),
#   WORK (work directory, default a new one under /tmp), DOMAIN (medical),
#   TRUTHS (12), ACTIONS (16), SKIP_INSTALL=1 (packages already there).
# Exit 0 when the merged files equal the unsharded run's, 1 otherwise.
set -euo pipefail

SHARDS=${1:-4}
COUNT=${2:-20000}
DOMAIN=${DOMAIN:-medical}
TRUTHS=${TRUTHS:-12}
ACTIONS=${ACTIONS:-16}
KUMO_GEN=$(realpath "${KUMO_GEN:-target/release/kumo-gen}")
WORK=${WORK:-$(mktemp -d /tmp/kumo-slurm.XXXXXX)}
mkdir -p "$WORK"
WORK=$(realpath "$WORK")
chmod 755 "$WORK" # munged runs as `munge` and reads its key below

say() { printf '[slurm-recipe] %s\n' "$*"; }
die() { say "error: $*" >&2; exit 2; }
seconds_since() {
    local ms=$((($(date +%s%N) - $1) / 1000000))
    printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts daemons)"
command -v apt-get >/dev/null || die "apt-get not found: this script is for Debian"
[ -x "$KUMO_GEN" ] || die "no kumo-gen binary at $KUMO_GEN (cargo build --release, or set KUMO_GEN)"
[ "$SHARDS" -ge 4 ] 2>/dev/null || die "N_SHARDS must be a number >= 4"

if [ "${SKIP_INSTALL:-0}" != 1 ]; then
    say "installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
say "$(slurmctld -V)"

mkdir -p "$WORK"/{state,spool,log,job}
STARTED=()
cleanup() {
    set +e
    if [ -n "${JOB_ID:-}" ]; then scancel "$JOB_ID" 2>/dev/null; fi
    for pidfile in "${STARTED[@]}"; do
        [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
    done
    sleep 1
    for pidfile in "${STARTED[@]}"; do
        [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && kill -9 "$(cat "$pidfile")"
    done
    say "daemons stopped; work directory $WORK"
}
trap cleanup EXIT

# munge on its default socket, with a fresh key, run as `munge` (a munged
# that already answers there is used as it is, and left running).
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "munged already running; using it"
else
    MUNGE_DIR=$WORK/munge
    mkdir -p "$MUNGE_DIR" /run/munge
    dd if=/dev/urandom of="$MUNGE_DIR/munge.key" bs=1024 count=1 status=none
    chown -R munge:munge "$MUNGE_DIR" /run/munge
    chmod 700 "$MUNGE_DIR"
    chmod 400 "$MUNGE_DIR/munge.key"
    runuser -u munge -- munged --key-file="$MUNGE_DIR/munge.key" \
        --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" \
        --seed-file="$MUNGE_DIR/munged.seed"
    STARTED+=("$MUNGE_DIR/munged.pid")
    munge -n | unmunge >/dev/null || die "munged does not answer (see $MUNGE_DIR/munged.log)"
    say "munged started"
fi

# One node on loopback; CPUs and memory as slurmd sees them.
NODE_LINE=$(slurmd -C | head -n 1 | sed -E 's/^NodeName=[^ ]+/NodeName=localhost NodeAddr=127.0.0.1/; s/ UpTime=.*//')
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=kumo-recipe
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
$NODE_LINE State=UNKNOWN
PartitionName=recipe Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -f "$SLURM_CONF"
STARTED+=("$WORK/slurmctld.pid")
slurmd -f "$SLURM_CONF" -N localhost
STARTED+=("$WORK/slurmd.pid")
for _ in $(seq 60); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)'; then break; fi
    sleep 1
done
sinfo -h -N -o '%T' | grep -qE '^(idle|mixed)' || {
    tail -n 20 "$WORK"/log/*.log >&2
    die "the node did not come up (logs above)"
}
say "one-node cluster up on 127.0.0.1: $(sinfo -h -N -o '%N %c CPUs %T')"

# The array job of docs/cluster.md, N tasks, sharing nothing but --out.
OUT=$WORK/generated
REF=$WORK/unsharded
cat >"$WORK/job/generate.sbatch" <<EOF
#!/bin/bash
#SBATCH --array=0-$((SHARDS - 1))
#SBATCH --output=$WORK/job/%A_%a.out
"$KUMO_GEN" generate --domain $DOMAIN --truths $TRUTHS --actions $ACTIONS -n $COUNT \\
    --out "$OUT" --shard \${SLURM_ARRAY_TASK_ID}/$SHARDS
EOF
say "sbatch: $SHARDS tasks of $DOMAIN, $TRUTHS truths x $ACTIONS actions, n = $COUNT"
start=$(date +%s%N)
JOB_ID=$(sbatch --parsable --wait "$WORK/job/generate.sbatch") || {
    cat "$WORK"/job/*.out >&2
    die "the array job failed (task output above)"
}
array_s=$(seconds_since "$start")
states=$(sacct -n -X -j "$JOB_ID" -o State 2>/dev/null | sort | uniq -c | tr -s ' ' || true)
JOB_ID=
say "array job done in ${array_s} s${states:+ ($states)}"

start=$(date +%s%N)
"$KUMO_GEN" merge --out "$OUT" >"$WORK/merge.log" 2>&1 || { cat "$WORK/merge.log" >&2; die "merge failed"; }
merge_s=$(seconds_since "$start")
say "merge done in ${merge_s} s"

start=$(date +%s%N)
"$KUMO_GEN" generate --domain "$DOMAIN" --truths "$TRUTHS" --actions "$ACTIONS" -n "$COUNT" \
    --out "$REF" >"$WORK/unsharded.log" 2>&1 || { cat "$WORK/unsharded.log" >&2; die "unsharded run failed"; }
unsharded_s=$(seconds_since "$start")
say "unsharded run done in ${unsharded_s} s"

# Byte for byte: every file of the unsharded run but the manifest, both ways.
status=0
files=0
bytes=0
while IFS= read -r -d '' f; do
    rel=${f#"$REF"/}
    case $rel in */manifest.json | */.manifest.json.lock) continue ;; esac
    if ! cmp -s "$f" "$OUT/$rel"; then
        say "DIFFERENT: $rel"
        status=1
    fi
    files=$((files + 1))
    bytes=$((bytes + $(stat -c %s "$f")))
done < <(find "$REF" -type f -print0)
extra=$(cd "$OUT" && find . -type f ! -path '*/shards/*' ! -name manifest.json ! -name .manifest.json.lock |
    sed 's|^\./||' | while read -r rel; do [ -e "$REF/$rel" ] || echo "$rel"; done)
if [ -n "$extra" ]; then
    say "files only in the merged output: $extra"
    status=1
fi
strip() { grep -vE '"(synthesis_s|write_s|total_s|instances_per_s|merged_shards|label_s|books_s|sft_s)"' "$1"; }
for m in "$REF"/*/manifest.json; do
    rel=${m#"$REF"/}
    if ! diff <(strip "$m") <(strip "$OUT/$rel") >"$WORK/manifest.diff"; then
        say "manifest $rel differs beyond timings:"
        cat "$WORK/manifest.diff"
        status=1
    fi
done
if [ "$status" = 0 ]; then
    say "EQUAL: $files files, $bytes bytes, byte for byte (manifest.json equal but for timings)"
else
    say "NOT EQUAL"
fi
exit "$status"
