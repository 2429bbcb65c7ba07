#!/usr/bin/env bash
# Installs what memtrace needs to build and test, on Debian 12, when missing.
# Installing avahi-daemon must not start it in the root namespace (tests run
# their own inside a network namespace): a policy-rc.d forbids service starts
# during the install, and any avahi-daemon that the install still started is
# stopped (only one that was not running before).
set -eu
PKGS=(build-essential gcc g++ make libelf-dev zlib1g-dev libavahi-client-dev
      avahi-daemon avahi-utils dbus iproute2 gdb valgrind binutils elfutils
      libc6-dbg musl-tools gcc-multilib g++-multilib clang libclang-rt-14-dev
      lld llvm heaptrack tmux
      cppcheck clang-tidy python3
      # arm/aarch64 cross builds with clang + lld (gcc-<triple> would remove
      # gcc-multilib), target zlib from binutils-source, qemu + gdb for the
      # snapshot tests: see selftest/cross-zlib.sh and the Makefile
      libc6-dev-arm64-cross libc6-dev-armhf-cross libgcc-12-dev-arm64-cross
      libgcc-12-dev-armhf-cross binutils-source qemu-user gdb-multiarch)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
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
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for pid in $(pgrep -x avahi-daemon || true); do
    case " $avahi_before " in *" $pid "*) ;; *) echo "install-deps: stopping avahi-daemon $pid started by the install"; kill "$pid" ;; esac
done
