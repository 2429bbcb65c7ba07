# shellcheck shell=sh
# The board suite, guest side (busybox sh, sourced by the board's init after
# /mt/env).  selftest/tests/board_common.bash builds /mt and judges what this
# sends back on the console: every oracle (valgrind's logs, gdb's backtraces
# through gdbserver) runs on this same kernel; the host only compares.
#
# /mt/memtrace     the cross-built tracer
# /mt/progs/       the cross-built test programs
# env: GUEST_IP, HOST_IP, NEWS (operator new names for gdb)
#
# "@@STEP NAME ARGS" lines tell the host that the guest waits for it (gdb
# connecting to gdbserver, memtrace-fs -c connecting to memtrace -l).
MT=/mt/memtrace
P=/mt/progs
step() { echo "@@STEP $*"; }
# PHASES (from the host; default all) picks phases, for debugging one.
want() { case " ${PHASES:-heap leak rss heaps alloc sigterm stacks net agent except} " in *" $1 "*) return 0 ;; esac; return 1; }
note() { echo "@@NOTE $*"; }

# heap NAME PROGRAM ARGS: valgrind, an untraced run and memtrace on the same
# command; exit statuses and outputs go back with valgrind's log and the
# JSON report (exit7 and segv: no valgrind, their check is the status).
up() { read u _ </proc/uptime; echo "$u"; }
heap() {
    name=$1
    shift
    t0=$(up)
    vrc=-
    if [ $name != exit7 ] && [ $name != segv ]; then
        # Inline info only names frames (not compared here) and costs time.
        valgrind --run-libc-freeres=no --run-cxx-freeres=no --read-inline-info=no \
            --log-file=/tmp/$name.vg "$@" >/dev/null 2>&1
        vrc=$?
    fi
    t1=$(up)
    "$@" >/tmp/$name.plain 2>/tmp/$name.plain.err
    prc=$?
    t2=$(up)
    # Breakpoints here, whatever the default: the agent phase compares its
    # stacks with these reports (the stacks phase checks the default's).
    $MT -q -j --engine=ptrace -o /tmp/$name.json "$@" >/tmp/$name.out 2>/tmp/$name.err
    mrc=$?
    t3=$(up)
    echo "@@RC $name plain=$prc memtrace=$mrc valgrind=$vrc seconds=$t0,$t1,$t2,$t3"
    [ -f /tmp/$name.vg ] && send $name.vg /tmp/$name.vg
    send $name.json /tmp/$name.json
    send $name.plain /tmp/$name.plain
    send $name.out /tmp/$name.out
    send $name.err /tmp/$name.err
}

if want heap; then
echo "@@PHASE heap $(date +%s)"
heap bench1 $P/allocbench 100 8 1
heap bench4 $P/allocbench 40 8 4
heap cxx $P/intercept_cxx
heap memalign $P/intercept_memalign
heap exit7 $P/exit_status
heap segv $P/exit_status segv
fi

if want leak; then
echo "@@PHASE leak $(date +%s)"
valgrind --leak-check=full --run-libc-freeres=no --read-inline-info=no --log-file=/tmp/leak.vg $P/leak_kinds >/dev/null 2>&1
$MT -q -a -j -o /tmp/leak.json $P/leak_kinds >/dev/null 2>/tmp/leak.err
echo "@@RC leak memtrace=$?"
# and with breakpoints where the default is the agent
$MT -q -a -j --engine=ptrace -o /tmp/leak_ptrace.json $P/leak_kinds >/dev/null 2>>/tmp/leak.err
send leak.vg /tmp/leak.vg
send leak.json /tmp/leak.json
send leak_ptrace.json /tmp/leak_ptrace.json
send leak.err /tmp/leak.err
fi

# Where the RSS went: rss_parts paused at its three stops under memtrace's
# console (-C, stdin a fifo), `report -j` at each, then the kernel's
# smaps_rollup Rss read from here at the same pause, after the report, as
# rss_parts.sh does (the program's own reading comes before it prints its
# stop line; its first pass through the wait after that can still fault in
# file pages).  Under each engine.
# wait_line FILE REGEX: up to 60 s for a line in FILE
wait_line() {
    n=0
    while ! grep -q "$2" "$1" 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
}
if want rss; then
echo "@@PHASE rss $(date +%s)"
for e in agent ptrace; do
    d=/tmp/rss_ctl_$e
    mkdir -p $d
    mkfifo /tmp/rss_$e.fifo
    t0=$(up)
    $MT -q -C --engine=$e -j -o /tmp/rss_${e}_end.json $P/rss_parts $d </tmp/rss_$e.fifo >/tmp/rss_$e.out 2>/tmp/rss_$e.err &
    m=$!
    exec 4>/tmp/rss_$e.fifo
    for s in 1 2 3; do
        wait_line /tmp/rss_$e.out "^stop $s "
        echo "report -j > /tmp/rss_${e}_$s.json" >&4
        wait_line /tmp/rss_$e.out "^report written to /tmp/rss_${e}_$s.json"
        sed -n 's/^Rss: *\([0-9]*\) kB$/\1/p' /proc/$(cat $d/pid)/smaps_rollup >/tmp/rss_${e}_$s.rollup
        touch $d/go$s
    done
    exec 4>&-
    wait $m
    echo "@@RC rss_$e memtrace=$? seconds=$t0,$(up)"
    for f in rss_$e.out rss_$e.err rss_${e}_1.json rss_${e}_2.json rss_${e}_3.json rss_${e}_end.json \
             rss_${e}_1.rollup rss_${e}_2.rollup rss_${e}_3.rollup; do
        [ -f /tmp/$f ] && send $f /tmp/$f
    done
done
fi

# Valgrind's client requests (docs/custom-heaps.md): heaps_arena and
# heaps_pool under memcheck here (the oracle, on this kernel; its stdout
# says RUNNING_ON_VALGRIND is 1 there), untraced, and memtrace -a under
# each engine.
if want heaps; then
echo "@@PHASE heaps $(date +%s)"
for c in "arena_leak heaps_arena leak" "pool heaps_pool" "pool_meta heaps_pool meta" "arena_misuse heaps_arena misuse"; do
    set -- $c
    name=hp_$1 prog=$P/$2
    shift 2
    t0=$(up)
    valgrind --leak-check=full --run-libc-freeres=no --read-inline-info=no \
        --log-file=/tmp/$name.vg "$prog" "$@" >/tmp/$name.vgout 2>/dev/null
    "$prog" "$@" >/tmp/$name.plain 2>&1
    echo "@@RC $name plain=$?"
    t1=$(up)
    for e in agent ptrace; do
        $MT -q -a -j --engine=$e -o /tmp/${name}_$e.json "$prog" "$@" >/tmp/${name}_$e.out 2>/tmp/${name}_$e.err
        echo "@@RC ${name}_$e memtrace=$? seconds=$t1,$(up)"
        for f in ${name}_$e.json ${name}_$e.out ${name}_$e.err; do send $f /tmp/$f; done
    done
    echo "@@RC ${name}_vg seconds=$t0,$t1"
    for f in $name.vg $name.vgout $name.plain; do send $f /tmp/$f; done
done
# armhf: the arena built in ARM state (memcheck's figures: the Thumb-2 build's)
if [ -x $P/heaps_arena_arm ]; then
    for e in agent ptrace; do
        n=hp_arena_arm_$e
        $MT -q -a -j --engine=$e -o /tmp/$n.json $P/heaps_arena_arm leak >/tmp/$n.out 2>/tmp/$n.err
        echo "@@RC $n memtrace=$?"
        for f in $n.json $n.out $n.err; do send $f /tmp/$f; done
    done
fi
# Attached (-p) after heaps_attach filled its arena and pool, as
# heaps_client_attach.sh: memcheck on the later part alone is the oracle.
# The console answers `status` (and the sentinel, `help quit`) once the
# attach is complete; only then does the program go on.
valgrind --run-libc-freeres=no --run-cxx-freeres=no --read-inline-info=no \
    --log-file=/tmp/hp_attach.vg $P/heaps_attach later >/dev/null 2>&1
send hp_attach.vg /tmp/hp_attach.vg
for e in agent ptrace; do
    hn=hp_attach_$e # (not n: wait_line counts in n)
    d=/tmp/$hn.d
    mkdir -p $d
    mkfifo $d/fifo
    $P/heaps_attach attach $d/ready $d/go &
    prog=$!
    k=0
    while [ ! -e $d/ready ] && [ $k -lt 600 ]; do sleep 0.1; k=$((k + 1)); done
    $MT -q -j --engine=$e -o /tmp/$hn.json -p $prog <$d/fifo >/tmp/$hn.out 2>/tmp/$hn.err &
    m=$!
    exec 4>$d/fifo
    printf 'status\nhelp quit\n' >&4
    wait_line /tmp/$hn.out 'detach from the target, write the final report, exit'
    : >$d/go
    wait $prog
    prc=$?
    wait $m
    mrc=$?
    exec 4>&-
    echo "@@RC $hn memtrace=$mrc prog=$prc"
    for f in $hn.json $hn.err; do send $f /tmp/$f; done
done
# The GLib program (ARM boards), as heaps_glib.sh: memcheck and memtrace -a
# under each engine on its two modes, G_SLICE=always-malloc in every run.
if [ -x $P/glib_heap ]; then
    export G_SLICE=always-malloc
    for mode in base work; do
        n=hp_glib_$mode
        valgrind --leak-check=full --show-leak-kinds=all --num-callers=40 --run-libc-freeres=no \
            --read-inline-info=no --log-file=/tmp/$n.vg $P/glib_heap $mode >/tmp/$n.vgout 2>&1
        $P/glib_heap $mode >/tmp/$n.plain 2>&1
        echo "@@RC $n plain=$?"
        for f in $n.vg $n.vgout $n.plain; do send $f /tmp/$f; done
        for e in agent ptrace; do
            $MT -a -j --engine=$e -o /tmp/${n}_$e.json $P/glib_heap $mode >/tmp/${n}_$e.out 2>/tmp/${n}_$e.err
            echo "@@RC ${n}_$e memtrace=$?"
            for f in ${n}_$e.json ${n}_$e.out ${n}_$e.err; do send $f /tmp/$f; done
        done
    done
    unset G_SLICE
fi
fi

# Programs whose allocator is a library of their own (jemalloc, tcmalloc,
# mimalloc; shared, static, their own APIs), as intercept_allocator_*.sh
# on x86_64: valgrind here with the allocator's soname as "somalloc"
# (NONE: the executable's own), on the program itself or, for an API
# valgrind does not replace, on its -DEQUIV twin; memtrace under each
# engine with the environment valgrind gives its program.  A case is
# NAME:PROGRAM:ORACLE_PROGRAM:MODE:SYNONYM (je, tc, mi, NONE, - for none).
ALLOC_PAIRS=200
if want alloc; then
echo "@@PHASE alloc $(date +%s)"
for c in je_shared:je_shared:je_shared:std:je je_own:je_own:je_equiv:own:- \
         je_static:je_static:je_static:std:NONE je_static_own:je_static_own:je_equiv:own:- \
         tc_shared:tc_shared:tc_shared:std:tc tc_own:tc_own:tc_own:own:tc \
         tc_static:tc_static:tc_static:std:NONE tc_static_own:tc_static_own:tc_static_own:own:NONE \
         mi_shared:mi_shared:mi_shared:std:mi mi_own:mi_own:mi_equiv:own:-; do
    IFS=: read name prog oracle mode syn <<EOC
$c
EOC
    vg=al_vg_${oracle}_$syn
    t0=$(up)
    if [ ! -f /tmp/$vg.vg ]; then
        case $syn in
            je) set -- --soname-synonyms='somalloc=*jemalloc*' ;;
            tc) set -- --soname-synonyms='somalloc=*tcmalloc*' ;;
            mi) set -- --soname-synonyms='somalloc=*mimalloc*' ;;
            NONE) set -- --soname-synonyms=somalloc=NONE ;;
            *) set -- ;;
        esac
        # No undefined-value tracking: the heap's figures and the misuse
        # errors do not depend on it, and memcheck's time in the VM does.
        valgrind "$@" --undef-value-errors=no --run-libc-freeres=no --run-cxx-freeres=no \
            --read-inline-info=no --log-file=/tmp/$vg.vg $P/$oracle $mode $ALLOC_PAIRS >/dev/null 2>&1
        echo "@@RC $vg valgrind=$? seconds=$t0,$(up)"
        send $vg.vg /tmp/$vg.vg
    fi
    for e in agent ptrace; do
        t1=$(up)
        GLIBCXX_FORCE_NEW=1 GLIBCPP_FORCE_NEW=1 $MT -q -j --engine=$e -o /tmp/al_${name}_$e.json \
            $P/$prog $mode $ALLOC_PAIRS >/dev/null 2>/tmp/al_${name}_$e.err
        echo "@@RC al_${name}_$e memtrace=$? oracle=$vg seconds=$t1,$(up)"
        send al_${name}_$e.json /tmp/al_${name}_$e.json
        send al_${name}_$e.err /tmp/al_${name}_$e.err
    done
done
fi

# SIGTERM to memtrace while it traces a busy multi-threaded program: the
# program must run on to its own end with the checksum of an untraced run.
# mt_churn makes one malloc or realloc per round on each thread: fewer
# than 4 * CHURN allocations in the report show the trace was cut short.
CHURN=200000
if want sigterm; then
echo "@@PHASE sigterm $(date +%s)"
$P/mt_churn 4 $CHURN >/tmp/churn.plain 2>&1
echo "@@RC churn_plain plain=$?"
send churn.plain /tmp/churn.plain
$MT -q -j -o /tmp/churn.json $P/mt_churn 4 $CHURN >/tmp/churn.out 2>/tmp/churn.err &
m=$!
sleep 2
prog=$(pidof mt_churn)
note "before SIGTERM: mt_churn pids [$prog]"
kill -TERM $m
wait $m
mrc=$?
left=$(pidof mt_churn)
note "memtrace exited $mrc; mt_churn still running: [$left]"
n=0
while [ -n "$(pidof mt_churn)" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
echo "@@RC churn memtrace=$mrc running_after=$( [ -n "$left" ] && echo yes || echo no) ended=$( [ -z "$(pidof mt_churn)" ] && echo yes || echo no)"
send churn.out /tmp/churn.out
send churn.err /tmp/churn.err
send churn.json /tmp/churn.json
fi

# Stacks: gdb (on the host, through gdbserver here) and memtrace on the
# same programs.
if want stacks; then
echo "@@PHASE stacks $(date +%s)"
port=2345
for c in c_O0:stacks_O0 c_O2:stacks_O2 cxx:stacks_cxx threads:stacks_threads libc:stacks_libc; do
    name=${c%%:*}
    bin=${c#*:}
    step gdb $name $port
    LD_LIBRARY_PATH=$P timeout 180 gdbserver --once $GUEST_IP:$port $P/$bin >/tmp/gdbserver_$name.log 2>&1
    echo "@@RC gdbserver_$name gdbserver=$?"
    LD_LIBRARY_PATH=$P $MT -q -d 40 -j -o /tmp/st_$name.json $P/$bin >/dev/null 2>/tmp/st_$name.err
    echo "@@RC st_$name memtrace=$?"
    send st_$name.json /tmp/st_$name.json
    send st_$name.err /tmp/st_$name.err
    send gdbserver_$name.log /tmp/gdbserver_$name.log
    port=$((port + 1))
done
# Allocations inside libc traced again without libc's debug file (hidden
# for these runs only: valgrind needs it): .ARM.exidx and prologue analysis
# on armhf instead of the debug file's .debug_frame; then with -m, the
# debug file from the host's memtrace-fs.
mv /usr/lib/debug /usr/lib/debug.off
LD_LIBRARY_PATH=$P $MT -q -d 40 -j -o /tmp/st_libc_nodebug.json $P/stacks_libc >/dev/null 2>/tmp/st_libc_nodebug.err
echo "@@RC st_libc_nodebug memtrace=$?"
timeout 120 $MT -m -d 40 -j -o /tmp/st_libc_mdns.json $P/stacks_libc >/dev/null 2>/tmp/st_libc_mdns.err
echo "@@RC st_libc_mdns memtrace=$?"
mv /usr/lib/debug.off /usr/lib/debug
send st_libc_nodebug.json /tmp/st_libc_nodebug.json
send st_libc_nodebug.err /tmp/st_libc_nodebug.err
send st_libc_mdns.json /tmp/st_libc_mdns.json
send st_libc_mdns.err /tmp/st_libc_mdns.err
fi

# The board as a network peer: the stripped demo traced with names from the
# host's memtrace-fs, found by mDNS (-m) and with reversed roles (-l).
if want net; then
echo "@@PHASE net $(date +%s)"
mkdir -p /mt/net
cp $P/demo /mt/net/demo
$MT -q -o /tmp/demo.local /mt/net/demo >/dev/null 2>/tmp/demo.local.err
echo "@@RC demo_local memtrace=$?"
cp $P/demo.stripped /mt/net/demo
$MT -q -o /tmp/demo.stripped /mt/net/demo >/dev/null 2>&1
echo "@@RC demo_stripped memtrace=$?"
timeout 120 $MT -m -o /tmp/demo.mdns /mt/net/demo >/dev/null 2>/tmp/demo.mdns.err
echo "@@RC demo_mdns memtrace=$?"
step rev $GUEST_IP 4003
timeout 120 $MT -l $GUEST_IP:4003 -o /tmp/demo.rev /mt/net/demo >/dev/null 2>/tmp/demo.rev.err
echo "@@RC demo_rev memtrace=$?"
for f in demo.local demo.local.err demo.stripped demo.mdns demo.mdns.err demo.rev demo.rev.err; do
    send $f /tmp/$f
done
fi
# The agent engine (--engine=agent): where memtrace carries an agent for
# the CPU, HEAP SUMMARY against valgrind's (the heap phase's logs, else
# valgrind runs here), the stacks against the breakpoint engine's on the
# same programs (the heap phase's reports, else made here), SIGKILL of
# memtrace attached to a busy program (which must run on), JSON "engine", and a detach (SIGTERM to memtrace attached
# with -p) after which the program runs on to an untraced run's output.
# Elsewhere the one line that says why breakpoints are used.
if want agent; then
echo "@@PHASE agent $(date +%s)"
if $MT --version 2>/dev/null | grep -q 'engines:.*agent'; then
    for c in "bench1 $P/allocbench 100 8 1" "bench4 $P/allocbench 40 8 4" "cxx $P/intercept_cxx"; do
        set -- $c
        name=$1
        shift
        if [ ! -f /tmp/$name.vg ]; then
            valgrind --run-libc-freeres=no --run-cxx-freeres=no --read-inline-info=no \
                --log-file=/tmp/ag_$name.vg "$@" >/dev/null 2>&1
            send ag_$name.vg /tmp/ag_$name.vg
        fi
        if [ ! -f /tmp/$name.json ]; then
            $MT -q -j --engine=ptrace -o /tmp/$name.json "$@" >/dev/null 2>&1
            send $name.json /tmp/$name.json
        fi
        t0=$(up)
        MEMTRACE_AGENT_STATS=1 $MT --engine=agent -j -o /tmp/ag_$name.json "$@" >/tmp/ag_$name.out 2>/tmp/ag_$name.err
        echo "@@RC ag_$name memtrace=$? seconds=$t0,$(up)"
        send ag_$name.json /tmp/ag_$name.json
        send ag_$name.err /tmp/ag_$name.err
    done
    for bin in stacks_O2 stacks_cxx sigalt_O0; do
        args=
        [ $bin = sigalt_O0 ] && args=100
        for e in ptrace agent; do
            LD_LIBRARY_PATH=$P $MT -q -d 40 -j --engine=$e -o /tmp/eng_${bin}_$e.json $P/$bin $args >/dev/null 2>/tmp/eng_${bin}_$e.err
            echo "@@RC eng_${bin}_$e memtrace=$?"
            send eng_${bin}_$e.json /tmp/eng_${bin}_$e.json
            send eng_${bin}_$e.err /tmp/eng_${bin}_$e.err
        done
    done
    # -f: proc_fork's tree (fork, vfork+exec, a fork in a child) by both engines.
    for e in ptrace agent; do
        $MT -q -f -d 40 -j --engine=$e -o /tmp/fk_$e.json $P/proc_fork >/tmp/fk_$e.out 2>/tmp/fk_$e.err
        echo "@@RC fk_$e memtrace=$?"
        send fk_$e.json /tmp/fk_$e.json
        send fk_$e.err /tmp/fk_$e.err
    done
    $P/proc_fork >/tmp/fk_plain.out 2>&1
    for f in fk_plain.out fk_ptrace.out fk_agent.out; do
        sort /tmp/$f >/tmp/$f.sorted
        send $f /tmp/$f.sorted
    done
    # SIGKILL of memtrace attached with the agent to a busy 4-thread program:
    # the guardian switches the agent off and the program runs on.
    [ -f /tmp/churn.plain ] || $P/mt_churn 4 $CHURN >/tmp/churn.plain 2>&1
    $P/mt_churn 4 $CHURN >/tmp/ag_kill.out 2>&1 &
    prog=$!
    $MT --engine=agent -q -o /dev/null -p $prog >/dev/null 2>/tmp/ag_kill.err &
    m=$!
    n=0
    while ! grep -q memtrace-agent /proc/$prog/maps 2>/dev/null && [ $n -lt 200 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    sleep 0.5
    in=$(grep -c memtrace-agent /proc/$prog/maps 2>/dev/null)
    kill -KILL $m
    running=no
    kill -0 $prog 2>/dev/null && running=yes
    wait $prog
    echo "@@RC ag_kill agent_in=${in:-0} running_at_kill=$running prog=$?"
    send ag_kill.plain /tmp/churn.plain
    send ag_kill.out /tmp/ag_kill.out
    send ag_kill.err /tmp/ag_kill.err
    # rely_ticker: busy for a few seconds whatever the engine costs.
    $P/rely_ticker 2 4000 2 >/tmp/ag_ticker.plain 2>&1
    $P/rely_ticker 2 4000 2 >/tmp/ag_ticker.out 2>&1 &
    prog=$!
    $MT --engine=agent -j -o /tmp/ag_ticker.json -p $prog >/dev/null 2>/tmp/ag_ticker.err &
    m=$!
    sleep 2
    kill -TERM $m
    wait $m
    mrc=$?
    running=no
    kill -0 $prog 2>/dev/null && running=yes
    maps=$(grep -c memtrace-agent /proc/$prog/maps 2>/dev/null)
    wait $prog
    echo "@@RC ag_ticker memtrace=$mrc running_after=$running agent_maps=${maps:-0} prog=$?"
    send ag_ticker.plain /tmp/ag_ticker.plain
    send ag_ticker.out /tmp/ag_ticker.out
    send ag_ticker.json /tmp/ag_ticker.json
    send ag_ticker.err /tmp/ag_ticker.err
else
    $MT --engine=agent -q -j -o /tmp/ag_fallback.json $P/exit_status >/dev/null 2>/tmp/ag_fallback.err
    echo "@@RC ag_fallback memtrace=$?"
    send ag_fallback.json /tmp/ag_fallback.json
    send ag_fallback.err /tmp/ag_fallback.err
fi
fi

# C++ exceptions thrown out of intercepted functions (issue 29): each
# program untraced, under valgrind (except_own's run is except_std's
# oracle too) and under both engines.
if want except; then
echo "@@PHASE except $(date +%s)"
for prog in except_own except_inner; do
    valgrind --soname-synonyms=somalloc=nouserintercepts --run-libc-freeres=no --run-cxx-freeres=no \
        --read-inline-info=no --log-file=/tmp/ex_$prog.vg $P/$prog >/dev/null 2>&1
    send ex_$prog.vg /tmp/ex_$prog.vg
done
for prog in except_std except_own except_inner; do
    $P/$prog >/tmp/ex_$prog.plain 2>/dev/null
    echo "@@RC ex_${prog}_plain rc=$?"
    send ex_$prog.plain /tmp/ex_$prog.plain
    for e in ptrace agent; do
        $MT -q -j --engine=$e -o /tmp/ex_${prog}_$e.json $P/$prog >/tmp/ex_${prog}_$e.out 2>/tmp/ex_${prog}_$e.err
        echo "@@RC ex_${prog}_$e memtrace=$?"
        send ex_${prog}_$e.json /tmp/ex_${prog}_$e.json
        send ex_${prog}_$e.out /tmp/ex_${prog}_$e.out
        send ex_${prog}_$e.err /tmp/ex_${prog}_$e.err
    done
done
fi
echo "@@PHASE done $(date +%s)"
