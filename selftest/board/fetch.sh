#!/usr/bin/env bash
# Fetches what a board (a Debian arm64, armhf or i386 system booted in
# qemu-system)
# is made of, with apt only: the kernel, busybox, the real libc (valgrind
# needs the ld.so whose build-id matches libc6-dbg), libstdc++, valgrind,
# gdbserver, three allocators (jemalloc, tcmalloc, mimalloc) and GLib of
# that architecture.  Nothing is installed into the host's
# root: each package is downloaded with `apt-get download` and unpacked with
# `dpkg-deb -x` into CACHE/root.
#
#   selftest/board/fetch.sh ARCH CACHE      ARCH: aarch64|arm|i386 (or arm64|armhf)
#
# Needs the foreign architecture added (`dpkg --add-architecture`) and apt's
# lists updated: tools/install-deps.sh does both.  Exits non-zero with one
# line naming what is missing.  Runs again cheaply: an unchanged package set
# is not fetched twice.
set -eu
case "${1:-}" in
    aarch64|arm64) darch=arm64 flavour=arm64 ;;
    arm|armhf) darch=armhf flavour=armmp ;;
    # i386: the PAE kernel (NX pages, as the tracer's x86 hosts have them)
    i386) darch=i386 flavour=686-pae ;;
    *) echo "usage: $0 aarch64|arm|i386 CACHE" >&2; exit 2 ;;
esac
cache=${2:?usage: $0 ARCH CACHE}
mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)

die() { echo "board fetch ($darch): $*" >&2; exit 1; }
dpkg --print-foreign-architectures | grep -qx "$darch" ||
    die "architecture $darch is not added (tools/install-deps.sh does: dpkg --add-architecture $darch)"

# The kernel metapackage names the versioned image package.
kpkg=$(apt-cache depends "linux-image-$flavour:$darch" 2>/dev/null |
       sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*/\1/p' | head -n 1)
[ -n "$kpkg" ] || die "no linux-image-$flavour:$darch in apt's lists (apt-get update?)"
pkgs=("$kpkg" busybox-static libc6 libgcc-s1 gcc-12-base libstdc++6 libc6-dbg valgrind gdbserver)
# i386: the tracer (make ARCH=i386, gcc -m32) links zlib as a shared library,
# as on every Debian i386 system (zlib1g is required there).
[ "$darch" = i386 ] && pkgs+=(zlib1g)
# The allocators of the alloc phase (ARM boards: jemalloc, tcmalloc,
# mimalloc): the runtime for the guest, the -dev packages (headers, the
# static libraries) for the cross builds on the host.
[ "$darch" = i386 ] || pkgs+=(libjemalloc2 libjemalloc-dev libtcmalloc-minimal4 libgoogle-perftools4
                             libgoogle-perftools-dev libmimalloc2.0 libmimalloc-dev)
# GLib for the heaps phase's GLib program (ARM boards; heaps_glib.sh on
# x86_64): libglib and libgobject with what they link (libffi, pcre2) for
# the guest, the -dev packages (headers, glibconfig.h, the static libraries
# arm64 links) for the cross build.
[ "$darch" = i386 ] || pkgs+=(libglib2.0-0 libglib2.0-dev libffi8 libffi-dev libpcre2-8-0 libpcre2-dev)

# What would be fetched: package=version for each, the stamp of the set.
# One apt-cache call for all (each call reads every list).
policy=$(apt-cache policy "${pkgs[@]/%/:$darch}" 2>/dev/null)
want=()
for p in "${pkgs[@]}"; do
    v=$(awk -v p="$p:$darch:" '/^[^ ]/ {cur = $1} cur == p && $1 == "Candidate:" {print $2; exit}' <<<"$policy")
    [ -n "$v" ] && [ "$v" != "(none)" ] || die "package $p:$darch is not available from apt"
    want+=("$p:$darch=$v")
done
stamp="$cache/root/.fetched"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${want[*]}" ]; then
    exit 0
fi

rm -rf "$cache/root" "$cache/debs"
mkdir -p "$cache/root" "$cache/debs"
sandbox=(); [ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
( cd "$cache/debs" && apt-get download -q=2 "${sandbox[@]}" "${want[@]}" ) || die "apt-get download failed for: ${want[*]}"
for deb in "$cache"/debs/*.deb; do
    dpkg-deb -x "$deb" "$cache/root" || die "cannot unpack $deb"
done
# Debian 12 keeps /lib etc. under /usr (merged /usr): the packages carry the
# /usr paths; the kernel's modules stay in /lib/modules.
kver=${kpkg#linux-image-}
ls "$cache"/root/boot/vmlinuz-"$kver" >/dev/null 2>&1 || die "no /boot/vmlinuz-$kver in $kpkg"
echo "$kver" > "$cache/root/.kernel"
echo "${want[*]}" > "$stamp"
echo "board fetch ($darch): ${#want[@]} packages in $cache/root"
