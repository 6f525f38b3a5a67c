#!/usr/bin/env bash
# Installs everything perfora needs from Debian 12 packages. Idempotent: installs only what is
# missing, runs apt-get update at most once, uses sudo only when not root.
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --bench    also OpenCV and Halide 14 (the bench/ comparators)
#   scripts/setup.sh --fuzz     also clang 16 and libFuzzer (the front-end fuzzer)
set -euo pipefail

# hershey-fonts-data: the report's PNG plots draw text with its stroke font (built in);
# libxml2-dev, chromium and fonts-dejavu-core: the report's tests parse its pages and render
# them headless (in the font the page asks for first).
pkgs=(build-essential cmake pkg-config git llvm-16-dev libz3-dev libpng-dev
      libturbojpeg0-dev libjpeg62-turbo-dev libopenmpi-dev openmpi-bin libmpich-dev mpich
      libcunit1-dev libjson-c-dev zlib1g-dev libzstd-dev bzip2 hershey-fonts-data libxml2-dev
      chromium fonts-dejavu-core)
for arg in "$@"; do
  case "$arg" in
    --bench) pkgs+=(libopencv-dev libhalide14-0-dev) ;;
    --fuzz) pkgs+=(clang-16 libfuzzer-16-dev libclang-rt-16-dev) ;;
    *) echo "setup.sh: unknown option $arg (use --bench, --fuzz)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all ${#pkgs[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup.sh: not root and no sudo" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup.sh: installing ${missing[*]}"
$sudo apt-get update -q
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
