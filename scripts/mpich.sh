#!/usr/bin/env bash
# Builds perfora against MPICH in build-mpich/ and runs the MPI tests with MPICH's launcher:
# the search over MPI works with Open MPI (the default build) and MPICH alike. Debian installs
# both side by side (libmpich-dev, mpich; scripts/setup.sh) with Open MPI as the default
# mpicc/mpirun, so this build takes MPICH from its pkg-config module and uses mpirun.mpich.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPF_BENCH=OFF -DPF_MPI=mpich \
  >/dev/null
cmake --build build-mpich -j "$(nproc)" --target perfora test_cluster
libs=$(ldd build-mpich/perfora)
if ! grep -q libmpich <<<"$libs"; then
  echo "mpich.sh: build-mpich/perfora does not link libmpich" >&2
  exit 1
fi
cd build-mpich && ctest --output-on-failure -L mpi
