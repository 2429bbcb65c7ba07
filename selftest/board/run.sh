#!/usr/bin/env bash
# Boots a board: Debian's own arm64, armhf or i386 kernel in qemu-system (TCG),
# with an initramfs made of Debian packages (selftest/board/fetch.sh) plus
# the files given here, runs one guest script there and powers off.
#
#   selftest/board/run.sh ARCH OUTDIR GUEST_SCRIPT [FILE|DIR...]
#
# ARCH is aarch64, arm or i386.  Every FILE or DIR is copied into /mt of the guest
# (by its base name); GUEST_SCRIPT runs as `sh /mt/test.sh` with /mt as its
# working folder and /mt/env sourced first.  The guest has busybox (every
# applet on PATH), the real libc, libstdc++, valgrind (memcheck) with
# libc6-dbg, gdbserver, and the shared jemalloc, tcmalloc and mimalloc and
# GLib (ARM boards).
# The console is the log: OUTDIR/console.log, CRs stripped.  The exit
# status is the guest script's own; 124 when the board ran out of time
# (BOARD_TIMEOUT seconds, default 300); 125 when the guest never reached the
# end of its script (kernel did not boot, init died); 126 when the board
# cannot be built (missing package or kernel).
#
# Environment:
#   BOARD_CACHE      where fetch.sh unpacked the packages (build-board/ARCH)
#   BOARD_CPU        qemu -cpu (aarch64: cortex-a57; arm: cortex-a15;
#                    i386: max, TCG's every feature)
#   BOARD_SMP, BOARD_MEM   vCPUs (1) and MiB of memory (1024); under TCG a
#                    ptrace stop that wakes another vCPU costs 3-30x more
#   BOARD_NETNS      run qemu inside this network namespace, its NIC being
#                    the tap device BOARD_TAP there (made by the caller); the
#                    guest loads virtio_mmio (i386: virtio_pci and what it
#                    needs), failover, net_failover and
#                    virtio_net from the kernel package and gives eth0
#                    BOARD_GUEST_ADDR (an address/prefix, e.g. 169.254.9.2/16)
#   BOARD_ENV        lines "NAME=value" written to /mt/env
#   BOARD_APPEND     more kernel command line (e.g. user_debug=31 on arm)
#
# Files the guest sends on the console (send NAME FILE, begin/end NAME: see
# board_guest_env in selftest/board/board.bash) are saved by board_extract.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() { echo "usage: $0 aarch64|arm|i386 OUTDIR GUEST_SCRIPT [FILE...]" >&2; exit 2; }
[ $# -ge 3 ] || usage
arch=$1 out=$2 script=$3
shift 3
die() { echo "board ($arch): $*" >&2; exit 126; }

# The ARM boards are -M virt (virtio on MMIO, a PL011 console); i386 is a
# PC (virtio on PCI, the 8250 UART as console).
machine=virt console=ttyAMA0 nic=virtio-net-device pkg=qemu-system-arm
virtio_mods=(kernel/drivers/virtio/virtio_mmio.ko)
case $arch in
    aarch64) qemu=qemu-system-aarch64 cpu=${BOARD_CPU:-cortex-a57} triple=aarch64-linux-gnu ;;
    arm) qemu=qemu-system-arm cpu=${BOARD_CPU:-cortex-a15} triple=arm-linux-gnueabihf ;;
    i386) qemu=qemu-system-i386 cpu=${BOARD_CPU:-max} triple=i386-linux-gnu
          machine=pc console=ttyS0 nic=virtio-net-pci pkg=qemu-system-x86
          virtio_mods=(kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko
                       kernel/drivers/virtio/virtio_pci_modern_dev.ko
                       kernel/drivers/virtio/virtio_pci_legacy_dev.ko kernel/drivers/virtio/virtio_pci.ko) ;;
    *) usage ;;
esac
cache=${BOARD_CACHE:-$root/build-board/$arch}
src=$cache/root
command -v $qemu >/dev/null || die "$qemu is not installed (package $pkg; make deps)"
command -v cpio >/dev/null || die "cpio is not installed (make deps)"
[ -f "$src/.kernel" ] || die "no board packages in $cache (selftest/board/fetch.sh $arch $cache)"
kver=$(cat "$src/.kernel")
kernel=$src/boot/vmlinuz-$kver
[ -f "$kernel" ] || die "no kernel $kernel"
[ -f "$script" ] || die "no guest script $script"

mkdir -p "$out" || die "cannot make $out"
out=$(cd "$out" && pwd)
stage=$out/rootfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,etc,mt,usr/bin,usr/lib/$triple,usr/libexec/valgrind,lib/modules}

# The packages' files the tests use (not the whole of them: no gconv, no
# other valgrind tools, four kernel modules).
cp -a "$src/bin/busybox" "$stage/bin/" || die "no busybox in $src"
cp -a "$src/lib/$triple" "$src"/lib/ld-linux* "$stage/lib/" || die "no libc in $src"
cp -a "$src/usr/lib/$triple"/libstdc++.so* "$stage/usr/lib/$triple/" || die "no libstdc++ in $src"
# (the allocator and GLib programs are the ARM boards': i386 fetches none)
if [ "$arch" != i386 ]; then
    cp -a "$src/usr/lib/$triple"/lib{jemalloc.so.2,tcmalloc.so.4,tcmalloc_minimal.so.4,mimalloc.so.2}* \
        "$stage/usr/lib/$triple/" || die "no jemalloc, tcmalloc or mimalloc in $src"
    # GLib (the heaps phase's GLib program) and what it links
    cp -a "$src/usr/lib/$triple"/lib{glib-2.0,gobject-2.0,ffi,pcre2-8}.so.* \
        "$stage/usr/lib/$triple/" || die "no libglib, libgobject, libffi or libpcre2-8 in $src"
fi
cp -a "$src/usr/lib/debug" "$stage/usr/lib/" || die "no libc6-dbg in $src"
cp -a "$src/usr/bin/valgrind" "$src/usr/bin/valgrind.bin" "$src/usr/bin/gdbserver" "$stage/usr/bin/" ||
    die "no valgrind or gdbserver in $src"
cp -a "$src"/usr/libexec/valgrind/{memcheck-,vgpreload_core-,vgpreload_memcheck-}* \
    "$src/usr/libexec/valgrind/default.supp" "$stage/usr/libexec/valgrind/" || die "no memcheck in $src"
mods=("${virtio_mods[@]}" kernel/net/core/failover.ko
      kernel/drivers/net/net_failover.ko kernel/drivers/net/virtio_net.ko)
for m in "${mods[@]}"; do
    cp "$src/lib/modules/$kver/$m" "$stage/lib/modules/" || die "no module $m in the kernel package"
    m=${m##*/}
    echo "${m%.ko}" >> "$stage/lib/modules/load.order"
done

for f in "$@"; do
    cp -a "$f" "$stage/mt/" || die "cannot copy $f"
done
cp "$script" "$stage/mt/test.sh"
printf '%s\n' "${BOARD_ENV:-}" > "$stage/mt/env"
if [ -n "${BOARD_NETNS:-}" ]; then
    echo "BOARD_NET=${BOARD_GUEST_ADDR:?BOARD_GUEST_ADDR is needed with BOARD_NETNS}" >> "$stage/mt/env"
fi
mknod "$stage/dev/console" c 5 1 2>/dev/null

cat > "$stage/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
exec </dev/console >/dev/console 2>&1
echo 1 > /proc/sys/kernel/printk_ratelimit 2>/dev/null
echo 1 > /proc/sys/kernel/printk 2>/dev/null
ip link set lo up
. /mt/env
if [ -n "${BOARD_NET:-}" ]; then
    for m in $(cat /lib/modules/load.order); do
        insmod /lib/modules/$m.ko || echo "@@BOARD insmod $m failed"
    done
    n=0
    while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    ip addr add "$BOARD_NET" dev eth0 && ip link set eth0 up || echo "@@BOARD no eth0"
fi
cd /mt
echo "@@BOARD up $(uname -m) $(uname -r) $(nproc) cpus"
sh -c ". /mt/env; . /mt/test.sh"
echo "@@BOARD exit $?"
sync
echo o > /proc/sysrq-trigger
sleep 10
INIT
chmod +x "$stage/init"
( cd "$stage" && find . | cpio -o -H newc --quiet -R 0:0 ) > "$out/initramfs.cpio" || die "cpio failed"

qcmd=("$qemu" -M "$machine" -cpu "$cpu" -smp "${BOARD_SMP:-1}" -m "${BOARD_MEM:-1024}"
      -nographic -no-reboot -monitor none -serial stdio -net none
      -kernel "$kernel" -initrd "$out/initramfs.cpio"
      -append "console=$console rdinit=/init quiet panic=-1 ${BOARD_APPEND:-}")
if [ -n "${BOARD_NETNS:-}" ]; then
    # shellcheck disable=SC2054
    qcmd=(ip netns exec "$BOARD_NETNS" "${qcmd[@]}"
          -netdev "tap,id=n0,ifname=${BOARD_TAP:?BOARD_TAP is needed with BOARD_NETNS},script=no,downscript=no"
          -device "$nic,netdev=n0")
fi
echo "${qcmd[*]}" > "$out/qemu.cmd"
# Line by line (sed -u): a caller may follow the log while the board runs.
timeout -k 5 "${BOARD_TIMEOUT:-300}" "${qcmd[@]}" </dev/null 2>"$out/qemu.err" | sed -u 's/\r$//' > "$out/console.log"
rc=${PIPESTATUS[0]}
[ $rc -eq 124 ] || [ $rc -eq 137 ] && { echo "board ($arch): timed out after ${BOARD_TIMEOUT:-300}s" >&2; exit 124; }
status=$(sed -n 's/^@@BOARD exit \([0-9]*\)$/\1/p' "$out/console.log" | tail -n 1)
if [ -z "$status" ]; then
    echo "board ($arch): the guest did not finish its script (qemu exit $rc); console:" >&2
    tail -n 30 "$out/console.log" >&2
    cat "$out/qemu.err" >&2
    exit 125
fi
exit "$status"
