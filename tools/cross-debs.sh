#!/usr/bin/env bash
# Debian -dev packages of a cross target (headers and static libraries),
# unpacked into OUTDIR for `make cross`; used by cross-openssl.sh and
# cross-libedit.sh.
#
#   tools/cross-debs.sh OUTDIR DEBIAN_ARCH "LIB..." PKG...
#
# The packages are fetched with apt-get download and unpacked with dpkg-deb
# -x: nothing is installed, so no foreign libc6-dev has to match the host's
# (see cross-zlib.sh for why that matters).  Exits non-zero when a package
# cannot be fetched or a libLIB.a of the list is not there; the Makefile then
# builds without that feature.
set -eu
out=$1 arch=$2 libs=$3
shift 3
[ -e "$out/.ok" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt-get download runs as _apt where it can
(cd "$tmp" && apt-get download -q "${@/%/:$arch}") >/dev/null 2>&1 || {
    echo "$(basename "$0"): cannot download $* for $arch" >&2; exit 1; }
mkdir -p "$out"
for p in "$@"; do
    dpkg-deb -x "$tmp/${p}"_*_"$arch".deb "$out"
done
for l in $libs; do
    ls "$out"/usr/lib/*/"lib$l.a" >/dev/null
done
touch "$out/.ok"
