#!/usr/bin/env bash
# All set-up, build, and the whole test suite; ends with CTest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DPF_BENCH=OFF
cd build && ctest --output-on-failure -j "$(nproc)"
