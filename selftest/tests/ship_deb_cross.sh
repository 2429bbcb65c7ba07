#!/usr/bin/env bash
# The memtrace package cross-built for a board: dpkg-buildpackage -a ARCH
# -Pcross -B on a copy of the tree (clang --target + lld, the project's
# cross toolchain), for each of $MT_SHIP_CROSS_ARCHES (default arm64; the
# full list is arm64 armhf, about a minute each on 2 cores).  The .deb is
# for ARCH (dpkg-deb), its binary for the CPU (readelf), it depends on the
# libc6 version its GLIBC_ symbol versions need, lintian finds no error or
# warning but the explained embedded-zlib override, and the unpacked
# memtrace prints its --version under qemu-user against the cross sysroot.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
for t in dpkg-buildpackage dh lintian clang ld.lld; do
    command -v $t >/dev/null || skip "$t missing (tools/install-deps.sh)"
done
cd "$MT_TMP" || exit 1
version=$(cat "$MT_ROOT/VERSION")
bad=0
for arch in ${MT_SHIP_CROSS_ARCHES:-arm64}; do
    case $arch in
    arm64) triple=aarch64-linux-gnu cpu=aarch64 machine=AArch64 qemu=qemu-aarch64 ;;
    armhf) triple=arm-linux-gnueabihf cpu=arm machine=ARM qemu=qemu-arm ;;
    *) fail "no cross build for $arch" ;;
    esac
    [ -d /usr/$triple/lib ] || skip "libc6-dev-$arch-cross missing (tools/install-deps.sh)"
    src=$MT_TMP/$arch/memtrace-$version
    mkdir -p "$src"
    if git -C "$MT_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
        git -C "$MT_ROOT" ls-files -co --exclude-standard -z | tar -C "$MT_ROOT" --null -T - -cf - | tar -C "$src" -xf -
    else
        tar -C "$MT_ROOT" --exclude='./build' --exclude='./build-*' -cf - . | tar -C "$src" -xf -
    fi
    start=$SECONDS
    (cd "$src" && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -a "$arch" -Pcross -B) >"build-$arch.log" 2>&1 ||
        { tail -n 30 "build-$arch.log"; fail "dpkg-buildpackage -a $arch failed"; }
    deb=$MT_TMP/$arch/memtrace_${version}_$arch.deb
    [ -f "$deb" ] || fail "not built: $deb"
    [ ! -e "$MT_TMP/$arch/memtrace-fs_${version}_$arch.deb" ] || { echo "$arch: memtrace-fs was cross-built"; bad=1; }
    echo "$arch: built in $((SECONDS - start)) s"
    [ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || { echo "$arch: Architecture is $(dpkg-deb -f "$deb" Architecture)"; bad=1; }
    dpkg-deb -x "$deb" "x-$arch"
    bin=x-$arch/usr/bin/memtrace
    readelf -h "$bin" | grep -q "Machine: *$machine" || { echo "$arch: $(readelf -h "$bin" | grep Machine:)"; bad=1; }
    # The dependency against binutils' view of the binary.
    need=$(readelf -VW "$bin" | sed -n 's/.*Name: GLIBC_\([0-9.]*\) .*/\1/p' | sort -V | tail -n 1)
    deps=$(dpkg-deb -f "$deb" Depends)
    [ "$deps" = "libc6 (>= $need)" ] || { echo "$arch: Depends: $deps (GLIBC_$need needed)"; bad=1; }
    lintian --fail-on error,warning "$deb" >"lintian-$arch.log" 2>&1 ||
        { echo "$arch: lintian:"; grep -v '^running with root' "lintian-$arch.log"; bad=1; }
    v=$($qemu -L /usr/$triple "$bin" --version 2>&1)
    [ "$(head -n 1 <<<"$v")" = "memtrace $version ($cpu)" ] && grep -qx "cpus: $cpu" <<<"$v" ||
        { echo "$arch: --version under $qemu: $v"; bad=1; }
    echo "$arch: $(dpkg-deb -f "$deb" Package) $version, Depends: $deps, runs: $(head -n 1 <<<"$v")"
done
[ $bad = 0 ] || fail "cross packages (lines above)"
