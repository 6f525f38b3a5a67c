#!/usr/bin/env bash
# Fuzzes perfora with libFuzzer (clang-16, ASan + UBSan): the front end (default), or with
# --target jit|rundir the whole-library targets built by CMake (PF_FUZZ=ON in build-fuzzlib/;
# their corpora and regressions are fuzz/TARGET/corpus and fuzz/TARGET/regressions).
#
#   fuzz/run.sh --target T [SECONDS [JOBS]]  the same for target T (jit or rundir), with -fork
#                                  (a finding is kept and the run goes on; the CPU time printed
#                                  misses most of the workers')
#   fuzz/run.sh --target T --merge     minimize fuzz/T/corpus in place (edges only)
#   fuzz/run.sh --target T --replay    run every file of fuzz/T/regressions and fuzz/T/corpus once
#   fuzz/run.sh --target T --cpu SECONDS  one process (no -fork), stopped once it has used
#                                  SECONDS of CPU time; a finding ends it (the campaign record's
#                                  runs; log in build-fuzz/campaign-T.log)
#   fuzz/run.sh [SECONDS [JOBS]]   build, then fuzz for SECONDS (default 600) with JOBS workers
#   fuzz/run.sh --seed             rebuild fuzz/corpus from the seeds (docs, apps, error files)
#   fuzz/run.sh --merge [DIR...]   minimize fuzz/corpus in place (-merge=1), adding what the DIRs
#                                  (e.g. gen_programs.py output) bring
#   fuzz/run.sh --replay [DIR...]  run every file of the DIRs (default: fuzz/corpus and
#                                  fuzz/regressions) once, e.g. programs of gen_programs.py
#
# Crashes land in build-fuzz/artifacts/; copy each into fuzz/regressions/ (a CUnit test replays
# them) once it is fixed. Logs of the workers: build-fuzz/fuzz-*.log.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build-fuzz
BIN=$OUT/fuzz_frontend
mkdir -p "$OUT/artifacts"

build() {
    local srcs=()
    for f in lang/*.c; do
        case "$f" in lang/interp*) continue ;; esac
        srcs+=("$f")
    done
    clang-16 -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -Wall -Wextra -Werror \
        fuzz/fuzz_frontend.c "${srcs[@]}" base/arena.c base/error.c base/strbuf.c \
        base/fileio.c -lm -o "$BIN"
}

seed() {
    local dir=$OUT/seeds
    rm -rf "$dir"
    mkdir -p "$dir"
    # Code blocks of the language reference, apps, error files, earlier regressions.
    awk '/^```/{if(inb){close(f);inb=0}else{n++;f=sprintf("'"$dir"'/doc%03d.pf",n);inb=1};next}
         inb{print > f}' docs/language.md
    cp apps/*.pf tests/lang/errors/*.pf "$dir"/ 2>/dev/null || true
    cp fuzz/regressions/* "$dir"/ 2>/dev/null || true
    mkdir -p fuzz/corpus
    "$BIN" -merge=1 -max_len=8192 fuzz/corpus "$dir"
}

# The whole-library targets: fuzz_jit (JIT against the interpreter on generated programs and
# schedules) and fuzz_rundir (the run directory's reader).
lib_target() {
    local t=$1 secs=${2:-600} jobs=${3:-1} dir=fuzz/$1
    CC=clang-16 cmake -S . -B build-fuzzlib -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPF_SANITIZE=ON \
        -DPF_FUZZ=ON -DPF_BENCH=OFF >/dev/null
    cmake --build build-fuzzlib -j "$(nproc)" --target "fuzz_$t" >/dev/null
    mkdir -p "$dir/corpus" "$dir/regressions" "$OUT/artifacts-$t"
    # the run files of fuzz/rundir/corpus are 5-10 kB; a choice stream of fuzz_jit needs less
    local dict=() max_len=1024
    if [ -f "fuzz/$t.dict" ]; then dict=(-dict="fuzz/$t.dict"); fi
    if [ "$t" = rundir ]; then max_len=16384; fi
    case "${4:-}" in
    --cpu) cpu_campaign "$t" "$secs" -max_len="$max_len" "${dict[@]}"
           return ;;
    --replay) LSAN_OPTIONS=suppressions=fuzz/lsan.supp "build-fuzzlib/fuzz/fuzz_$t" -runs=0 \
                  -timeout=120 -rss_limit_mb=4096 "$dir/regressions" "$dir/corpus"
              return ;;
    --merge)  # edges only (no hit-count buckets), so the kept corpus stays a few hundred files
        rm -rf "$OUT/merged-$t"
        mkdir -p "$OUT/merged-$t"
        LSAN_OPTIONS=suppressions=fuzz/lsan.supp "build-fuzzlib/fuzz/fuzz_$t" -merge=1 \
            -use_counters=0 -max_len="$max_len" -timeout=600 -rss_limit_mb=4096 \
            "$OUT/merged-$t" "$dir/corpus"
        rm -f "$dir/corpus"/*
        cp "$OUT/merged-$t"/* "$dir/corpus/"
        return ;;
    esac
    # -len_control=0: inputs are choice streams, a longer one is a larger program from the
    # start. -timeout counts wall-clock seconds: under nice on a busy machine an input that
    # needs 6 s of CPU (a 300-stage chain under ASan) waited minutes.
    # -fork: a finding is kept in artifacts-T/ and the campaign goes on (count them there).
    LSAN_OPTIONS=suppressions=fuzz/lsan.supp /usr/bin/time -f "fuzz_$t: %U s user + %S s sys" \
        "build-fuzzlib/fuzz/fuzz_$t" -max_total_time="$secs" -fork="$jobs" -ignore_crashes=1 \
        -ignore_timeouts=1 -ignore_ooms=1 -max_len="$max_len" -len_control=0 -timeout=3600 \
        -rss_limit_mb=4096 -artifact_prefix="$OUT/artifacts-$t/" -print_final_stats=1 \
        "${dict[@]}" "$dir/corpus"
    # libFuzzer also keeps inputs slower than 10 s of wall time (slow-unit-*): on a loaded
    # machine those are the largest generated programs, not failures; listed apart.
    ls "$OUT/artifacts-$t" | grep -v '^slow-unit-' | sed "s/^/fuzz_$t finding: /" || true
    ls "$OUT/artifacts-$t" | grep '^slow-unit-' | sed "s/^/fuzz_$t slow (not a failure): /" || true
}

# CPU seconds (user + system, all threads) of process $1 so far.
cpu_of() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) / hz) }' \
        "/proc/$1/stat" 2>/dev/null || echo 0
}

# One fuzzing process, without -fork, so that /usr/bin/time counts all of its CPU time; it is
# interrupted (SIGINT: libFuzzer prints its final stats) once it has used $2 CPU seconds.
cpu_campaign() {
    local t=$1 limit=$2 log=$OUT/campaign-$1.log
    shift 2
    LSAN_OPTIONS=suppressions=fuzz/lsan.supp /usr/bin/time -v "build-fuzzlib/fuzz/fuzz_$t" \
        -max_total_time=864000 -len_control=0 -timeout=3600 -rss_limit_mb=4096 \
        -artifact_prefix="$OUT/artifacts-$t/" -print_final_stats=1 "$@" "fuzz/$t/corpus" \
        >"$log" 2>&1 &
    local tpid=$! pid=""
    while [ -z "$pid" ] && kill -0 "$tpid" 2>/dev/null; do
        sleep 1
        pid=$(pgrep -P "$tpid" || true)
    done
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
        if [ "$(cpu_of "$pid")" -ge "$limit" ]; then
            kill -INT "$pid"
            break
        fi
        sleep 5
    done
    wait "$tpid" || true
    grep -E 'stat::|User time|System time|Maximum resident|Elapsed' "$log" | sed "s/^/fuzz_$t: /"
    # libFuzzer also keeps inputs slower than 10 s of wall time (slow-unit-*): on a loaded
    # machine those are the largest generated programs, not failures; listed apart.
    ls "$OUT/artifacts-$t" | grep -v '^slow-unit-' | sed "s/^/fuzz_$t finding: /" || true
    ls "$OUT/artifacts-$t" | grep '^slow-unit-' | sed "s/^/fuzz_$t slow (not a failure): /" || true
}

if [ "${1:-}" = "--target" ]; then
    mkdir -p "$OUT"
    case "${3:-}" in
    --cpu) lib_target "$2" "${4:-1800}" 1 --cpu ;;
    --merge | --replay) lib_target "$2" 0 1 "$3" ;;
    *) lib_target "$2" "${3:-600}" "${4:-1}" "${5:-}" ;;
    esac
    exit 0
fi

build
case "${1:-}" in
--seed) seed ;;
--merge)
    # Edges only (no hit-count buckets), so the kept corpus stays a few hundred small files.
    shift
    rm -rf "$OUT/merged"
    mkdir -p "$OUT/merged"
    "$BIN" -merge=1 -use_counters=0 -max_len=4096 "$OUT/merged" fuzz/corpus "$@"
    rm -f fuzz/corpus/*
    cp "$OUT/merged"/* fuzz/corpus/
    ;;
--replay)
    shift
    if [ $# -eq 0 ]; then set -- fuzz/corpus fuzz/regressions; fi
    "$BIN" -runs=0 "$@"
    ;;
*)
    secs=${1:-600}
    jobs=${2:-1}
    "$BIN" -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 -dict=fuzz/pf.dict -artifact_prefix="$OUT/artifacts/" \
        -print_final_stats=1 fuzz/corpus
    mv fuzz-*.log "$OUT"/ 2>/dev/null || true
    ;;
esac
