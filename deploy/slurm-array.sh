#!/usr/bin/env bash
# A lahar sweep as a Slurm job array: one shard per array task, over a shared
# filesystem. Slurm sets SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and
# SLURM_ARRAY_TASK_COUNT; `lahar sweep` reads its shard from them.
#
#   jobid=$(sbatch --parsable deploy/slurm-array.sh)
#   sbatch --dependency=afterany:$jobid --wrap \
#       "lahar sweep merge $PWD/results/nodes-by-policy --out $PWD/results/nodes-by-policy"
#
# A failed or preempted task can simply be resubmitted (`--resume` keeps the cells
# that finished).
#SBATCH --job-name=lahar-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=01:00:00
#SBATCH --output=lahar-sweep-%A_%a.log
set -euo pipefail
lahar sweep examples/sweeps/nodes-by-policy.yaml \
    --out results/nodes-by-policy --jobs "${SLURM_CPUS_PER_TASK:-1}" --resume -q
