#!/usr/bin/env bash
# Exported libraries as a user builds them: perfora export writes each library, it is built
# static and shared with CMake and with make, a plain C client (export_client.c) is linked
# against it, and its output on a test photo must equal the JIT's (export_ref) within 1e-5.
# Cases: the paper's blur variant (apps/blur_paper.sched; every build, the C source alone too,
# the error codes, ldd/nm) and one perforated schedule of every app (tests/export/schedules/,
# a make build at -O1: the object is what runs; see docs/export.md), and a CUDA library of
# blur (cuda: it builds and links without CUDA; without a driver a call returns the no-device
# error; its plans and PTX are checked by tests/results/test_export_cuda.c).
#   test_export_build.sh PERFORA EXPORT_REF SOURCE_DIR WORK_DIR [paper|apps|cuda|APP...]
# (default: paper and apps; CTest runs the two as separate tests, side by side)
set -euo pipefail
perfora=$1 ref=$2 src=$3 work=$4
shift 4
image=$src/data/images/test/man_made_opencv-notebook_256x192.png
cc=${CC:-cc}
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# client LIBDIR NAME LIB -> builds the client against LIB (a .a or .so) into LIBDIR/client
client() {
  local dir=$1 name=$2 lib=$3
  local out=$1/client-$(basename "$(dirname "$3")")-$(basename "$3")
  "$cc" -std=c11 -O2 -I"$dir/lib" "-DEXPORT_HEADER=\"$name.h\"" "-DEXPORT_FN=$name" \
    -o "$out" "$src/tests/export/export_client.c" "$lib" -Wl,-rpath,"$(dirname "$lib")" \
    -lm -pthread
  echo "$out"
}

# compare CASEDIR CLIENT THREADS [--errors] [--want-object|--want-source]
compare() {
  local dir=$1 bin=$2 threads=$3 want=$5 line
  line=$("$bin" "$dir/in.raw" "$dir/ref.raw" "$threads" "$4") ||
    fail "$bin (threads $threads): ${line:-no output}"
  echo "  $(basename "$bin") threads $threads: $line"
  case $want in
    --want-object) [[ $line == *"uses_object 1" ]] || fail "$bin ran the C source, not the object" ;;
    --want-source) [[ $line == *"uses_object 0" ]] || fail "$bin ran the object" ;;
  esac
}

# The shared library depends on libc, libm and pthreads only, and exports the three
# functions of NAME.h; the static one needs nothing of LLVM or Z3.
check_deps() {
  local so=$1 a=$2 name=$3
  if ldd "$so" | grep -Ei 'llvm|z3|perfora|pf_'; then fail "$so depends on the above"; fi
  local exported
  exported=$(nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')
  [[ $exported == "$name ${name}_error_string ${name}_uses_object " ]] ||
    fail "$so exports: $exported"
  if nm -u "$a" | grep -E ' (LLVM|Z3_|pf_[a-z]+_)' | grep -v ' pf_rt_\| pf_srt_'; then
    fail "$a needs the symbols above"
  fi
  echo "  ldd/nm: $(ldd "$so" | awk '{ print $1 }' | tr '\n' ' ')"
}

export_case() {  # NAME APP SCHEDULE -> WORK/NAME with in.raw, ref.raw, lib/
  local name=$1 app=$2 sched=$3 dir=$work/$1
  mkdir -p "$dir"
  "$ref" "$app" "$sched" "$image" "$dir"
  "$perfora" export "$app" --schedule "$sched" --out "$dir/lib" --name "$name" --quiet >/dev/null
  [[ -f $dir/lib/${name}_aot.o ]] || fail "$name: no object"
}

paper_case() {
  local name=ex_blur_paper dir=$work/ex_blur_paper
  echo "== $name: apps/blur.pf with apps/blur_paper.sched"
  export_case $name "$src/apps/blur.pf" "$src/apps/blur_paper.sched"
  cmake -S "$dir/lib" -B "$dir/cm-static" >/dev/null
  cmake --build "$dir/cm-static" >/dev/null
  cmake -S "$dir/lib" -B "$dir/cm-shared" -DBUILD_SHARED_LIBS=ON >/dev/null
  cmake --build "$dir/cm-shared" >/dev/null
  make -s -C "$dir/lib" BUILD="$dir/mk" >/dev/null
  make -s -C "$dir/lib" BUILD="$dir/mk-c" AOT=0 >/dev/null
  compare "$dir" "$(client "$dir" $name "$dir/cm-static/lib$name.a")" 1 --errors --want-object
  compare "$dir" "$(client "$dir" $name "$dir/cm-shared/lib$name.so")" 2 --errors --want-object
  compare "$dir" "$(client "$dir" $name "$dir/mk/lib$name.a")" 2 --errors --want-object
  compare "$dir" "$(client "$dir" $name "$dir/mk/lib$name.so")" 1 --errors --want-object
  compare "$dir" "$(client "$dir" $name "$dir/mk-c/lib$name.a")" 2 --errors --want-source
  "$cc" -std=c11 -O2 -o "$dir/dlclose" "$src/tests/export/export_dlclose.c" -ldl
  "$dir/dlclose" "$dir/mk/lib$name.so" $name "$dir/cm-shared/lib$name.so" $name ||
    fail "loading and unloading lib$name.so"
  check_deps "$dir/cm-shared/lib$name.so" "$dir/cm-static/lib$name.a" $name
  check_deps "$dir/mk/lib$name.so" "$dir/mk/lib$name.a" $name
  # Installed, then compiled and linked by what pkg-config says (the shared library).
  make -s -C "$dir/lib" BUILD="$dir/mk" PREFIX="$dir/prefix" install >/dev/null
  local bin=$dir/client-pkgconfig flags
  flags=$(PKG_CONFIG_PATH=$dir/prefix/lib/pkgconfig pkg-config --cflags --libs $name)
  # shellcheck disable=SC2086
  "$cc" -std=c11 -O2 "-DEXPORT_HEADER=\"$name.h\"" "-DEXPORT_FN=$name" -o "$bin" \
    "$src/tests/export/export_client.c" $flags -Wl,-rpath,"$dir/prefix/lib" -lm
  compare "$dir" "$bin" 2 --no-errors --want-object
}

app_case() {
  local app=$1 name=ex_$1 dir=$work/ex_$1
  echo "== $name: apps/$app.pf with tests/export/schedules/$app.sched"
  export_case "$name" "$src/apps/$app.pf" "$src/tests/export/schedules/$app.sched"
  make -s -C "$dir/lib" BUILD="$dir/mk" CFLAGS=-O1 >/dev/null
  compare "$dir" "$(client "$dir" "$name" "$dir/mk/lib$name.a")" 2 --no-errors --want-object
  compare "$dir" "$(client "$dir" "$name" "$dir/mk/lib$name.so")" 1 --no-errors --want-object
}

# The CUDA library of blur: CMake (static, shared) and make builds, installed and linked by what
# pkg-config says; no link-time dependency on CUDA; a call on a machine without a CUDA driver
# gives the no-device error with the driver's words (with a GPU: it runs, rc 0).
cuda_case() {
  local name=ex_blur_cuda dir=$work/ex_blur_cuda lib line flags
  echo "== $name: apps/blur.pf --target cuda"
  mkdir -p "$dir"
  "$perfora" export "$src/apps/blur.pf" --target cuda --out "$dir/lib" --name $name --quiet \
    >/dev/null
  cmake -S "$dir/lib" -B "$dir/cm-static" >/dev/null
  cmake --build "$dir/cm-static" >/dev/null
  cmake -S "$dir/lib" -B "$dir/cm-shared" -DBUILD_SHARED_LIBS=ON >/dev/null
  cmake --build "$dir/cm-shared" >/dev/null
  make -s -C "$dir/lib" BUILD="$dir/mk" PREFIX="$dir/prefix" install >/dev/null
  if ldd "$dir/cm-shared/lib$name.so" | grep -Ei 'cuda|llvm|z3'; then
    fail "lib$name.so links the above"
  fi
  flags=$(PKG_CONFIG_PATH=$dir/prefix/lib/pkgconfig pkg-config --cflags --libs --static $name)
  for lib in "$dir/cm-static/lib$name.a" "$dir/cm-shared/lib$name.so" pkg-config; do
    local bin=$dir/client-$(basename "$(dirname "$lib")")-$(basename "$lib")
    if [[ $lib == pkg-config ]]; then
      # shellcheck disable=SC2086
      "$cc" -std=c11 -O2 -DCALL_ONLY "-DEXPORT_HEADER=\"$name.h\"" "-DEXPORT_FN=$name" \
        -o "$bin" "$src/tests/export/cuda_client.c" $flags -Wl,-rpath,"$dir/prefix/lib"
    else
      "$cc" -std=c11 -O2 -DCALL_ONLY -I"$dir/lib" "-DEXPORT_HEADER=\"$name.h\"" \
        "-DEXPORT_FN=$name" -o "$bin" "$src/tests/export/cuda_client.c" "$lib" \
        -Wl,-rpath,"$(dirname "$lib")" -ldl -pthread -lm
    fi
    line=$("$bin" call 64 48 | tr '\n' ' ')
    echo "  $(basename "$bin"): $line"
    [[ $line == "rc 0 "* || $line == "rc 5 string no CUDA driver or no CUDA device"* ]] ||
      fail "$bin: $line"
    [[ $line == *"device-null rc 1 "* ]] || fail "$bin: a NULL device address was not refused"
  done
}

cases=()
for c in "${@:-paper apps}"; do
  for w in $c; do
    if [[ $w == apps ]]; then
      for s in "$src"/tests/export/schedules/*.sched; do cases+=("$(basename "$s" .sched)"); done
    else
      cases+=("$w")
    fi
  done
done
for c in "${cases[@]}"; do
  if [[ $c == paper ]]; then paper_case; elif [[ $c == cuda ]]; then cuda_case; else app_case "$c"; fi
done
echo "PASS: ${#cases[@]} exports"
