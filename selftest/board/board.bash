# Helpers for tests that run on a board (sourced; see selftest/board/run.sh).
#
#   board_vars ARCH             sets BOARD_TRIPLE (the clang target)
#   board_cc ARCH OUT SRC ARGS  cross-compiles a C or C++ program with clang
#                               (the libc6-dev-*-cross sysroot, lld); i386
#                               with gcc -m32 (gcc-multilib), as make ARCH=i386
#   board_extract LOG DIR       the guest's "@@BEGIN NAME" .. "@@END NAME"
#                               blocks of the console log LOG as DIR/NAME
#
# In a guest script, `send NAME FILE` or `begin NAME; ...; end NAME` (the
# functions are in /mt/env, written by board_guest_env) send a file back.

board_vars() {
    case $1 in
        aarch64) BOARD_TRIPLE=aarch64-linux-gnu ;;
        arm) BOARD_TRIPLE=arm-linux-gnueabihf ;;
        i386) BOARD_TRIPLE=i386-linux-gnu ;;
        *) echo "board_vars: unknown ARCH $1" >&2; return 1 ;;
    esac
}

board_cc() {
    local arch=$1 out=$2 src=$3
    shift 3
    board_vars "$arch" || return 1
    local cc=clang
    case $src in *.cpp|*.cc) cc=clang++ ;; esac
    if [ "$arch" = i386 ]; then
        cc=gcc
        case $src in *.cpp|*.cc) cc=g++ ;; esac
        $cc -m32 -pthread -o "$out" "$src" "$@"
        return
    fi
    $cc --target="$BOARD_TRIPLE" -fuse-ld=lld -pthread -o "$out" "$src" "$@"
}

board_extract() {
    local log=$1 dir=$2
    mkdir -p "$dir"
    awk -v dir="$dir" '
        /^@@BEGIN [A-Za-z0-9_.-]+$/ { f = dir "/" $2; printf "" > f; on = 1; next }
        /^@@BEGIN64 [A-Za-z0-9_.-]+$/ { f = dir "/" $2 ".b64"; printf "" > f; on = 1; next }
        /^@@END [A-Za-z0-9_.-]+$/ { if (on) close(f); on = 0; next }
        on { print >> f }' "$log"
    local b
    for b in "$dir"/*.b64; do
        [ -f "$b" ] || continue
        base64 -d "$b" | gunzip > "${b%.b64}" || echo "board_extract: ${b##*/} is damaged" >&2
        rm -f "$b"
    done
}

# Shell functions for the guest script, to put in BOARD_ENV: begin/end NAME
# around text printed on the console; send NAME FILE for any file (gzip and
# base64: the kernel's own console lines never land inside it).
board_guest_env() {
    cat <<'SH'
begin() { echo "@@BEGIN $1"; }
end() { echo "@@END $1"; }
send() { echo "@@BEGIN64 $1"; gzip -c "$2" | base64; echo "@@END $1"; }
SH
}
