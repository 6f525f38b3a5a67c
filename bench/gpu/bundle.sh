#!/bin/bash
# bench/gpu/bundle.sh — packs what bench/gpu/run.sh needs on a GPU machine that has no build
# tools for perfora (no LLVM 16, Z3, libpng... there): the stripped perfora, test_codegen and
# bench_scaling, the shared libraries they load (all but the C library's), and the anchors'
# gpu_bench, into DIR/bundle.tar.xz (about 25 MB). run.sh unpacks it when it finds it. With
# OLD=PATH (perfora) and OLD_SCALING=PATH (bench_scaling) built from an earlier commit travel
# too, as perfora.old and bench_scaling.old (run.sh's A/B steps); bench/gpu/export_build.sh's
# libraries and clients, as export/.
#
# Usage, from the repository root after building build/ (Release) and build-bench/
# (-DPF_BENCH=ON):  bash bench/gpu/bundle.sh [DIR]   (default .gpubundle, which git ignores
# through .git/info/exclude: add "/.gpubundle/" there)
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-.gpubundle}
BINS="build/perfora build/tests/test_codegen build-bench/bench/bench_scaling"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$DIR"
for b in $BINS; do
  [ -x "$b" ] || { echo "missing $b: build it first"; exit 1; }
  strip -o "$stage/bin/$(basename "$b")" "$b"
done
for old in ${OLD:+"$OLD"} ${OLD_SCALING:+"$OLD_SCALING"}; do
  strip -o "$stage/bin/$(basename "$old" | cut -d. -f1).old" "$old"
  BINS="$BINS $old"  # its libraries too
done
bash bench/gpu/export_build.sh "$stage" > /dev/null
for cand in ../shared/anchors/gpu/bin/gpu_bench shared/anchors/gpu/bin/gpu_bench; do
  [ -x "$cand" ] && { cp "$cand" "$stage/bin/"; break; }
done
# every library the binaries load, except the C library's own (the GPU machine's are newer)
for b in $BINS; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
# one xz block with a dictionary larger than a binary: the binaries share most of their code
# (LLVM), which a dictionary that large stores once (50 MB with xz's default, 23 with this)
tar -C "$stage" -cf - bin lib export | xz -T2 --lzma2=preset=6,dict=192MiB > "$DIR/bundle.tar.xz"
ls -la "$DIR/bundle.tar.xz"
