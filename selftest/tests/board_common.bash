# The board suite, host side (sourced by board_aarch64.sh, board_armhf.sh and
# board_i386.sh).
#
# One boot of Debian's own kernel for the CPU in qemu-system (TCG), with the
# cross-built memtrace and test programs in its initramfs; the guest half is
# selftest/board/suite.sh.  The VM's NIC is a tap device in a network
# namespace made here, where a private dbus, avahi-daemon and memtrace-fs
# (serving the unstripped programs) run, and gdb-multiarch talks to
# gdbserver in the guest.  Checks, each against an oracle running on the
# same kernel:
#   heap      HEAP SUMMARY equal to valgrind:ARCH's (allocbench on 1 and 4
#             threads, C++ containers and new/delete, the memalign family)
#   status    every traced program keeps its exit status and its output
#             (also exit status 7, and 139 for a SIGSEGV death)
#   leak      memtrace -a equal to valgrind --leak-check=full (leak_kinds)
#   rss       the MEMORY section (where the RSS went) of `report -j` at
#             rss_parts' three pauses, by each engine: the parts add up to
#             the kernel's smaps_rollup Rss, read in the guest at the
#             pause after the report, within one page per mapping
#   heaps     valgrind's client requests (an annotated arena, mempools with
#             and without METAPOOL|AUTO_FREE): memtrace -a's HEAP SUMMARY
#             and LEAK SUMMARY equal to memcheck's (valgrind:ARCH in the
#             guest, which must see RUNNING_ON_VALGRIND as 1), its misuse
#             errors memcheck's, by both engines; RUNNING_ON_VALGRIND stays
#             0 and the output is the untraced one; attached (-p) after
#             an arena was filled, memcheck's figures of the later part;
#             a GLib program (ARM boards) booked as heaps_glib.sh books it
#   alloc     programs linked with jemalloc, tcmalloc and mimalloc (the
#             board's Debian packages; shared, static, each one's own API:
#             selftest/programs/lib/alloc_api.c), by both engines: HEAP
#             SUMMARY equal to valgrind's (with the allocator's soname as
#             somalloc, as intercept_allocator_*.sh), no misuse error, the
#             allocator first in the JSON "allocators"
#   sigterm   SIGTERM to memtrace mid-trace of a busy 4-thread program: the
#             program runs on to the checksum of an untraced run
#   stacks    every gdb backtrace at malloc/calloc/new is one of memtrace's
#             stacks (-O0; -O2 without frame pointers; a shared library; a
#             signal handler, through the sigreturn trampoline; threads; C++)
#   agent     --engine=agent where memtrace has an agent for the CPU
#             (aarch64, armhf, i386): HEAP SUMMARY equal to valgrind's (allocbench on 1
#             and 4 threads, C++), stacks equal to the breakpoint engine's
#             on the same program, -f on a process tree (the same figures
#             and stacks per process), JSON "engine", SIGKILL to memtrace
#             attached (-p) to a busy program, which runs on to an
#             untraced run's output, and SIGTERM to memtrace
#             attached (-p) leaves the program running to an untraced
#             run's output; elsewhere one line says why
#             breakpoints are used
#   net       the stripped demo traced with memtrace -m (mDNS) and with
#             memtrace -l + memtrace-fs -c gives the report of a local trace
#             of the unstripped demo
# A missing tool or package, or a kernel that does not boot, fails the test.
# Every check runs and is reported; the test fails if any failed.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/board/board.bash"
. "$MT_ROOT/selftest/tests/net_common.bash"
skip() { fail "$* (a board test never skips)"; }

board_suite() {
    local arch=$1 cflags=$2
    board_vars "$arch" || fail "unknown board $arch"
    local b=$MT_ROOT/build-$arch
    [ -x "$b/memtrace" ] || fail "no cross-built memtrace in build-$arch (make cross)"
    local t
    for t in clang clang++ ld.lld llvm-objcopy gdb-multiarch avahi-daemon dbus-daemon ip python3; do
        command -v $t >/dev/null || fail "$t is not installed (make deps)"
    done
    [ -x "$MEMTRACE_FS" ] || fail "no memtrace-fs at $MEMTRACE_FS"
    [ "$(id -u)" = 0 ] || fail "the board's network namespace needs root"
    BOARD_ARCH=$arch
    # The allocator programs are the ARM boards' (issue 27); i386 has none.
    [ "$arch" = i386 ] && BOARD_PHASES=$(echo " $BOARD_PHASES " | sed 's/ alloc / /; s/^ *//; s/ *$//')
    board_build "$cflags"
    board_network
    board_boot
    board_judge
}

# The test programs, cross-built as a board's toolchain would (-g; armhf:
# Thumb-2, Debian's default there).
board_build() {
    local cflags=$1 s=$MT_ROOT/selftest/programs d=$MT_ROOT/selftest/tests/data
    P=$MT_TMP/progs
    mkdir -p "$P"
    cd "$P" || fail "cd $P"
    local cc=(board_cc "$BOARD_ARCH")
    # valgrind.h (header-only) of the board's own valgrind package: its
    # client-request sequences are the ones the guest's memcheck knows.
    local vgh=${BOARD_CACHE:-$MT_ROOT/build-board/$BOARD_ARCH}/root/usr/include/valgrind
    [ -f "$vgh/valgrind.h" ] || fail "no valgrind.h in the board's valgrind package ($vgh)"
    mkdir -p "$MT_TMP/vginc"
    ln -sfn "$vgh" "$MT_TMP/vginc/valgrind"
    # shellcheck disable=SC2086
    {
        "${cc[@]}" allocbench "$MT_ROOT/bench/allocbench.c" -O2 -g $cflags &&
        "${cc[@]}" intercept_cxx "$s/intercept_cxx.cpp" -std=gnu++17 -fsized-deallocation -O0 -g $cflags &&
        "${cc[@]}" intercept_memalign "$s/intercept_memalign.c" -std=gnu11 -O0 -g $cflags &&
        "${cc[@]}" leak_kinds "$s/leak_kinds.c" -std=gnu11 -O0 -g $cflags &&
        "${cc[@]}" rss_parts "$s/rss_parts.c" -std=gnu11 -O0 -g $cflags &&
        "${cc[@]}" heaps_arena "$s/heaps_arena.c" -std=gnu11 -O0 -g -isystem "$MT_TMP/vginc" $cflags &&
        "${cc[@]}" heaps_pool "$s/heaps_pool.c" -std=gnu11 -O0 -g -isystem "$MT_TMP/vginc" $cflags &&
        "${cc[@]}" heaps_attach "$s/heaps_attach.c" -std=gnu11 -O0 -g -isystem "$MT_TMP/vginc" $cflags &&
        "${cc[@]}" mt_churn "$s/mt_churn.c" -std=gnu11 -O0 -g $cflags &&
        "${cc[@]}" rely_ticker "$s/rely_ticker.c" -std=gnu11 -O0 -g $cflags &&
        "${cc[@]}" proc_fork "$s/proc_fork.c" -std=gnu11 -O0 -g $cflags &&
        "${cc[@]}" exit_status "$d/exit_status.c" -O0 -g $cflags &&
        "${cc[@]}" demo "$s/demo.c" -std=gnu11 -O0 -g $cflags &&
        "${cc[@]}" libstacks_O0.so "$d/stacks_lib.c" -g -O0 -fPIC -shared $cflags &&
        "${cc[@]}" stacks_O0 "$d/stacks_main.c" -g -O0 -L. -lstacks_O0 $cflags &&
        "${cc[@]}" libstacks_O2.so "$d/stacks_lib.c" -g -O2 -fomit-frame-pointer -fPIC -shared $cflags &&
        "${cc[@]}" stacks_O2 "$d/stacks_main.c" -g -O2 -fomit-frame-pointer -L. -lstacks_O2 $cflags &&
        "${cc[@]}" stacks_cxx "$d/stacks_cxx.cpp" -g -O0 $cflags &&
        "${cc[@]}" stacks_threads "$d/stacks_threads.c" -g -O2 -fomit-frame-pointer $cflags &&
        "${cc[@]}" stacks_libc "$d/stacks_libc.c" -g -O2 $cflags &&
        "${cc[@]}" sigalt_O0 "$d/sigalt_jump.c" -g -O0 $cflags &&
        "${cc[@]}" except_std "$s/except_std.cpp" -std=gnu++17 -O0 -g $cflags &&
        "${cc[@]}" except_own "$s/except_own.cpp" -std=gnu++17 -O0 -g $cflags &&
        "${cc[@]}" except_inner "$s/except_inner.cpp" -std=gnu++17 -O0 -g $cflags
    } >"$MT_TMP/build.log" 2>&1 || { cat "$MT_TMP/build.log"; fail "cross-building the test programs failed"; }
    # armhf: the arena also in ARM state, whose request sequence has other
    # bytes than Thumb-2's (arch/arm.c)
    if [ "$BOARD_ARCH" = arm ]; then
        "${cc[@]}" heaps_arena_arm "$s/heaps_arena.c" -std=gnu11 -O0 -g -isystem "$MT_TMP/vginc" -marm \
            >>"$MT_TMP/build.log" 2>&1 || { cat "$MT_TMP/build.log"; fail "cross-building heaps_arena -marm failed"; }
    fi
    # (the allocator and GLib programs: the ARM boards only, issues 27, 31)
    [ "$BOARD_ARCH" = i386 ] || board_build_alloc "$cflags"
    [ "$BOARD_ARCH" = i386 ] || board_build_glib "$cflags"
    llvm-objcopy --strip-all demo demo.stripped || fail "strip demo"
    # The host's sysroot for memtrace-fs: the stripped demo where the guest
    # has it, its debug file by build-id.
    SYSROOT=$MT_TMP/sysroot
    local id
    id=$(readelf_build_id demo)
    [ -n "$id" ] || fail "demo has no build-id"
    mkdir -p "$SYSROOT/mt/net" "$SYSROOT/usr/lib/debug/.build-id/${id:0:2}"
    cp demo.stripped "$SYSROOT/mt/net/demo"
    llvm-objcopy --only-keep-debug demo "$SYSROOT/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ||
        fail "debug file of demo"
    # And the board libc's debug file (libc6-dbg), for stacks_libc traced
    # with -m while the guest's own copy is hidden.
    local libc=${BOARD_CACHE:-$MT_ROOT/build-board/$BOARD_ARCH}/root/lib/$BOARD_TRIPLE/libc.so.6
    id=$(readelf_build_id "$libc")
    [ -n "$id" ] || fail "no build-id in $libc"
    mkdir -p "$SYSROOT/usr/lib/debug/.build-id/${id:0:2}"
    cp "${libc%/lib/*}/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" "$SYSROOT/usr/lib/debug/.build-id/${id:0:2}/" ||
        fail "no libc6-dbg debug file for $libc"
    cd "$MT_TMP" || fail "cd $MT_TMP"
}

# The alloc phase's programs (in $P): alloc_api.c linked with the board's
# own jemalloc, tcmalloc and mimalloc (fetch.sh unpacks their runtime and
# -dev packages into the board cache; the guest has the .so files at their
# Debian paths), as intercept_allocator_*.sh links them on x86_64.
board_build_alloc() {
    local cflags=$1 root=${BOARD_CACHE:-$MT_ROOT/build-board/$BOARD_ARCH}/root
    local lib=$root/usr/lib/$BOARD_TRIPLE inc=$MT_TMP/allocinc libs=$MT_TMP/alloclib f
    mkdir -p "$inc" "$libs"
    # Only the allocators' files on -L and -isystem: nothing else of the
    # board's packages may stand in for the cross sysroot's.
    for f in libjemalloc.so libjemalloc.a libtcmalloc.so libtcmalloc_minimal.a libmimalloc.so; do
        [ -e "$lib/$f" ] || fail "no $f in the board's packages ($lib; selftest/board/fetch.sh)"
        ln -sfn "$lib/$f" "$libs/$f"
    done
    for f in jemalloc gperftools mimalloc.h; do
        [ -e "$root/usr/include/$f" ] || fail "no $f in the board's -dev packages ($root/usr/include)"
        ln -sfn "$root/usr/include/$f" "$inc/$f"
    done
    local src=$MT_ROOT/selftest/programs/lib/alloc_api.c
    local a=(-std=gnu11 -g -O0 -isystem "$inc" -L"$libs" $cflags)
    # armhf: .ARM.exidx in the code's segment, as GNU ld puts it; lld's own
    # read-only segment for it makes valgrind:armhf drop the executable's
    # debug info ("Can't make sense of .ARM.exidx section mapping"), and with
    # it the static allocator's functions it must replace (0 allocs).
    [ "$BOARD_ARCH" = arm ] && a+=(-Wl,--no-rosegment)
    local st=(-Wl,-Bstatic) dy=(-Wl,-Bdynamic -Wl,--no-as-needed -lstdc++ -lpthread -lm)
    # shellcheck disable=SC2086
    {
        board_cc "$BOARD_ARCH" je_shared "$src" "${a[@]}" -ljemalloc -Wl,--no-as-needed -lstdc++ &&
        board_cc "$BOARD_ARCH" je_own "$src" "${a[@]}" -DAPI_JE -ljemalloc -Wl,--no-as-needed -lstdc++ &&
        board_cc "$BOARD_ARCH" je_equiv "$src" "${a[@]}" -DAPI_JE -DEQUIV -Wl,--no-as-needed -lstdc++ &&
        board_cc "$BOARD_ARCH" je_static "$src" "${a[@]}" "${st[@]}" -ljemalloc "${dy[@]}" &&
        board_cc "$BOARD_ARCH" je_static_own "$src" "${a[@]}" -DAPI_JE "${st[@]}" -ljemalloc "${dy[@]}" &&
        board_cc "$BOARD_ARCH" tc_shared "$src" "${a[@]}" -ltcmalloc -lstdc++ &&
        board_cc "$BOARD_ARCH" tc_own "$src" "${a[@]}" -DAPI_TC -ltcmalloc -lstdc++ &&
        board_cc "$BOARD_ARCH" tc_static "$src" "${a[@]}" "${st[@]}" -ltcmalloc_minimal "${dy[@]}" &&
        board_cc "$BOARD_ARCH" tc_static_own "$src" "${a[@]}" -DAPI_TC "${st[@]}" -ltcmalloc_minimal "${dy[@]}" &&
        board_cc "$BOARD_ARCH" mi_shared "$src" "${a[@]}" -lmimalloc -Wl,--no-as-needed -lstdc++ &&
        board_cc "$BOARD_ARCH" mi_own "$src" "${a[@]}" -DAPI_MI -lmimalloc -Wl,--no-as-needed -lstdc++ &&
        board_cc "$BOARD_ARCH" mi_equiv "$src" "${a[@]}" -DAPI_MI -DEQUIV -Wl,--no-as-needed -lstdc++
    } >>"$MT_TMP/build.log" 2>&1 || { cat "$MT_TMP/build.log"; fail "cross-building the allocator programs failed"; }
}

# The heaps phase's GLib program (heaps_glib.sh on x86_64), Debian's own
# GLib of the board: armhf links libgobject and libglib as x86_64 does.
# arm64 links their static libraries (the same objects, with the names of
# their static functions): on 64-bit CPUs GLib's hash tables keep 32-bit
# keys and values natively but not under valgrind, so their blocks are set
# aside (glib_common.bash) by the g_hash_table_* frames in both tools'
# stacks, and in the stripped shared libgobject those frames have no name
# (the arrays grow in g_hash_table_resize, static).  Only GLib's files on
# -L.
board_build_glib() {
    local cflags=$1 root=${BOARD_CACHE:-$MT_ROOT/build-board/$BOARD_ARCH}/root
    local lib=$root/usr/lib/$BOARD_TRIPLE libs=$MT_TMP/gliblib f link
    mkdir -p "$libs"
    local files=(libglib-2.0.so libgobject-2.0.so)
    link=(-lgobject-2.0 -lglib-2.0)
    if [ "$BOARD_ARCH" = aarch64 ]; then
        files=(libglib-2.0.a libgobject-2.0.a libffi.a libpcre2-8.a)
        # shellcheck disable=SC2054 # (the commas are the linker's)
        link=(-Wl,-Bstatic -lgobject-2.0 -lglib-2.0 -lffi -lpcre2-8 -Wl,-Bdynamic -lm)
    fi
    for f in "${files[@]}"; do
        [ -e "$lib/$f" ] || fail "no $f in the board's packages ($lib; selftest/board/fetch.sh)"
        ln -sfn "$lib/$f" "$libs/$f"
    done
    [ -f "$lib/glib-2.0/include/glibconfig.h" ] || fail "no glibconfig.h in the board's libglib2.0-dev"
    # shellcheck disable=SC2086
    board_cc "$BOARD_ARCH" "$P/glib_heap" "$MT_ROOT/selftest/programs/lib/glib_heap.c" -std=gnu11 -g -O0 \
        -isystem "$MT_TMP/vginc" -isystem "$root/usr/include/glib-2.0" -isystem "$lib/glib-2.0/include" \
        -L"$libs" "${link[@]}" $cflags >>"$MT_TMP/build.log" 2>&1 ||
        { cat "$MT_TMP/build.log"; fail "cross-building the GLib program failed"; }
}

# The namespace, its tap (the VM's NIC), dbus, avahi-daemon, memtrace-fs.
board_network() {
    # shellcheck disable=SC2154  # tag: net_common.bash
    VETH_H=mtb$tag
    ip netns add "$NS_H" || fail "cannot create a network namespace"
    trap cleanup EXIT
    trap 'exit 1' INT TERM
    ip -n "$NS_H" link set lo up
    ip netns exec "$NS_H" ip tuntap add "$VETH_H" mode tap || fail "cannot create a tap device"
    ip -n "$NS_H" addr add "$ADDR_H/16" dev "$VETH_H"
    ip -n "$NS_H" link set "$VETH_H" up
    start_dbus
    start_avahi
    "${IN_HOST[@]}" "$MEMTRACE_FS" -p 3002 -N "mtfs-board-$tag" "$SYSROOT" >"$MT_TMP/fs.log" 2>&1 &
    PIDS+=($!)
}

# One boot: the guest runs suite.sh; this side answers its @@STEP lines.
board_boot() {
    OUT=$MT_TMP/board
    mkdir -p "$OUT"
    local news="_Znwm _Znam"
    [ "$BOARD_ARCH" = arm ] || [ "$BOARD_ARCH" = i386 ] && news="_Znwj _Znaj"
    local start=$SECONDS
    # One vCPU: under TCG a ptrace stop that wakes the other vCPU costs
    # 3-30 times more (bench/board-bench.sh), and the suite must fit its
    # time; the programs' threads still interleave, preempted.
    # The guest's time limit only catches a hang: the suite takes about 250 s
    # on an idle 2-core machine and twice that beside the rest of make
    # check's pool (a 270 s limit ended both boards in one CI run).
    BOARD_SMP=${BOARD_SMP:-1} BOARD_NETNS=$NS_H BOARD_TAP=$VETH_H BOARD_GUEST_ADDR=$ADDR_T/16 BOARD_TIMEOUT=${BOARD_TIMEOUT:-1500} \
    BOARD_ENV="$(board_guest_env)
GUEST_IP=$ADDR_T
HOST_IP=$ADDR_H
PHASES='$BOARD_PHASES'" \
        "$MT_ROOT/selftest/board/run.sh" "$BOARD_ARCH" "$OUT" "$MT_ROOT/selftest/board/suite.sh" \
        "$MT_ROOT/build-$BOARD_ARCH/memtrace" "$P" >"$MT_TMP/run.log" 2>&1 &
    local run=$!
    PIDS+=("$run")
    local done_steps=0 line
    while :; do
        local steps
        steps=$(grep -a '^@@STEP ' "$OUT/console.log" 2>/dev/null)
        local n
        n=$(printf '%s' "$steps" | grep -c '^@@STEP')
        while [ "$done_steps" -lt "$n" ]; do
            done_steps=$((done_steps + 1))
            line=$(printf '%s\n' "$steps" | sed -n "${done_steps}p")
            # shellcheck disable=SC2086
            board_step ${line#@@STEP } "$news"
        done
        kill -0 $run 2>/dev/null || break
        sleep 0.2
    done
    wait $run
    BOARD_RC=$?
    echo "board $BOARD_ARCH: run.sh exit $BOARD_RC after $((SECONDS - start)) s"
    grep -a '^@@PHASE' "$OUT/console.log"
    # A board that did not finish still has its finished phases judged.
    board_extract "$OUT/console.log" "$OUT/got"
    if [ $BOARD_RC -ne 0 ]; then
        cat "$MT_TMP/run.log"
        tail -n 20 "$OUT/console.log"
    fi
    [ $BOARD_RC -eq 0 ]
    check "board" $? "the $BOARD_ARCH board ran its suite to the end (run.sh exit $BOARD_RC after $((SECONDS - start)) s)"
}

# board_step gdb NAME PORT NEWS... | rev IP PORT
board_step() {
    case $1 in
    gdb)
        local name=$2 port=$3 bin breaks
        shift 3
        case $name in
            c_O0) bin=stacks_O0 breaks="malloc calloc" ;;
            c_O2) bin=stacks_O2 breaks="malloc calloc" ;;
            cxx) bin=stacks_cxx breaks="$*" ;;
            threads) bin=stacks_threads breaks="malloc" ;;
            libc) bin=stacks_libc breaks="malloc calloc realloc" ;;
        esac
        {
            echo "set pagination off"
            echo "set print frame-arguments none"
            echo "set confirm off"
            echo "set sysroot $OUT/rootfs"
            echo "set debug-file-directory $OUT/rootfs/usr/lib/debug"
            echo "set tcp connect-timeout 30"
            echo "handle SIGUSR1 nostop noprint pass"
            echo "file $P/$bin"
            echo "target remote $ADDR_T:$port"
            # The allocation functions' first instructions, once libc and
            # libstdc++ are loaded (armhf programs have no PLT symbols).
            echo "set breakpoint pending on"
            echo "break __libc_start_main"
            echo "continue"
            echo "delete"
            for b in $breaks; do echo "break *$b"; done
            echo "while 1"
            echo "  bt 40"
            echo "  continue"
            echo "end"
        } >"$MT_TMP/gdb_$name.cmd"
        "${IN_HOST[@]}" timeout 200 gdb-multiarch -batch -nx -x "$MT_TMP/gdb_$name.cmd" \
            >"$MT_TMP/gdb_$name.log" 2>&1
        ;;
    rev)
        "${IN_HOST[@]}" "$MEMTRACE_FS" -n -c "$2:$3" "$SYSROOT" >"$MT_TMP/fs-rev.log" 2>&1 &
        PIDS+=($!)
        ;;
    esac
}

# BOARD_PHASES: the phases of the suite to run (all by default; fewer only
# to debug one).
BOARD_PHASES=${BOARD_PHASES:-heap leak rss heaps alloc sigterm stacks net agent except}
phase() { case " $BOARD_PHASES " in *" $1 "*) return 0 ;; esac; return 1; }

FAILED=() FAILED_LINES=()
# The "engine" a JSON report says traced its program.
report_engine() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["engine"])' "$1"
}
check() { # NAME OK(0|1) DETAIL
    if [ "$2" = 0 ]; then
        echo "PASS $BOARD_ARCH $1: $3"
    else
        echo "FAIL $BOARD_ARCH $1: $3"
        FAILED+=("$1")
        FAILED_LINES+=("FAIL $BOARD_ARCH $1: $3")
    fi
}

# The figures and statuses the guest sent back, against their oracles.
board_judge() {
    local g=$OUT/got rcs
    rcs=$(grep -a '^@@RC ' "$OUT/console.log")
    rc_of() { # CASE KEY
        printf '%s\n' "$rcs" | awk -v c="$1" -v k="$2" '$2 == c { for (i = 3; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' | tail -n 1
    }
    local c vg mt plain mrc
    phase heap && for c in bench1 bench4 cxx memalign exit7 segv; do
        mt=$(memtrace_json_figures "$g/$c.json" 2>&1)
        case $c in
        exit7|segv)
            # One block of 64 bytes and stdout's buffer, kept at the end.
            [ "$(echo "$mt" | cut -d' ' -f1,2,5)" = "2 0 2" ]
            check "heap $c" $? "memtrace $mt (2 allocations, both in use at the end)" ;;
        *)
            vg=$(valgrind_log_figures "$g/$c.vg" 2>&1)
            [[ $vg =~ ^[0-9\ ]+$ ]] && [ "$vg" = "$mt" ]
            check "heap $c" $? "valgrind $vg | memtrace $mt" ;;
        esac
        plain=$(rc_of "$c" plain) mrc=$(rc_of "$c" memtrace)
        # Outputs compared with addresses masked (ASLR moves the heap).
        local same=1 sameout=differs
        sed 's/0x[0-9a-f]*/0xADDR/g' "$g/$c.plain" >"$MT_TMP/$c.plain.m"
        sed 's/0x[0-9a-f]*/0xADDR/g' "$g/$c.out" >"$MT_TMP/$c.out.m"
        [ -s "$MT_TMP/$c.plain.m" ] && cmp -s "$MT_TMP/$c.plain.m" "$MT_TMP/$c.out.m" && sameout=same
        [ -n "$plain" ] && [ "$plain" = "$mrc" ] && [ $sameout = same ] && same=0
        check "status $c" $same "untraced exit $plain, traced exit $mrc, output $sameout"
    done
    if phase heap; then
        [ "$(rc_of exit7 plain)" = 7 ] && [ "$(rc_of segv plain)" = 139 ]
        check "status oracle" $? "the untraced program exits 7 and 139 (SIGSEGV)"
        grep -hE 'invalid|mismatched' "$g/cxx.err" >/dev/null
        check "cxx releases" $((1 - $?)) "no invalid or mismatched release reported on intercept_cxx"
    fi
    phase leak && board_judge_leak "$g"
    phase rss && board_judge_rss "$g"
    phase heaps && board_judge_heaps "$g"
    phase alloc && board_judge_alloc "$g"
    phase sigterm && board_judge_sigterm "$g"
    phase stacks && board_judge_stacks "$g"
    phase net && board_judge_net "$g"
    phase agent && board_judge_agent "$g"
    phase except && board_judge_except "$g"
    if [ ${#FAILED[@]} -gt 0 ]; then
        # again at the end: run-tests.sh shows a failed test's last lines
        printf '%s\n' "${FAILED_LINES[@]}"
        fail "$BOARD_ARCH board: ${#FAILED[@]} checks failed: ${FAILED[*]}"
    fi
    echo "$BOARD_ARCH board: every check passed ($BOARD_PHASES)"
}

board_judge_leak() {
    local g=$1 vg mt

    vg=$(. "$MT_ROOT/selftest/tests/leak_common.bash"; leak_summary_of_text "$g/leak.vg" 2>&1)
    local e json
    for e in default ptrace; do
        json=$g/leak.json
        [ $e = ptrace ] && json=$g/leak_ptrace.json
        mt=$(. "$MT_ROOT/selftest/tests/leak_common.bash"; leak_summary_of_json "$json" 2>&1)
        # figures on both sides (two equal error messages are no match)
        [[ $vg =~ ^[0-9\ ]+$ ]] && [[ $mt =~ ^[0-9\ ]+$ ]] &&
            [ "$(echo "$vg" | cut -d' ' -f1-8)" = "$(echo "$mt" | cut -d' ' -f1-8)" ] && [ "$(echo "$vg" | cut -d' ' -f1)" != 0 ]
        check "leak ($e engine)" $? "valgrind $vg | memtrace $mt (definite indirect possible reachable: bytes blocks)"
    done
}

# Each stop's MEMORY parts against the smaps_rollup Rss the guest shell
# read at that pause after the report (the kernel's figure, not
# memtrace's), within a page per mapping; the program's own reading, from
# before its stop line, only where the shell's is missing.  The final
# report's engine is the one asked for.
board_judge_rss() {
    local g=$1 e res
    for e in agent ptrace; do
        res=$(python3 - "$g" "$e" <<'PY' 2>&1
import json, sys
g, e = sys.argv[1], sys.argv[2]
lines = {}
for l in open('%s/rss_%s.out' % (g, e)):
    w = l.split()
    if len(w) > 2 and w[0] == 'stop':
        lines[int(w[1])] = {k: int(v) for k, v in (kv.split('=') for kv in w[2:])}
engine = json.load(open('%s/rss_%s_end.json' % (g, e)))['engine']
print('engine %s:' % engine, end=' ')
bad = [] if engine == e else ['engine']
for n in (1, 2, 3):
    rep = json.load(open('%s/rss_%s_%d.json' % (g, e, n)))
    mem, prog = rep['memory'], lines[n]
    parts = sum(v['bytes'] for v in mem['parts'].values())
    rollup, who = prog['rollup'], 'program'
    try:
        rollup, who = int(open('%s/rss_%s_%d.rollup' % (g, e, n)).read()) * 1024, 'shell'
    except (OSError, ValueError):
        pass
    ok = (rollup > 0 and parts == mem['rss']
          and abs(parts - rollup) <= prog['page'] * mem['mappings'])
    print('stop %d: parts %d (rss %d) smaps_rollup %d (%s; the program read %d), %d mappings%s'
          % (n, parts, mem['rss'], rollup, who, prog['rollup'], mem['mappings'], '' if ok else ' FAIL'), end='; ')
    if not ok:
        bad.append(n)
sys.exit(1 if bad else 0)
PY
)
        check "rss ($e engine)" $? "rss_parts: $res exit $(rc_of rss_$e memtrace), seconds $(rc_of rss_$e seconds)"
    done
}

# Client requests: memcheck in the guest is the oracle (it must have seen
# the requests: RUNNING_ON_VALGRIND 1 under it); memtrace's figures and
# errors by each engine against its, the traced output the untraced one.
board_judge_heaps() {
    local g=$1 c e vgh vgl mth mtl
    for c in arena_leak pool pool_meta arena_misuse; do
        local n=hp_$c
        grep -q 'running on valgrind: 1' "$g/$n.vgout"
        check "heaps $c oracle" $? "under valgrind the program says [$(grep -m1 'running on valgrind' "$g/$n.vgout")] (seconds $(rc_of ${n}_vg seconds))"
        if [ $c != arena_misuse ]; then
            vgh=$(valgrind_log_figures "$g/$n.vg" 2>&1)
            vgl=$(. "$MT_ROOT/selftest/tests/leak_common.bash"; leak_summary_of_text "$g/$n.vg" 2>&1)
        else
            vgh=$(grep -oE '(Invalid free|Mismatched free)' "$g/$n.vg" | tr '\n' ' ')
        fi
        for e in agent ptrace; do
            local eng same=1
            eng=$(report_engine "$g/${n}_$e.json" 2>&1)
            grep -q 'running on valgrind: 0' "$g/$n.plain" && cmp -s "$g/$n.plain" "$g/${n}_$e.out" &&
                [ "$(rc_of ${n}_$e memtrace)" = 0 ] && [ "$(rc_of $n plain)" = 0 ] && [ "$eng" = $e ] && same=0
            if [ $c != arena_misuse ]; then
                mth=$(memtrace_json_figures "$g/${n}_$e.json" 2>&1)
                mtl=$(. "$MT_ROOT/selftest/tests/leak_common.bash"; leak_summary_of_json "$g/${n}_$e.json" 2>&1)
                [ "$vgh" = "$mth" ] && [ "$vgl" = "$mtl" ] && [ $same = 0 ]
                check "heaps $c ($e engine)" $? "heap: valgrind $vgh | memtrace $mth; leaks: valgrind $vgl | memtrace $mtl; engine $eng, exit $(rc_of ${n}_$e memtrace), output $( [ $same = 0 ] && echo 'the untraced one' || echo differs) ($(rc_of ${n}_$e seconds))"
            else
                mth=$(grep -oE '(Invalid free|Mismatched free)' "$g/${n}_$e.err" | tr '\n' ' ')
                local site=no
                grep -q 'VALGRIND_FREELIKE_BLOCK\|arena_free' "$g/${n}_$e.err" && site=yes
                [ -n "$vgh" ] && [ "$vgh" = "$mth" ] && [ $same = 0 ] && [ $site = yes ]
                check "heaps $c ($e engine)" $? "errors: valgrind [$vgh] memtrace [$mth], a request site named: $site; engine $eng, output $( [ $same = 0 ] && echo 'the untraced one' || echo differs)"
            fi
            [ "$(rc_of ${n}_$e memtrace)" = 0 ] || head -n 5 "$g/${n}_$e.err"
        done
    done
    board_judge_heaps_attach "$g"
    [ "$BOARD_ARCH" = i386 ] || board_judge_heaps_glib "$g"
    [ "$BOARD_ARCH" = arm ] || return 0
    # The arena in ARM state (its requests are ARM code: objdump says so)
    # against memcheck's figures of the Thumb-2 build above: the same
    # source, the same allocations, in the other instruction set.
    local arm_insns
    arm_insns=$(llvm-objdump -d "$P/heaps_arena_arm" 2>/dev/null | grep -c '0a a0 8a e1[[:space:]]*orr[[:space:]]*r10, r10, r10$')
    vgh=$(valgrind_log_figures "$g/hp_arena_leak.vg" 2>&1)
    vgl=$(. "$MT_ROOT/selftest/tests/leak_common.bash"; leak_summary_of_text "$g/hp_arena_leak.vg" 2>&1)
    for e in agent ptrace; do
        local n=hp_arena_arm_$e
        mth=$(memtrace_json_figures "$g/$n.json" 2>&1)
        mtl=$(. "$MT_ROOT/selftest/tests/leak_common.bash"; leak_summary_of_json "$g/$n.json" 2>&1)
        [ "$arm_insns" -gt 0 ] && [ "$vgh" = "$mth" ] && [ "$vgl" = "$mtl" ] &&
            grep -q 'running on valgrind: 0' "$g/$n.out" && [ "$(rc_of $n memtrace)" = 0 ]
        check "heaps arena in ARM state ($e engine)" $? "$arm_insns ARM-state request instructions; heap: valgrind (Thumb-2 build) $vgh | memtrace $mth; leaks: valgrind $vgl | memtrace $mtl; $(grep -m1 'running on valgrind' "$g/$n.out")"
    done
}

# heaps_attach attached after its fill, by each engine: memcheck's HEAP
# SUMMARY of the later part alone, no release of an older block reported
# (heaps_client_attach.sh).
board_judge_heaps_attach() {
    local g=$1 e vg mt
    vg=$(valgrind_log_figures "$g/hp_attach.vg" 2>&1)
    for e in agent ptrace; do
        local n=hp_attach_$e eng errs
        mt=$(memtrace_json_figures "$g/$n.json" 2>&1)
        eng=$(report_engine "$g/$n.json" 2>&1)
        errs=$(grep -c 'Invalid free' "$g/$n.err" 2>/dev/null)
        [ "$vg" = "$mt" ] && [ "${errs:-0}" = 0 ] && [ "$eng" = $e ] &&
            [ "$(rc_of $n memtrace)" = 0 ] && [ "$(rc_of $n prog)" = 0 ]
        check "heaps attached after the fill ($e engine)" $? "valgrind (later part) $vg | memtrace -p $mt; ${errs:-0} invalid frees reported; engine $eng, exit $(rc_of $n memtrace), program $(rc_of $n prog)"
        [ "$(rc_of $n memtrace)" = 0 ] || head -n 5 "$g/$n.err"
    done
}

# The GLib program's two modes by each engine, judged as heaps_glib.sh
# judges them (glib_common.bash; armhf: every figure), and memtrace's word
# that gtype.c's MALLOCLIKE_BLOCK fired.
board_judge_heaps_glib() {
    local g=$1 e mode ok exact='' where=libgobject
    . "$MT_ROOT/selftest/tests/glib_common.bash"
    # 32-bit: GLib's hash tables are the same under valgrind, every figure
    # must be memcheck's; arm64's requests are in the executable
    [ "$BOARD_ARCH" = arm ] && exact=exact
    [ "$BOARD_ARCH" = aarch64 ] && where=glib_heap
    for mode in base work; do
        local n=hp_glib_$mode
        grep -q 'running on valgrind: 1' "$g/$n.vgout"
        check "heaps GLib $mode oracle" $? "under valgrind the program says [$(grep -m1 'running on valgrind' "$g/$n.vgout")]"
        for e in agent ptrace; do
            local eng same=no
            eng=$(report_engine "$g/${n}_$e.json" 2>&1)
            grep -q 'running on valgrind: 0' "$g/$n.plain" && cmp -s "$g/$n.plain" "$g/${n}_$e.out" && same=yes
            glib_compare "$g/$n.vg" "$g/${n}_$e.json" $exact
            ok=$?
            [ $ok = 0 ] && [ $same = yes ] && [ "$eng" = $e ] && [ "$(rc_of ${n}_$e memtrace)" = 0 ]
            check "heaps GLib $mode ($e engine)" $? "heap: $GLIB_HEAP; leaks: $GLIB_LEAKS; through g_hash_table: $GLIB_HASH${GLIB_WHY:+; $GLIB_WHY}; engine $eng, exit $(rc_of ${n}_$e memtrace), untraced output: $same"
        done
    done
    for e in agent ptrace; do
        glib_work_delta "$g/hp_glib_base.vg" "$g/hp_glib_work.vg" "$g/hp_glib_base_$e.json" "$g/hp_glib_work_$e.json" &&
            grep -q "request MALLOCLIKE_BLOCK (0x1301) first at .*$where" "$g/hp_glib_work_$e.err"
        check "heaps GLib work less base ($e engine)" $? "allocs frees bytes: $GLIB_DELTA; $(grep -m1 -o 'request MALLOCLIKE_BLOCK[^;]*' "$g/hp_glib_work_$e.err")"
    done
}

# Each allocator case by each engine against valgrind's HEAP SUMMARY (the
# log the guest names in the case's @@RC line), as allocators_common.bash:
# equal figures, no misuse error, the allocator (its library, or the
# executable it is linked into) first in "allocators", memtrace's exit 0.
# One python for the twenty verdicts (the host is loaded during make check).
board_judge_alloc() {
    local g=$1 ok name detail
    while IFS=$'\t' read -r ok name detail; do
        check "alloc $name" "$ok" "$detail"
    done < <(RCS=$rcs python3 - "$g" <<'PY' 2>&1 || printf '1\tjudge\tpython3 failed\n'
import fnmatch, json, os, re, sys
g = sys.argv[1]
rc = {}
for line in os.environ['RCS'].splitlines():
    w = line.split()
    if len(w) > 1 and w[0] == '@@RC':
        rc[w[1]] = dict(kv.split('=', 1) for kv in w[2:] if '=' in kv)
num = lambda s: int(s.replace(',', ''))
def vg_figures(path):
    text = open(path).read()
    m = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', text)
    t = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', text)
    if not m or not t:
        raise ValueError('no HEAP SUMMARY in %s' % path.rsplit('/', 1)[-1])
    return [num(x) for x in t.groups() + m.groups()]
for c in ('je_shared je_own je_static je_static_own tc_shared tc_own tc_static tc_static_own '
          'mi_shared mi_own').split():
    first = ('*/' + c if '_static' in c else
             '*/lib%s.so*' % {'je': 'jemalloc', 'tc': 'tcmalloc', 'mi': 'mimalloc'}[c[:2]])
    for e in ('agent', 'ptrace'):
        r = rc.get('al_%s_%s' % (c, e), {})
        bad, vg, mt, alloc, errs = [], '-', '-', [], []
        try:
            oracle = r.get('oracle', '?')
            vg = vg_figures('%s/%s.vg' % (g, oracle))
            if rc.get(oracle, {}).get('valgrind') != '0':
                bad.append('valgrind exit %s' % rc.get(oracle, {}).get('valgrind'))
            d = json.load(open('%s/al_%s_%s.json' % (g, c, e)))
            h = d['heap']
            mt = [h[k] for k in ('allocs', 'frees', 'bytes_allocated', 'in_use_bytes', 'in_use_blocks')]
            errs = ['%s in %s' % (x['kind'], x['function']) for x in d['errors']]
            alloc = d.get('allocators') or ['(none)']
            if vg != mt:
                bad.append('figures differ')
            if errs or d.get('errors_not_listed'):
                bad.append('misuse errors valgrind does not report: %s' % errs[:3])
            if not fnmatch.fnmatch(alloc[0], first):
                bad.append('first allocator not %s' % first)
            if d['engine'] != e:
                bad.append('engine %s' % d['engine'])
        except (OSError, ValueError, KeyError) as x:
            bad.append(str(x))
        if r.get('memtrace') != '0':
            bad.append('memtrace exit %s' % r.get('memtrace'))
        fig = lambda f: ' '.join(map(str, f)) if isinstance(f, list) else f
        print('%d\t%s (%s engine)\tvalgrind %s | memtrace %s; allocators %s, %d errors; seconds %s%s'
              % (1 if bad else 0, c, e, fig(vg), fig(mt), [a.rsplit('/', 1)[-1] for a in alloc[:2]],
                 len(errs), r.get('seconds', '?'), ''.join('; ' + b for b in bad)))
PY
)
}

board_judge_sigterm() {
    local g=$1 want got
    want=$(grep '^mt_churn:' "$g/churn.plain")
    got=$(grep '^mt_churn:' "$g/churn.out")
    local traced
    traced=$(memtrace_json_figures "$g/churn.json" 2>&1 | cut -d' ' -f1)
    [ -n "$want" ] && [ "$want" = "$got" ] && [ "$(rc_of churn ended)" = yes ] &&
        [ "$traced" -gt 0 ] 2>/dev/null && [ "$traced" -lt $((4 * 200000)) ]
    check "sigterm" $? "untraced [$want], traced then SIGTERM to memtrace [$got], $traced of 800000 allocations traced; $(grep -a '^@@NOTE memtrace exited' "$OUT/console.log" | cut -c8-)"
}

board_judge_stacks() {
    local g=$1 name src
    for name in c_O0 c_O2 cxx threads libc; do
        case $name in
            c_*) src="stacks_main.c stacks_lib.c" ;;
            cxx) src=stacks_cxx.cpp ;;
            threads) src=stacks_threads.c ;;
            libc) src=stacks_libc.c ;;
        esac
        local res
        # shellcheck disable=SC2086
        local how=
        # glibc's frames by function: its line table has several rows at one
        # address, where gdb and memtrace take different ones (see --functions).
        [ $name = libc ] && how=--functions
        res=$(python3 "$MT_ROOT/selftest/tests/stacks_compare.py" $how "$MT_TMP/gdb_$name.log" "$g/st_$name.json" $src 2>&1)
        local ok=$?
        check "stacks $name" $ok "$(echo "$res" | tr '\n' ' ' | cut -c1-600)"
        [ $ok = 0 ] || { echo "--- gdb_$name.log (head)"; grep -a -m 30 -E '^#|^Breakpoint|warning|error' "$MT_TMP/gdb_$name.log"; echo "--- st_$name.err"; head -n 5 "$g/st_$name.err"; cat "$g/gdbserver_$name.log"; }
    done
    # The same program without libc's debug file: every stack one of the
    # gdb-checked ones above or the start of one (never a wrong frame);
    # stdout's buffer (puts, through _IO_file_doallocate) to main.
    local res
    res=$(python3 "$MT_ROOT/selftest/tests/stacks_same_pcs.py" "$g/st_libc.json" "$g/st_libc_nodebug.json" _IO_file_doallocate 2>&1)
    check "stacks libc without debug files" $? "$(echo "$res" | tr '\n' ' ' | cut -c1-900)"
    # Without the guest's debug file but with the host's through memtrace-fs
    # (-m): gdb's stacks again.
    res=$(python3 "$MT_ROOT/selftest/tests/stacks_compare.py" --functions "$MT_TMP/gdb_libc.log" "$g/st_libc_mdns.json" stacks_libc.c 2>&1)
    check "stacks libc with -m" $? "$(echo "$res" | tr '\n' ' ' | cut -c1-600); $(grep -m1 'memtrace-fs' "$g/st_libc_mdns.err")"
}

board_judge_net() {
    local g=$1

    grep -q 'cache_insert() in .*demo.c' "$g/demo.local"
    check "net reference" $? "the local trace of the unstripped demo names cache_insert() in demo.c"
    ! grep -q cache_insert "$g/demo.stripped"
    check "net stripped" $? "the local trace of the stripped demo has no names (so names below came from the host)"
    # The reports must also name the frames (two empty reports are equal).
    # The peak's time differs from run to run: report_timeless masks it.
    diff -u <(report_timeless "$g/demo.local") <(report_timeless "$g/demo.mdns") >"$MT_TMP/mdns.diff" &&
        grep -q 'cache_insert() in .*demo.c' "$g/demo.mdns" &&
        grep -q "found memtrace-fs at $ADDR_H:3002" "$g/demo.mdns.err"
    check "net -m" $? "memtrace -m in the VM: $(grep -m1 'memtrace-fs' "$g/demo.mdns.err"); report $( [ -s "$MT_TMP/mdns.diff" ] && echo differs || echo identical) to the local unstripped trace"
    [ -s "$MT_TMP/mdns.diff" ] && head -n 20 "$MT_TMP/mdns.diff"
    diff -u <(report_timeless "$g/demo.local") <(report_timeless "$g/demo.rev") >"$MT_TMP/rev.diff" &&
        grep -q 'cache_insert() in .*demo.c' "$g/demo.rev"
    check "net -l" $? "memtrace -l in the VM, memtrace-fs -c from the host: report $( [ -s "$MT_TMP/rev.diff" ] && echo differs || echo identical) to the local unstripped trace"
    [ -s "$MT_TMP/rev.diff" ] && { head -n 20 "$MT_TMP/rev.diff"; cat "$g/demo.rev.err" "$MT_TMP/fs-rev.log"; }
    true
}

# C++ exceptions thrown out of an intercepted function (issue 29; the
# programs of intercept_exceptions.sh): under each engine the program
# prints and exits as untraced (no std::terminate), no release is called
# misuse, the JSON names the engine asked for, and the HEAP SUMMARY equals
# valgrind's in the same VM (except_own's run is the oracle of except_std
# too: valgrind cannot throw from its own operator new).
board_judge_except() {
    local g=$1 prog e vg mt ok eng
    for prog in except_std except_own except_inner; do
        vg=$g/ex_except_own.vg
        [ $prog = except_inner ] && vg=$g/ex_except_inner.vg
        vg=$(valgrind_log_figures "$vg" 2>&1)
        for e in ptrace agent; do
            mt=$(memtrace_json_figures "$g/ex_${prog}_$e.json" 2>&1)
            eng=$(report_engine "$g/ex_${prog}_$e.json" 2>&1)
            ok=1
            # (the untraced run caught its exceptions: it says so)
            grep -q -E '^(caught|kept) ' "$g/ex_$prog.plain" &&
                [ "$(rc_of ex_${prog}_plain rc)" = 0 ] && [ "$(rc_of ex_${prog}_$e memtrace)" = 0 ] &&
                [ -s "$g/ex_$prog.plain" ] && cmp -s "$g/ex_$prog.plain" "$g/ex_${prog}_$e.out" &&
                ! grep -aq 'terminate called' "$g/ex_${prog}_$e.err" &&
                ! grep -aqE 'Invalid|Mismatched' "$g/ex_${prog}_$e.err" &&
                [ "$eng" = $e ] && [ "$vg" = "$mt" ] && ok=0
            check "except $prog $e" $ok "exit $(rc_of ex_${prog}_$e memtrace) (untraced $(rc_of ex_${prog}_plain rc)), output $(cmp -s "$g/ex_$prog.plain" "$g/ex_${prog}_$e.out" && echo same || echo differs), engine $eng, valgrind $vg | memtrace $mt $(grep -a -m2 -E 'terminate|what\(\)|Invalid|Mismatched|warn' "$g/ex_${prog}_$e.err" | tr '\n' ' ')"
        done
    done
}

# The stack of sigalt_jump's handler mallocs (100 of 24-31 bytes; main's
# 100 are of 16), from engine_stacks.py's lines.
sigalt_handler_stack() { awk '$2 == 100 && $3 == 100 && $1 != 1600' "$1" | head -n 1; }

board_judge_agent() {
    local g=$1 c vg mt rc
    if [ "$BOARD_ARCH" != aarch64 ] && [ "$BOARD_ARCH" != arm ] && [ "$BOARD_ARCH" != i386 ]; then
        local why
        why=$(grep -a 'agent engine unavailable' "$g/ag_fallback.err")
        [ "$(printf '%s\n' "$why" | grep -c .)" = 1 ] && echo "$why" | grep -q "using breakpoints" &&
            [ "$(rc_of ag_fallback memtrace)" = 7 ] &&
            [ "$(report_engine "$g/ag_fallback.json")" = ptrace ]
        check "agent fallback" $? "--engine=agent on $BOARD_ARCH: [$why], exit $(rc_of ag_fallback memtrace), JSON engine ptrace"
        return
    fi
    for c in bench1 bench4 cxx; do
        local vgl=$g/ag_$c.vg
        [ -f "$vgl" ] || vgl=$g/$c.vg
        vg=$(valgrind_log_figures "$vgl" 2>&1)
        mt=$(memtrace_json_figures "$g/ag_$c.json" 2>&1)
        local eng
        eng=$(report_engine "$g/ag_$c.json" 2>&1)
        [ "$vg" = "$mt" ] && [ "$eng" = agent ] && [ "$(rc_of ag_$c memtrace)" = 0 ]
        check "agent heap $c" $? "valgrind $vg | memtrace --engine=agent $mt (engine $eng, exit $(rc_of ag_$c memtrace), seconds $(rc_of ag_$c seconds)) $(grep -a -m2 -E 'warn|error' "$g/ag_$c.err" | tr '\n' ' ')"
        # The same stacks as the breakpoint engine's, most of them unwound
        # in the target with the rows the tracer compiled.
        python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "$g/$c.json" >"$MT_TMP/eng_$c.ptrace" 2>&1
        python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "$g/ag_$c.json" >"$MT_TMP/eng_$c.agent" 2>&1
        local stats in_target
        stats=$(grep -a -m1 'agent engine: .* calls' "$g/ag_$c.err")
        in_target=$(echo "$stats" | sed -n 's/.*unwound in the target: \([0-9]*\).*/\1/p')
        # Against breakpoints: the heap phase's report must be theirs, or the
        # comparison would be the agent's with itself.
        local base_engine
        base_engine=$(report_engine "$g/$c.json" 2>&1)
        diff "$MT_TMP/eng_$c.ptrace" "$MT_TMP/eng_$c.agent" >"$MT_TMP/eng_$c.diff" &&
            [ "$base_engine" = ptrace ] &&
            [ "$(wc -l <"$MT_TMP/eng_$c.agent")" -gt 1 ] && { [ $c = cxx ] || [ "${in_target:-0}" -gt 0 ]; }
        check "agent stacks $c" $? "$(($(wc -l <"$MT_TMP/eng_$c.agent") - 1)) stacks: the agent's $( [ -s "$MT_TMP/eng_$c.diff" ] && echo differ || echo equal) to the $base_engine engine's; ${stats#memtrace: }"
        [ -s "$MT_TMP/eng_$c.diff" ] && head -n 20 "$MT_TMP/eng_$c.diff"
    done
    local bin
    # (sigalt_O0: handlers on an alternate signal stack, the frames below
    # the signal frame on the other stack: the agent's second window)
    for bin in stacks_O2 stacks_cxx sigalt_O0; do
        python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "$g/eng_${bin}_ptrace.json" >"$MT_TMP/eng_$bin.ptrace" 2>&1
        python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "$g/eng_${bin}_agent.json" >"$MT_TMP/eng_$bin.agent" 2>&1
        diff "$MT_TMP/eng_$bin.ptrace" "$MT_TMP/eng_$bin.agent" >"$MT_TMP/eng_$bin.diff" &&
            [ "$(wc -l <"$MT_TMP/eng_$bin.agent")" -gt 1 ] &&
            [ "$(report_engine "$g/eng_${bin}_agent.json")" = agent ] &&
            # the handlers' stack goes on below the signal frame to main
            # and _start (three frames of the program; one where it ended
            # at the signal frame)
            { [ $bin != sigalt_O0 ] || [ "$(sigalt_handler_stack "$MT_TMP/eng_$bin.agent" | grep -o 'sigalt_O0+' | wc -l)" -ge 3 ]; }
        check "agent stacks $bin" $? "$(head -1 "$MT_TMP/eng_$bin.agent"), $(($(wc -l <"$MT_TMP/eng_$bin.agent") - 1)) stacks: the agent's $( [ -s "$MT_TMP/eng_$bin.diff" ] && echo differ || echo equal) to the breakpoint engine's"
        [ -s "$MT_TMP/eng_$bin.diff" ] && { head -n 20 "$MT_TMP/eng_$bin.diff"; head -n 5 "$g/eng_${bin}_agent.err"; }
        [ $bin = sigalt_O0 ] && echo "    the handlers' stack (agent): $(sigalt_handler_stack "$MT_TMP/eng_$bin.agent")"
    done
    # -f: every process of proc_fork's tree with the same figures and stacks
    # from both engines, each process's output as untraced.
    local tree=$MT_ROOT/selftest/tests/proc_tree.py e
    for e in ptrace agent; do
        python3 "$tree" memtrace "$g/fk_$e.json" stacks 2>&1 | sed "s/^\([^ ]*\) $e/\1/" >"$MT_TMP/fk_$e.txt"
    done
    diff "$MT_TMP/fk_ptrace.txt" "$MT_TMP/fk_agent.txt" >"$MT_TMP/fk.diff" &&
        [ "$(grep -vc '^ ' "$MT_TMP/fk_agent.txt")" -ge 3 ] && cmp -s "$g/fk_plain.out" "$g/fk_agent.out" &&
        [ -s "$g/fk_plain.out" ] && [ "$(rc_of fk_agent memtrace)" = 0 ] && [ "$(rc_of fk_ptrace memtrace)" = 0 ]
    check "agent fork" $? "memtrace -f on proc_fork: $(grep -vc '^ ' "$MT_TMP/fk_agent.txt") processes, $(grep -c '^ ' "$MT_TMP/fk_agent.txt") stacks, the agent's $( [ -s "$MT_TMP/fk.diff" ] && echo differ || echo equal) to the breakpoint engine's; outputs $(cmp -s "$g/fk_plain.out" "$g/fk_agent.out" && echo same || echo differ) as untraced"
    [ -s "$MT_TMP/fk.diff" ] && { head -n 20 "$MT_TMP/fk.diff"; head -n 5 "$g/fk_agent.err"; }
    local kl
    kl=$(grep -a '^@@RC ag_kill ' "$OUT/console.log" | tail -n 1)
    [ "$(rc_of ag_kill agent_in)" -gt 0 ] 2>/dev/null && [ "$(rc_of ag_kill running_at_kill)" = yes ] &&
        [ "$(rc_of ag_kill prog)" = 0 ] && grep -q '^mt_churn:' "$g/ag_kill.plain" &&
        cmp -s "$g/ag_kill.plain" "$g/ag_kill.out"
    check "agent sigkill" $? "SIGKILL to memtrace --engine=agent -p on mt_churn (4 busy threads): [${kl#@@RC }], output $(cmp -s "$g/ag_kill.plain" "$g/ag_kill.out" && echo same || echo differs) as untraced [$(grep -a -m1 '^mt_churn:' "$g/ag_kill.out")]"
    rc=$(grep -a '^@@RC ag_ticker ' "$OUT/console.log" | tail -n 1)
    [ -s "$g/ag_ticker.plain" ] && cmp -s "$g/ag_ticker.plain" "$g/ag_ticker.out" &&
        [ "$(rc_of ag_ticker running_after)" = yes ] && [ "$(rc_of ag_ticker agent_maps)" = 0 ] &&
        [ "$(rc_of ag_ticker prog)" = 0 ] && grep -q "agent unmapped" "$g/ag_ticker.err" &&
        [ "$(report_engine "$g/ag_ticker.json")" = agent ]
    check "agent detach" $? "SIGTERM to memtrace --engine=agent -p: [${rc#@@RC }], output $(cmp -s "$g/ag_ticker.plain" "$g/ag_ticker.out" && echo same || echo differs) as untraced; $(grep -a -m1 'agent engine:' "$g/ag_ticker.err")"
}
