#!/bin/bash
# bench/gpu/run.sh — the CUDA backend on a GPU machine in one run of under ten minutes (issue
# 24; docs/gpu.md §6), and the CPU's scaling on that machine's 16 cores (issue 28).
# Steps, in the order STEPS names them (default: the order below):
#   tests    test_codegen's codegen_gpu_run (every app's default GPU schedule, GPU fills, GPU
#            Gaussian reconstructions, random perforation + GPU genes, on the CUDA backend
#            against the interpreter, max abs <= 1e-4) and codegen_gpu_ptx (ptxas registers and
#            spills);
#   exact    every app (EXACT_APPS) at SIZE: `perfora run --target cuda` (kernels by CUDA
#            events, transfers apart; the bundle's perfora.old too, for AB_APPS, in the same
#            step) and `--threads 2 --time 3` on the CPU (CPU_APPS), outputs compared;
#   scaling  bench_scaling at 1, 2 and all cores, 820x614 and 2048x1536 (issue 28);
#   scaling_ab  the bundle's bench_scaling.old and the new one, one after the other, for each
#            APP:SIZE of SCALING_AB;
#   perf     one perforated variant per app against its exact program, both on the GPU in the
#            same step, and its output against the same variant on the CPU; then the masks
#            (adaptive, importance: host calls between launches) for blur and bilateral filter;
#   gauss    Gaussian reconstructions on the GPU (docs/gpu.md §5): the recursive filter tiled
#            (PF_GPU_GAUSS=tiled, tiles of 64; tiled:16, tiled:32) against one thread per row
#            and column (rows), each variant's kernels against the exact program's in the same
#            step, and each output against the same variant on the CPU (2 threads);
#   export   exported CUDA libraries against the CPU libraries of the same variants
#            (bench/gpu/export_build.sh, export_check.c);
#   anchors  the anchors' gpu_bench on the same GPU, minutes apart;
#   tune     a small `perfora tune --target cuda` of TUNE_APP (default blur; the search on the
#            GPU, GPU genes drawn);
#   blur     blur's GPU schedules and the paper's variant; the fused ones also without the
#            register window of rows (--no-gpu-rows) and without FMA (--strict-float), as the
#            kernels were before both (docs/gpu.md §3).
# Each step has a time limit, and the later steps are skipped once BUDGET_S seconds have passed.
#
# Usage, from the repository root, after bench/gpu/bundle.sh (its .gpubundle/bundle.tar.xz is
# unpacked when present) or with perfora built here:  OUT=out/gpu bash bench/gpu/run.sh
# Environment: BUDGET_S (default 540), SIZE (2048x1536), SRC (the photo scaled to SIZE), IMG
# (an image of SIZE to use instead), STEPS, EXACT_APPS, AB_APPS, CPU_APPS, SCALING_APPS,
# SCALING_SIZES, SCALING_REPS (also scaling_ab's), SCALING_AB, TUNE_APP.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTDIR=${OUT:-$PWD/out/gpu}
mkdir -p "$OUTDIR"
SUMMARY="$OUTDIR/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
BUDGET_S=${BUDGET_S:-540}
START=$(date +%s)
left() { [ $(( $(date +%s) - START )) -lt "$BUDGET_S" ] || { say "# SKIP: over the ${BUDGET_S} s budget"; return 1; }; }
# seconds of the budget left, at most $1
upto() { local r=$(( BUDGET_S - ($(date +%s) - START) )); [ "$r" -lt "$1" ] && echo $(( r > 5 ? r : 5 )) || echo "$1"; }
APPS="blur unsharp_mask bilateral_filter bilateral_grid demosaic mosaic median artistic_blur"

# 0. the binaries: the bundle's (with its libraries), else this checkout's builds
PF=/tmp/pf
if [ -f .gpubundle/bundle.tar.xz ]; then
  mkdir -p $PF && tar -C $PF -xJf .gpubundle/bundle.tar.xz
  for b in $PF/bin/*; do  # wrappers: only our programs see the bundle's libraries
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' $PF "$b" > "$b.sh"
    chmod +x "$b.sh"
  done
  PERFORA=$PF/bin/perfora.sh TESTS=$PF/bin/test_codegen.sh SCALING=$PF/bin/bench_scaling.sh
  GPU_BENCH=$PF/bin/gpu_bench EXPORTS=$PF/export
  [ -x $PF/bin/perfora.old ] && PERFORA_OLD=$PF/bin/perfora.old.sh
  [ -x $PF/bin/bench_scaling.old ] && SCALING_OLD=$PF/bin/bench_scaling.old.sh
else
  PERFORA=build/perfora TESTS=build/tests/test_codegen SCALING=build-bench/bench/bench_scaling
  GPU_BENCH=../shared/anchors/gpu/bin/gpu_bench EXPORTS=.gpubundle/export
fi
PERFORA_OLD=${PERFORA_OLD:-} SCALING_OLD=${SCALING_OLD:-}

# the tests and benches find apps/ and data/ in the source directory they were built in (the
# bundle's: /work/main); a link there to this checkout where it is missing
SRC_DIR=${SRC_DIR:-/work/main}
if [ ! -e "$SRC_DIR/apps/blur.pf" ]; then mkdir -p "$(dirname "$SRC_DIR")" && ln -sfn "$PWD" "$SRC_DIR"; fi

# 1. the card
say "# $(date -u +%FT%TZ) bench/gpu/run.sh"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version,memory.total \
  --format=csv 2>&1 | tee -a "$SUMMARY"
say "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"

# the photo at SIZE
SIZE=${SIZE:-2048x1536}
SRC=${SRC:-data/images/train/man_made_55_820x614.png}
IMG=${IMG:-/tmp/pf_img_$SIZE.png}  # an image of that size given: used as it is
[ -f "$IMG" ] || python3 -c "
from PIL import Image
w, h = map(int, '$SIZE'.split('x'))
Image.open('$SRC').convert('RGB').resize((w, h), Image.BICUBIC).save('$IMG')" ||
  say "could not make $IMG"

# max |a - b| of two PNGs, in 8-bit levels
pngdiff() {
  python3 -c "
import numpy as np; from PIL import Image
a = np.asarray(Image.open('$1'), dtype=np.int32); b = np.asarray(Image.open('$2'), dtype=np.int32)
print(int(np.abs(a - b).max()) if a.shape == b.shape else 'shapes differ')" 2>&1
}
# median ms from a `perfora run --time` output (the kernels' on the GPU)
ms_of() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<< "$1" | head -1; }
ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
# calls per timing: fewer for the slow kernels (median, artistic blur, the bilateral grid's
# splat if it is still serial), so that no app takes more than a few seconds
calls() {
  case $1 in bilateral_grid) echo 11 ;; median|artistic_blur) echo 31 ;; *) echo "$2" ;; esac
}
step_tests() {
  say "# test_codegen codegen_gpu_run codegen_gpu_ptx"
  timeout $(upto 100) "$TESTS" codegen_gpu_run codegen_gpu_ptx > "$OUTDIR/gpu_tests.txt" 2>&1
  say "rc=$? $(grep -E 'asserts|tests ' "$OUTDIR/gpu_tests.txt" | tr -s ' ' | tr '\n' ' ')"
  say "compared: $(grep -c 'max|diff|' "$OUTDIR/gpu_tests.txt"), not run (host runtime call): $(grep -c 'not run' "$OUTDIR/gpu_tests.txt")"
  grep -E 'SKIP|on NVIDIA|FAIL|Assertion|GPU fill|GPU gaussian' "$OUTDIR/gpu_tests.txt" | head -50 | tee -a "$SUMMARY"
}

# one app's exact GPU run with perfora binary $1, tagged $2; sets gm (median ms), prints a line
gpu_exact() {
  local g
  g=$(timeout 40 $1 run apps/$app.pf --target cuda --time $(calls $app 101) --in $IMG \
      --out /tmp/gpu${2}_$app.png --emit-ptx "$OUTDIR/${app}${2}.ptx" 2>&1)
  echo "# $2"$'\n'"$g" >> "$OUTDIR/run_$app.txt"
  gm=$(ms_of "$g"); up=$(sed -n 's/.*upload \([0-9.]*\) ms.*/\1/p' <<< "$g")
  dn=$(sed -n 's/.*download \([0-9.]*\) ms.*/\1/p' <<< "$g")
  [ -n "$gm" ] || say "$app $2: $(tail -2 <<< "$g" | tr '\n' ' ')"
}
step_exact() {
  say "# $SIZE exact: perfora run --target cuda (kernels, CUDA events; old = main before this"
  say "# session's GPU changes, same step) vs --threads 2 --time 3 on the CPU"
  say "app              gpu_ms    old_ms    upload  download  cpu2_ms   cpu/gpu   max|gpu-cpu| (8-bit)"
  for app in ${EXACT_APPS:-$APPS}; do
    left || break
    : > "$OUTDIR/run_$app.txt"
    local om=- cm=- d=-
    if [ -n "$PERFORA_OLD" ] && [[ " ${AB_APPS:-blur median bilateral_grid unsharp_mask} " == *" $app "* ]]; then
      gpu_exact $PERFORA_OLD old; om=${gm:--}
    fi
    gpu_exact $PERFORA new
    if [[ " ${CPU_APPS:-blur unsharp_mask bilateral_filter bilateral_grid demosaic mosaic median} " == *" $app "* ]]; then
      c=$(timeout 60 $PERFORA run apps/$app.pf --threads 2 --time 3 --in $IMG --out /tmp/cpu_$app.png 2>&1)
      echo "# cpu"$'\n'"$c" >> "$OUTDIR/run_$app.txt"
      cm=$(ms_of "$c"); [ -n "$cm" ] || cm=-
      [ -n "$gm" ] && [ "$cm" != - ] && d=$(pngdiff /tmp/gpunew_$app.png /tmp/cpu_$app.png)
    fi
    say "$(printf '%-16s %-9s %-9s %-7s %-9s %-9s %-9s %s' $app "${gm:--}" "$om" "${up:--}" "${dn:--}" \
          "$cm" "$([ -n "$gm" ] && [ "$cm" != - ] && ratio $cm $gm || echo -)" "$d")"
  done
}

step_anchors() {
  [ -x "$GPU_BENCH" ] || { say "# SKIP anchors: no gpu_bench"; return; }
  say "# anchors: gpu_bench --reps 31 --sizes $SIZE"
  timeout $(upto 45) "$GPU_BENCH" --reps 31 --sizes "$SIZE" --csv "$OUTDIR/anchors.csv" \
    > "$OUTDIR/anchors.txt" 2> "$OUTDIR/anchors.err"
  say "gpu_bench rc=$?"
  head -60 "$OUTDIR/anchors.txt" >> "$SUMMARY"
}

sched() { printf '%b' "$2" > /tmp/pf_$1.sched; }
step_blur() {
  say "# blur $SIZE on the GPU: schedules (kernel median of 201 calls); 'rows' and 'fma' off:"
  say "# --no-gpu-rows, --strict-float"
  sched default ""
  sched fused64x64_64x4 "loop_output exec tile 64 64 gpu 64 4\nloop_temp exec at loop_output\n"
  sched fused64x32_64x8 "loop_output exec tile 64 32 gpu 64 8\nloop_temp exec at loop_output\n"
  sched fused64x128_64x4 "loop_output exec tile 64 128 gpu 64 4\nloop_temp exec at loop_output\n"
  sched fused32x32_32x8 "loop_output exec tile 32 32 gpu 32 8\nloop_temp exec at loop_output\n"
  sched fused32x64_32x4 "loop_output exec tile 32 64 gpu 32 4\nloop_temp exec at loop_output\n"
  sched fused64x128_64x8 "loop_output exec tile 64 128 gpu 64 8\nloop_temp exec at loop_output\n"
  sched fused64x64_16x16 "loop_output exec tile 64 64 gpu 16 16\nloop_temp exec at loop_output\n"
  sched fused128x64_32x8 "loop_output exec tile 128 64 gpu 32 8\nloop_temp exec at loop_output\n"
  sched fused128x32_128x4 "loop_output exec tile 128 32 gpu 128 4\nloop_temp exec at loop_output\n"
  sched root32x8 "loop_output exec tile 32 8 gpu\nloop_temp exec tile 32 8 gpu\n"
  sched root64x4 "loop_output exec tile 64 4 gpu\nloop_temp exec tile 64 4 gpu\n"
  grep -v '^#' apps/blur_paper.sched > /tmp/pf_paper_default_gpu.sched
  for s in default fused64x64_64x4 fused64x32_64x8 fused64x128_64x4 fused32x32_32x8 \
           fused32x64_32x4 fused64x128_64x8 fused64x64_16x16 fused128x64_32x8 \
           fused128x32_128x4 root32x8 root64x4 \
           paper_default_gpu; do
    for m in "" "--no-gpu-rows" "--strict-float" "--no-gpu-rows --strict-float"; do
      [ -z "$m" ] || [[ $s == fused* || $s == default ]] || continue
      left || break 2
      r=$(timeout 60 $PERFORA run apps/blur.pf --target cuda --schedule /tmp/pf_$s.sched \
          --time 201 $m --in $IMG --out /tmp/blur_$s.png 2>&1)
      say "$(printf '%-20s %-28s %s' $s "${m:-(rows, fma)}" \
             "$(grep -E 'median|perfora:' <<< "$r" | head -1)")"
    done
  done
}

declare -A PERF=( [blur]="$(grep -v '^#' apps/blur_paper.sched | tr '\n' ';')"
  [unsharp_mask]="loop_output grid 2 2 1 reconstruct store linear"
  [bilateral_filter]="loop_pixels grid 2 2 reconstruct store linear"
  [bilateral_grid]="yuv_to_rgb grid 2 2 reconstruct store linear"
  [demosaic]="loop_combine grid 2 2 reconstruct store linear"
  [mosaic]="bayer_sample grid 2 2 1 reconstruct store linear"
  [median]="loop_pixels grid 2 2 1 reconstruct store linear"
  [artistic_blur]="loop_blur grid 2 2 1 reconstruct store linear" )
step_perf() {
  say "# $SIZE perforated (the output stage on a 2x2 grid, stored linear; blur: the paper's):"
  say "# kernels of exact and variant on the GPU, same step; the variant's output vs the CPU's"
  say "app              exact_ms  perf_ms   speedup   cpu2_perf_ms  max|gpu-cpu|"
  for app in $APPS; do
    left || break
    tr ';' '\n' <<< "${PERF[$app]}" > /tmp/pf_perf_$app.sched
    n=$(calls $app 51)
    e=$(timeout 40 $PERFORA run apps/$app.pf --target cuda --time $n --in $IMG --out /tmp/gpue_$app.png 2>&1)
    g=$(timeout 40 $PERFORA run apps/$app.pf --target cuda --schedule /tmp/pf_perf_$app.sched \
        --time $n --in $IMG --out /tmp/gpup_$app.png 2>&1)
    c=$(timeout 90 $PERFORA run apps/$app.pf --schedule /tmp/pf_perf_$app.sched --threads 2 \
        --time 3 --in $IMG --out /tmp/cpup_$app.png 2>&1)
    echo "$e"$'\n'"$g"$'\n'"$c" > "$OUTDIR/perf_$app.txt"
    em=$(ms_of "$e"); gm=$(ms_of "$g"); cm=$(ms_of "$c")
    if [ -n "$gm" ] && [ -n "$cm" ] && [ -n "$em" ]; then
      say "$(printf '%-16s %-9s %-9s %-9s %-13s %s' $app $em $gm $(ratio $em $gm) $cm \
            "$(pngdiff /tmp/gpup_$app.png /tmp/cpup_$app.png)")"
    else
      say "$(printf '%-16s exact: %s | GPU: %s | CPU: %s' $app "$(tail -1 <<< "$e")" \
            "$(tail -1 <<< "$g")" "$(tail -1 <<< "$c")")"
    fi
  done
  step_masks
}

MASKS=( "blur|loop_output adaptive 2 0.4 reconstruct store nearest"
  "blur|loop_output importance 0.3 0.02 reconstruct store gaussian-sv 0.73"
  "bilateral_filter|loop_pixels adaptive 2 0.5 reconstruct store nearest"
  "bilateral_filter|loop_pixels importance 0.5 0.02 reconstruct store gaussian-sv 0.73" )
step_masks() {
  say "# $SIZE masks on the GPU (host calls between launches, docs/gpu.md §5): kernels + host"
  say "# calls (the timed region), transfers apart; the output vs the same variant on the CPU"
  local i=0
  for m in "${MASKS[@]}"; do
    left || break
    app=${m%%|*}; printf '%s\n' "${m#*|}" > /tmp/pf_mask_$i.sched
    g=$(timeout 40 $PERFORA run apps/$app.pf --target cuda --schedule /tmp/pf_mask_$i.sched \
        --time 21 --in $IMG --out /tmp/gpum_$i.png 2>&1)
    c=$(timeout 60 $PERFORA run apps/$app.pf --schedule /tmp/pf_mask_$i.sched --threads 2 \
        --time 3 --in $IMG --out /tmp/cpum_$i.png 2>&1)
    echo "$g"$'\n'"$c" > "$OUTDIR/mask_$i.txt"
    say "$(printf '%-16s %-58s gpu %s ms | cpu2 %s ms | max|gpu-cpu| %s' $app "${m#*|}" \
          "$(ms_of "$g")" "$(ms_of "$c")" "$(pngdiff /tmp/gpum_$i.png /tmp/cpum_$i.png)")"
    [ -n "$(ms_of "$g")" ] || say "  $(tail -2 <<< "$g" | tr '\n' ' ')"
    i=$((i + 1))
  done
}

declare -A GAUSS=( [blur]="loop_output grid 2 2 1 reconstruct store gaussian 1"
  [bilateral_filter]="loop_pixels grid 2 2 reconstruct store gaussian 1"
  [median]="loop_pixels grid 3 3 1 channels 2 reconstruct store gaussian 0.7" )
step_gauss() {
  say "# $SIZE Gaussian reconstruction on the GPU: kernels (median of 51 calls), PF_GPU_GAUSS"
  say "app              exact_ms  rows_ms   tiled_ms  tiled16   tiled32   rows/tiled  max|gpu-cpu| (tiled, rows)"
  for app in ${GAUSS_APPS:-blur bilateral_filter median}; do
    left || break
    tr ';' '\n' <<< "${GAUSS[$app]}" > /tmp/pf_gauss_$app.sched
    : > "$OUTDIR/gauss_$app.txt"
    c=$(timeout 90 $PERFORA run apps/$app.pf --schedule /tmp/pf_gauss_$app.sched --threads 2 \
        --time 3 --in $IMG --out /tmp/cpug_$app.png 2>&1)
    e=$(timeout 40 $PERFORA run apps/$app.pf --target cuda --time 51 --in $IMG \
        --out /tmp/gpue_$app.png 2>&1)
    declare -A ms=()
    for mode in rows tiled tiled:16 tiled:32; do
      g=$(PF_GPU_GAUSS=$mode timeout 40 $PERFORA run apps/$app.pf --target cuda \
          --schedule /tmp/pf_gauss_$app.sched --time 51 --in $IMG \
          --out "/tmp/gpug_${app}_${mode/:/_}.png" 2>&1)
      echo "# PF_GPU_GAUSS=$mode"$'\n'"$g" >> "$OUTDIR/gauss_$app.txt"
      ms[$mode]=$(ms_of "$g")
      [ -n "${ms[$mode]}" ] || say "$app $mode: $(tail -1 <<< "$g")"
    done
    echo "$c"$'\n'"$e" >> "$OUTDIR/gauss_$app.txt"
    if [ -n "${ms[rows]}" ] && [ -n "${ms[tiled]}" ]; then
      say "$(printf '%-16s %-9s %-9s %-9s %-9s %-9s %-11s %s, %s' $app "$(ms_of "$e")" \
            ${ms[rows]} ${ms[tiled]} "${ms[tiled:16]}" "${ms[tiled:32]}" \
            $(ratio ${ms[rows]} ${ms[tiled]}) "$(pngdiff /tmp/gpug_${app}_tiled.png /tmp/cpug_$app.png)" \
            "$(pngdiff /tmp/gpug_${app}_rows.png /tmp/cpug_$app.png)")"
    else
      say "$(printf '%-16s CPU: %s' $app "$(ms_of "$c") ms (2 threads)")"
    fi
  done
}

step_tune() {
  local app=${TUNE_APP:-blur}
  say "# perfora tune apps/$app.pf --target cuda (population 12 x 4 generations, 820x614)"
  rm -rf /tmp/pf_tune
  timeout $(upto 75) $PERFORA tune apps/$app.pf --target cuda --out /tmp/pf_tune --population 12 \
    --generations 4 --resolution 820x614 --jobs 1 --confirm 1 --quiet > "$OUTDIR/tune.txt" 2>&1
  say "rc=$?"; tail -12 "$OUTDIR/tune.txt" >> "$SUMMARY"
  grep -E 'invalid|generation|frontier' /tmp/pf_tune/log.txt | tail -12 >> "$SUMMARY"
  for f in /tmp/pf_tune/frontier-train.tsv /tmp/pf_tune/frontier-test.tsv; do
    [ -f $f ] && { say "$f:"; head -12 $f | cut -c1-200 | tee -a "$SUMMARY"; }
  done
  tar -C /tmp -czf "$OUTDIR/tune_run.tgz" pf_tune 2>/dev/null
}

# one bench_scaling run: BIN, a label for its file and lines (empty, old or new), APP, SIZE;
# the whole output goes to the summary, or with the label only its table rows
scaling_one() {
  local bin=$1 tag=$2 app=$3 size=$4 f="$OUTDIR/scaling_${2:+${2}_}${3}_$4.txt"
  say "# ${tag:+$tag: }bench_scaling --reps ${SCALING_REPS:-4} --app $app --size $size ($(nproc) cores)"
  timeout $(upto 120) "$bin" --reps ${SCALING_REPS:-4} --app $app --size "$size" > "$f" 2>&1
  say "rc=$?"
  if [ -n "$tag" ]; then grep -E '^\| [a-z]' "$f" >> "$SUMMARY"; else cat "$f" >> "$SUMMARY"; fi
}

step_scaling() {
  for size in ${SCALING_SIZES:-820x614 2048x1536}; do
    for app in ${SCALING_APPS:-blur bilateral_filter bilateral_grid}; do
      left || return
      scaling_one "$SCALING" "" $app $size
    done
  done
}

# the old bench_scaling (the bundle's, from an earlier commit) and the new one, one after the
# other, for each APP:SIZE of SCALING_AB: the runtime's thread pool and allocator, before and after
step_scaling_ab() {
  [ -n "$SCALING_OLD" ] || { say "# SKIP scaling_ab: no bench_scaling.old"; return; }
  for pair in ${SCALING_AB:-blur:820x614 bilateral_filter:820x614 bilateral_grid:820x614 blur:2048x1536}; do
    left || return
    scaling_one "$SCALING_OLD" old ${pair%%:*} ${pair#*:}
    left || return
    scaling_one "$SCALING" new ${pair%%:*} ${pair#*:}
  done
}

step_export() {
  say "# exported CUDA libraries vs the CPU libraries of the same variants, $SIZE"
  for d in "$EXPORTS"/*/; do
    left || break
    [ -x "$d/export_check" ] || { say "# SKIP export: no $d/export_check"; continue; }
    say "$(printf '%-12s %s' "$(basename "$d")" "$(timeout 60 "$d/export_check" ${SIZE/x/ } 51 2 2>&1 | tail -2)")"
  done
}

for step in ${STEPS:-tests exact scaling perf gauss export anchors tune blur}; do
  say ""
  left || continue
  "step_$step"
done
say ""
say "# done in $(( $(date +%s) - START )) s"
