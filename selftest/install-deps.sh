#!/usr/bin/env bash
# Installs what memtrace needs to build and test, on Debian 12, when missing.
# Installing avahi-daemon must not start it in the root namespace (tests run
# their own inside a network namespace): a policy-rc.d forbids service starts
# during the install, and any avahi-daemon that the install still started is
# stopped (only one that was not running before).
set -eu
PKGS=(build-essential gcc g++ make libelf-dev zlib1g-dev libavahi-client-dev libssl-dev
      avahi-daemon avahi-utils dbus iproute2 gdb valgrind binutils elfutils
      libc6-dbg musl-tools gcc-multilib g++-multilib clang libclang-rt-14-dev
      lld llvm heaptrack tmux
      cppcheck clang-tidy python3
      liblsan0   # LeakSanitizer (gcc -fsanitize=leak): leak_corpus.sh's oracle
      # the C++ demangler (libiberty, as c++filt): see target/symbols/demangle.c
      libiberty-dev
      # memtrace-fs's debuginfod endpoint (libmicrohttpd), and its test oracle
      libmicrohttpd-dev debuginfod curl
      # memtrace-fs --upstream: fetches from debuginfod servers (host only)
      libdebuginfod-dev
      # arm/aarch64 cross builds with clang + lld (gcc-<triple> would remove
      # gcc-multilib), target zlib from binutils-source, qemu + gdb for the
      # snapshot tests: see selftest/cross-zlib.sh and the Makefile
      libc6-dev-arm64-cross libc6-dev-armhf-cross libgcc-12-dev-arm64-cross
      libgcc-12-dev-armhf-cross binutils-source qemu-user gdb-multiarch
      # packaging and shipping (debian/, dist/, selftest/tests/ship_*.sh):
      # binutils-<triple> strip the cross-built packages (no conflict with
      # gcc-multilib, unlike gcc-<triple>)
      dpkg-dev debhelper lintian fakeroot mandoc groff man-db bash-completion
      systemd strace libxml2-utils
      # the HTML report's browser oracle (report_html_chromium.sh)
      chromium
      binutils-aarch64-linux-gnu binutils-arm-linux-gnueabihf
      # boards (selftest/board): arm64 and armhf kernels in qemu-system, an
      # initramfs made with cpio, C++ test programs cross-built with clang++
      qemu-system-arm cpio libstdc++-12-dev-arm64-cross libstdc++-12-dev-armhf-cross
      # the console's line editor (target/console/line_edit.c), linked
      # statically: libedit.a with libbsd.a, libmd.a and ncurses' libtinfo.a
      libedit-dev libbsd-dev libmd-dev)
# The boards' own packages (kernel, busybox, libc, valgrind, gdbserver of
# arm64 and armhf) are not installed: selftest/board/fetch.sh downloads and
# unpacks them into build-board/ once apt knows those architectures.
BOARD_ARCHS=(arm64 armhf)
BOARD_CACHE_ROOT=${BOARD_CACHE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)/build-board}
board_fetch() {
    local a
    for a in aarch64 arm; do
        "$(dirname "$0")/board/fetch.sh" "$a" "$BOARD_CACHE_ROOT/$a" ||
            echo "install-deps: the $a board is not fetched: its tests will fail" >&2
    done
    true
}
# The HTML report's flame graph is compared with the one the npm package
# flamegraph draws (report_html_chromium.sh), installed with the machine's
# Node.js and npm from the npm registry.
NPM_PKGS=(flamegraph@1.3.0)
npm_fetch() {
    command -v npm >/dev/null || { echo "install-deps: no npm: ${NPM_PKGS[*]} not installed" >&2; return 0; }
    npm ls -g "${NPM_PKGS[@]}" >/dev/null 2>&1 && return 0
    [ "$(id -u)" = 0 ] || { echo "install-deps: npm packages ${NPM_PKGS[*]} need root" >&2; return 0; }
    npm install -g --no-audit --no-fund --loglevel=error "${NPM_PKGS[@]}" >/dev/null ||
        echo "install-deps: npm install ${NPM_PKGS[*]} failed" >&2
}
npm_fetch
new_archs=()
for a in "${BOARD_ARCHS[@]}"; do
    dpkg --print-foreign-architectures 2>/dev/null | grep -qx "$a" || new_archs+=("$a")
done
# The 32-bit build (make ARCH=i386) links zlib from the multilib package
# lib32z1-dev, and its unit tests link libelf1:i386 directly (the libelf
# headers are the same for every architecture); libc6-dbg:i386 lets
# valgrind's 32-bit memcheck find ld.so's symbols.  Only the runtime i386
# packages come from the multiarch archive: the -dev ones would pull
# linux-libc-dev:i386, which must match the amd64 version exactly and
# fails whenever one mirror index lags.  Done for ARCH=i386, or when i386
# is already a foreign architecture here.
want_i386=0
if [ "${ARCH:-}" = i386 ] || dpkg --print-foreign-architectures 2>/dev/null | grep -qx i386; then
    want_i386=1
    PKGS+=(lib32z1-dev libelf1:i386 libc6-dbg:i386)
fi
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ] && [ ${#new_archs[@]} -eq 0 ]; then
    board_fetch
    exit
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]:-} ${new_archs[*]:+(adding architectures ${new_archs[*]})}"
avahi_before=$(pgrep -x avahi-daemon || true)
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e $policy ]; then
    printf '#!/bin/sh\nexit 101\n' > $policy
    chmod +x $policy
    made_policy=1
fi
cleanup() { [ $made_policy = 1 ] && rm -f $policy; true; }
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
if [ $want_i386 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx i386; then
    dpkg --add-architecture i386
fi
for a in "${new_archs[@]}"; do dpkg --add-architecture "$a"; done
# A mirror in sync can fail one index; the install then says what is really missing.
apt-get update -qq || echo "install-deps: apt-get update reported errors; trying the install anyway" >&2
[ ${#missing[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for pid in $(pgrep -x avahi-daemon || true); do
    case " $avahi_before " in *" $pid "*) ;; *) echo "install-deps: stopping avahi-daemon $pid started by the install"; kill "$pid" ;; esac
done
board_fetch
