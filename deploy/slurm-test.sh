#!/usr/bin/env bash
# deploy/slurm-array.sh, end to end, on a real Slurm on this machine: installs
# munge, slurmctld, slurmd and the Slurm client from the distribution's packages
# (when they are missing; needs root and apt-get), starts a one-node cluster of its
# own (its own config, state and ports, under a temporary directory), submits the
# array script as it is, merges the shards with a dependent job as the script's
# header says, and checks the merged tables byte for byte against the same sweep
# run unsharded. .ci/run calls it after the tests; docs/sweeps.md describes it.
#
#   deploy/slurm-test.sh              # uses target/release/lahar (built if missing)
#   LAHAR_BIN=/path/to/lahar deploy/slurm-test.sh
#
# Exit 0 when the merged sweep equals the unsharded one; anything else fails
# loudly, with the daemons' and the tasks' logs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf 'slurm-test: %s\n' "$*" >&2; }

if [ -z "${LAHAR_BIN:-}" ]; then
  (cd "$root" && cargo build --release --quiet --bin lahar)
  LAHAR_BIN="$root/target/release/lahar"
fi
[ -x "$LAHAR_BIN" ] || { say "no lahar binary at $LAHAR_BIN"; exit 1; }

# 1. Slurm and munge from the distribution.
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
  || ! command -v munged >/dev/null; then
  [ "$(id -u)" = 0 ] || { say "Slurm is not installed and this is not root: install slurmctld slurmd slurm-client munge"; exit 1; }
  say "installing slurmctld, slurmd, slurm-client and munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null \
    || { apt-get update -q >/dev/null && apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null; }
fi
[ "$(nproc)" -ge 2 ] || { say "deploy/slurm-array.sh asks 2 CPUs per task: this machine has $(nproc)"; exit 1; }

# 2. A one-node cluster of our own; everything it writes is under $work.
work="$(mktemp -d /tmp/lahar-slurm.XXXXXX)"
started=()
stop() {
  local code=$?
  for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ "$code" != 0 ]; then
    for f in "$work"/slurm/*.log "$work"/run/*.log; do
      [ -f "$f" ] && { say "--- $f"; tail -n 30 "$f" >&2; }
    done
  fi
  exit "$code"
}
trap stop EXIT

if ! munge -n >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
  [ -f /etc/munge/munge.key ] || { say "no /etc/munge/munge.key (the munge package creates it)"; exit 1; }
  su -s /bin/sh munge -c /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force
  sleep 1
  started+=("$(cat /run/munge/munged.pid)")
  munge -n | unmunge >/dev/null || { say "munge does not work"; exit 1; }
fi

host="$(hostname -s)"
mem_mb="$(awk '/MemTotal/ {print int($2 / 1024) - 1024}' /proc/meminfo)"
mkdir -p "$work/slurm/state" "$work/slurm/spool" "$work/run"
export SLURM_CONF="$work/slurm/slurm.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=lahartest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$work/slurm/state
SlurmdSpoolDir=$work/slurm/spool
SlurmctldPidFile=$work/slurm/slurmctld.pid
SlurmdPidFile=$work/slurm/slurmd.pid
SlurmctldLogFile=$work/slurm/slurmctld.log
SlurmdLogFile=$work/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem_mb State=UNKNOWN
PartitionName=lahar Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
sleep 1
started+=("$(cat "$work/slurm/slurmctld.pid")")
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 30); do
  [ -f "$work/slurm/slurmd.pid" ] && sinfo -h -o '%t' 2>/dev/null | grep -q idle && break
  sleep 1
done
started+=("$(cat "$work/slurm/slurmd.pid")")
sinfo -h -o '%t' | grep -q idle || { say "the node did not come up: $(sinfo 2>&1)"; exit 1; }
say "Slurm $(slurmd -V | awk '{print $2}') up: $(sinfo -h -o '%P %D nodes %c CPUs')"

# 3. The array script as it is, from a folder holding the sweep it names
#    find `lahar` on the PATH sbatch passes on.
# (the checkout's examples/, read only: the results go under $work).
ln -s "$root/examples" "$work/run/examples"
# Two commands, not an `a && b` list: errexit stops at either failing.
mkdir -p "$work/bin"
ln -s "$LAHAR_BIN" "$work/bin/lahar"
export PATH="$work/bin:$PATH"
cd "$work/run"
array="$(sbatch --parsable "$root/deploy/slurm-array.sh")"
say "array job $array submitted ($(grep -m1 -- '--array' "$root/deploy/slurm-array.sh" | sed 's/#SBATCH //'))"
# The merge, as the script's header writes it; --wait returns its exit code.
merged="$work/run/results/nodes-by-policy"
timeout 1800 sbatch --wait --output="$work/run/merge.log" --dependency="afterany:$array" \
  --wrap "lahar sweep merge $merged --out $merged" >/dev/null \
  || { say "the merge job failed (merge.log):"; cat "$work/run/merge.log" >&2; exit 1; }
tasks="$(ls "$work"/run/lahar-sweep-"$array"_*.log | wc -l)"
say "array of $tasks tasks and the merge done: $(cat "$work/run/merge.log")"

# 4. The same sweep on one machine, unsharded; the tables must be the same bytes.
lahar sweep examples/sweeps/nodes-by-policy.yaml --out "$work/run/single" --jobs 2 -q
for f in sweep.csv summary.csv sweep.json; do
  cmp "$merged/$f" "$work/run/single/$f" || { say "$f differs between the Slurm array and the unsharded sweep"; exit 1; }
done
cells="$(ls "$merged/cells" | wc -l)"
for c in "$work"/run/single/cells/*; do
  id="$(basename "$c")"
  for f in jobs.csv pods.csv decisions.csv summary.csv; do
    cmp "$merged/cells/$id/$f" "$c/$f" || { say "cells/$id/$f differs"; exit 1; }
  done
done
say "ok: $tasks array tasks, $cells cells; sweep.csv, summary.csv, sweep.json and every cell's files byte-identical to the unsharded sweep"
rm -rf "$work"
