#!/usr/bin/env bash
# All set-up, build, and the whole test suite; then, built again under ASan + UBSan, the suites
# of the front end, the schedules, the run directory and the search (with the fuzz replays)
# and the codegen suites of loop-bound overflow and deep programs. Ends with CTest's summary
# line of the sanitizer run.
#
# The whole suite under the sanitizers takes about ten times the Release suite (apps_median:
# 87 s -> 929 s, measured side by side on a shared 2-core machine), more than half of CI's
# 90 minutes; run it by hand before resolving an issue that touches other modules:
#   scripts/test.sh --asan-all
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DPF_BENCH=OFF
(cd build && ctest --output-on-failure -j "$(nproc)")

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPF_SANITIZE=ON -DPF_BENCH=OFF >/dev/null
cmake --build build-asan -j "$(nproc)"
cd build-asan
if [ "${1:-}" = "--asan-all" ]; then
    ctest --output-on-failure -j "$(nproc)"
else
    tests/test_codegen codegen_overflow codegen_deep
    ctest --output-on-failure -j "$(nproc)" -L '^(base|lang|perforate|search)$'
fi
