#!/bin/bash
# bench/gpu/run.sh — the CUDA backend on a GPU machine, in one run of a few minutes (issue 24;
# docs/gpu.md). NOT YET RUN: it was written on a machine without a GPU. What it does today:
#   1. the card (nvidia-smi);
#   2. every app through `perfora run --target cuda`: PTX emitted, loaded by the driver, every
#      kernel found (the run itself then stops with "running them from the host is not
#      implemented yet": that is the next step, and then this step also writes the outputs);
#   3. ptxas for the card's architecture: registers and spills per kernel;
#   4. the anchors' gpu_bench (../shared/anchors/gpu), on the same GPU minutes apart, at
#      2048x1536 (SIZES=2048x1536,4096x3072 for both);
#   5. the CPU side for the ratio the issue asks for: every app's exact JIT time on 2 threads.
# When the host side of the CUDA backend runs kernels, step 2 also compares each app's output
# with the CPU's (max abs <= 1e-4) and times it (--time 101), next to step 5's times.
#
# Usage, from the repository root (perfora built in build/, e.g. carried there):
#   OUT=out/gpu bash bench/gpu/run.sh
# Environment: PERFORA (default build/perfora), GPU_BENCH (default: the first of
# shared/anchors/gpu/bin/gpu_bench and ../shared/anchors/gpu/bin/gpu_bench), PTXAS (default
# /usr/local/cuda/bin/ptxas or ptxas on PATH), IMG (default a bundled 820x614 photo), ARCH
# (default sm_90), SIZES.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTDIR=${OUT:-$PWD/out/gpu}
mkdir -p "$OUTDIR"
PERFORA=${PERFORA:-build/perfora}
IMG=${IMG:-data/images/train/man_made_55_820x614.png}
APPS="blur unsharp_mask bilateral_filter bilateral_grid demosaic mosaic median artistic_blur"
SUMMARY="$OUTDIR/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

[ -x "$PERFORA" ] || { echo "no perfora at $PERFORA (build it: scripts/build.sh -DPF_BENCH=OFF)"; exit 1; }

# 1. the card
say "# $(date -u +%FT%TZ) bench/gpu/run.sh"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version,memory.total,pstate \
    --format=csv 2>&1 | tee "$OUTDIR/nvidia_smi.txt" | tee -a "$SUMMARY"
else
  say "no nvidia-smi: this machine has no NVIDIA driver (perfora will say so below)"
fi

# 2. every app through the CUDA backend
say ""
say "# perfora run --target cuda (default GPU schedule)"
for app in $APPS; do
  in="$IMG"
  msg=$("$PERFORA" run "apps/$app.pf" --target cuda --emit-ptx "$OUTDIR/$app.ptx" \
        --in "$in" --out "$OUTDIR/${app}_gpu.png" 2>&1)
  say "$(printf '%-16s rc=%d  %s' "$app" $? "$msg")"
done

# 3. ptxas for this card (sm_90 for the H100 and H200)
PTXAS=${PTXAS:-$( [ -x /usr/local/cuda/bin/ptxas ] && echo /usr/local/cuda/bin/ptxas || command -v ptxas )}
ARCH=${ARCH:-sm_90}
say ""
if [ -n "$PTXAS" ]; then
  say "# ptxas -arch=$ARCH: max registers and spilled bytes per app"
  for app in $APPS; do
    [ -f "$OUTDIR/$app.ptx" ] || { say "$app: no PTX"; continue; }
    log=$("$PTXAS" -arch="$ARCH" -v "$OUTDIR/$app.ptx" -o /dev/null 2>&1)
    regs=$(echo "$log" | sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' | sort -n | tail -1)
    spill=$(echo "$log" | sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' | paste -sd+ | bc)
    kernels=$(grep -c '\.entry' "$OUTDIR/$app.ptx")
    say "$(printf '%-16s %d kernels, max %s registers, %s bytes spilled' "$app" "$kernels" "$regs" "$spill")"
  done
else
  say "# SKIP ptxas: not found"
fi

# 4. the anchors, on this GPU
GPU_BENCH=${GPU_BENCH:-}
for cand in shared/anchors/gpu/bin/gpu_bench ../shared/anchors/gpu/bin/gpu_bench \
            /work/shared/anchors/gpu/bin/gpu_bench; do
  [ -z "$GPU_BENCH" ] && [ -x "$cand" ] && GPU_BENCH=$cand
done
say ""
if [ -n "$GPU_BENCH" ] && [ -x "$GPU_BENCH" ]; then
  sizes=${SIZES:-2048x1536}
  say "# anchors: $GPU_BENCH --reps 31 --sizes $sizes"
  timeout 150 "$GPU_BENCH" --reps 31 --sizes "$sizes" --csv "$OUTDIR/anchors.csv" \
    > "$OUTDIR/anchors.txt" 2> "$OUTDIR/anchors.err"
  say "gpu_bench rc=$? (tables in anchors.txt)"
else
  say "# SKIP anchors: no gpu_bench (set GPU_BENCH, or carry shared/anchors/gpu/bin)"
fi

# 5. the CPU exact time per app (2 threads), for the >= 20x the issue asks of the GPU
say ""
say "# perfora run --target cpu --threads 2 --time 5 (exact, default schedule)"
for app in $APPS; do
  line=$("$PERFORA" run "apps/$app.pf" --threads 2 --time 5 --in "$IMG" \
         --out "$OUTDIR/${app}_cpu.png" 2>&1 | tail -1)
  say "$(printf '%-16s %s' "$app" "$line")"
done
say ""
say "# files in $OUTDIR"
