#!/usr/bin/env bash
# Fetches one Debian package for the image benchmark builder and unpacks it, without root:
#   fetch.sh PACKAGE WORKDIR [PACKAGES_DIR]
# Gets PACKAGE's .deb (from PACKAGES_DIR when it holds exactly one PACKAGE_*.deb, else with
# `apt-get download`, saving a copy into PACKAGES_DIR when one is given), checks that it is the
# package asked for and that its SHA256 is the one apt's index lists for that exact version
# (apt-cache show PACKAGE=VERSION), and unpacks it with `dpkg-deb -x` into WORKDIR/root.
# Writes WORKDIR/fetch.info: "version V", "deb_sha256 H", "checked apt-cache|none" (none: apt's
# index does not know that version, e.g. an older .deb given offline; the builder's per-file
# sha256 check still holds the build to the expected inputs). Fails with a message on stderr.
set -euo pipefail

die() { echo "fetch.sh: $*" >&2; exit 1; }

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: fetch.sh PACKAGE WORKDIR [PACKAGES_DIR]"
pkg=$1 work=$2 cache=${3:-}
case "$pkg" in
  ''|*[!a-z0-9.+-]*) die "'$pkg' is not a Debian package name" ;;
esac
for tool in apt-get apt-cache dpkg-deb sha256sum; do
  command -v "$tool" >/dev/null || die "needs $tool (Debian's apt and dpkg)"
done
mkdir -p "$work/deb"

# One cached .deb of this package, or nothing.
cached_deb() {
  [ -n "$cache" ] && [ -d "$cache" ] || return 0
  local found=()
  shopt -s nullglob
  found=("$cache/${pkg}"_*.deb)
  shopt -u nullglob
  [ ${#found[@]} -le 1 ] || die "$cache holds ${#found[@]} .debs of $pkg; keep one"
  [ ${#found[@]} -eq 0 ] || echo "${found[0]}"
}

deb=$(cached_deb)
if [ -n "$deb" ]; then
  cp "$deb" "$work/deb/"
else
  # apt-get download drops privileges to _apt where it can; the directory must be writable.
  if ! (cd "$work/deb" && apt-get download -q "$pkg") >&2; then
    die "apt-get download $pkg failed (no network to Debian's archive, or no such package;" \
        "run 'apt-get update' first if the package lists are missing)"
  fi
fi
shopt -s nullglob
debs=("$work/deb/${pkg}"_*.deb)
shopt -u nullglob
[ ${#debs[@]} -eq 1 ] || die "expected one ${pkg}_*.deb after the download, found ${#debs[@]}"
deb=${debs[0]}
if [ -n "$cache" ] && [ -z "$(cached_deb)" ]; then
  mkdir -p "$cache" && cp "$deb" "$cache/"
fi

name=$(dpkg-deb -f "$deb" Package) || die "$deb is not a Debian package"
[ "$name" = "$pkg" ] || die "$deb is package '$name', not '$pkg'"
version=$(dpkg-deb -f "$deb" Version)
sha=$(sha256sum "$deb" | cut -d' ' -f1)
want=$(apt-cache show "$pkg=$version" 2>/dev/null | awk '/^SHA256:/ { print $2; exit }' || true)
checked=none
if [ -n "$want" ]; then
  [ "$sha" = "$want" ] || die "$pkg $version: the .deb's SHA256 is $sha but apt's index says $want"
  checked=apt-cache
else
  echo "fetch.sh: note: apt's index does not list $pkg $version; SHA256 not checked" >&2
fi

rm -rf "$work/root"
dpkg-deb -x "$deb" "$work/root" || die "dpkg-deb -x failed on $deb"
printf 'version %s\ndeb_sha256 %s\nchecked %s\n' "$version" "$sha" "$checked" >"$work/fetch.info"
