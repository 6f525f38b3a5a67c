#!/usr/bin/env bash
# The search over MPI on this machine, in one run (docs/search.md, "Running on a cluster"):
#  1. rank 0's capacity: bench_mpi under mpirun with PF_MPI_TEST_HOOK=instant (workers answer
#     at once) at N = 2, 4, 8, 16 ranks, oversubscribed: candidates per second, rank 0's CPU per
#     candidate and the ceiling it implies;
#  2. scaling: a real search (blur, 256x192, population 12, 3 generations) at N = 1, 2, 3
#     ranks: evaluations per second. N = 1 is a local run (a pool of one worker per core),
#     N = 2 one worker rank, N = 3 two.
# Usage: bench/bench_mpi.sh [BUILD_DIR]   (a build with -DPF_BENCH=ON; Open MPI's mpirun)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --oversubscribe)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in 2 4 8 16; do
  "${mpirun[@]}" -np "$n" -x PF_MPI_TEST_HOOK=instant "$build/bench/bench_mpi"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A rate
for n in 1 2 3; do
  start=$(date +%s.%N)
  args=(tune apps/blur.pf --out "$tmp/n$n" --resolution 256x192 --population 12
        --generations 3 --seed 5 --no-test --quiet)
  "${mpirun[@]}" -np "$n" "$build/perfora" "${args[@]}" >/dev/null
  end=$(date +%s.%N)
  evals=$(wc -l < "$tmp/n$n/evaluations.jsonl")
  rate[$n]=$(awk -v e="$evals" -v a="$start" -v b="$end" 'BEGIN { print e / (b - a) }')
  awk -v n="$n" -v w="$(nproc)" -v e="$evals" -v a="$start" -v b="$end" 'BEGIN {
    printf "search N=%d (%d worker%s): %d evaluations in %.1f s: %.3f evaluations/s\n",
           n, (n > 1 ? n - 1 : w), ((n > 2 || (n == 1 && w > 1)) ? "s" : ""), e, b - a,
           e / (b - a) }'
done
awk -v a="${rate[1]}" -v b="${rate[2]}" -v c="${rate[3]}" 'BEGIN {
  printf "scaling: N=2 / N=1 %.2f, N=3 / N=1 %.2f (evaluations/s of whole runs, start-up included)\n",
         b / a, c / a }'
