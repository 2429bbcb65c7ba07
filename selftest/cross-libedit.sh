#!/usr/bin/env bash
# libedit for a cross target (the console's line editor, linked statically so
# that the board binary stays self-contained): Debian's libedit-dev with what
# libedit.a needs (libbsd-dev, libmd-dev, and libncurses-dev for libtinfo.a),
# unpacked into OUTDIR for `make cross`.
#
#   selftest/cross-libedit.sh OUTDIR DEBIAN_ARCH      (arm64, armhf)
#
# Fetched with apt-get download and unpacked with dpkg-deb -x, as
# cross-openssl.sh does: nothing is installed.  Exits non-zero when it
# cannot; the Makefile then builds the console's plain line reader.
set -eu
out=$1 arch=$2
[ -e "$out/.ok" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt-get download runs as _apt where it can
pkgs=(libedit-dev libbsd-dev libmd-dev libncurses-dev)
(cd "$tmp" && apt-get download -q "${pkgs[@]/%/:$arch}") >/dev/null 2>&1 || {
    echo "cross-libedit: cannot download ${pkgs[*]} for $arch" >&2; exit 1; }
mkdir -p "$out"
for p in "${pkgs[@]}"; do
    dpkg-deb -x "$tmp/${p}"_*_"$arch".deb "$out"
done
for a in libedit libbsd libmd libtinfo; do
    ls "$out"/usr/lib/*/"$a.a" >/dev/null
done
touch "$out/.ok"
