# gdb-multiarch -batch -x arch_cross_capture.py: connects to a program that
# qemu-user runs under its gdbstub, stops at the first instruction of a
# function (where memtrace's breakpoints stop a thread) and writes one unwind
# snapshot per stop, with gdb's own backtrace as the expected answer.
#
# Environment: CAP_SOCK (qemu -g socket path), CAP_PROG (the program, host
# path), CAP_SYSROOT (the target's root, e.g. /usr/aarch64-linux-gnu),
# CAP_OUT (directory), CAP_BREAK (function, default malloc), CAP_MAX (stops),
# CAP_START (function after which to record, default main).
#
# Format: version 1 of selftest/tests/unwind_capture.py (memtrace-unwind-
# snapshot, arch, addr_size, endian, reg, memory, frame), except that qemu's
# gdbstub cannot list mappings (no "info proc mappings"), so modules are given
# by their sections as gdb loaded them, plus what gdb says of each frame:
#
#   section 0xSTART 0xEND NAME PATH   runtime extent of one section of PATH
#   func N NAME                       gdb's function of frame N (?? if none)
#   line N LINE FILE                  gdb's source line of frame N, when known
import os
import re
import gdb

OUT = os.environ.get("CAP_OUT", ".")
MAX = int(os.environ.get("CAP_MAX", "8"))
BREAK = os.environ.get("CAP_BREAK", "malloc")
WINDOW = 64 * 1024
CHUNK = 4096

DWARF_REGS = {
    "aarch64": ["x%d" % i for i in range(31)] + ["sp", "pc"],
    "arm": ["r%d" % i for i in range(13)] + ["sp", "lr", "pc"],
}


def sections():
    out = []
    main = gdb.current_progspace().filename
    pat = re.compile(r"\s*(0x[0-9a-f]+) - (0x[0-9a-f]+) is (\S+)(?: in (.*))?$")
    for line in gdb.execute("info files", to_string=True).splitlines():
        m = pat.match(line)
        if m:
            path = m.group(4) or main
            out.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3), path.strip()))
    return out


def read_stack(sp, mask):
    """Stack bytes from sp up, as far as they are readable (at most WINDOW)."""
    inf = gdb.selected_inferior()
    data = b""
    addr = sp
    while len(data) < WINDOW:
        n = CHUNK - (addr % CHUNK)
        try:
            data += bytes(inf.read_memory(addr & mask, n))
        except gdb.MemoryError:
            break
        addr += n
    return data


def snapshot(n):
    frame = gdb.newest_frame()
    arch = frame.architecture().name()
    arch = "arm" if arch.startswith("arm") else arch
    names = DWARF_REGS[arch]
    ptr = gdb.lookup_type("void").pointer().sizeof
    mask = (1 << (8 * ptr)) - 1
    lines = ["memtrace-unwind-snapshot 1", "arch " + arch, "addr_size %d" % ptr,
             "endian little"]
    for i, name in enumerate(names):
        lines.append("reg %d 0x%x" % (i, int(frame.read_register(name)) & mask))
    sp = int(frame.read_register("sp")) & mask
    mem = read_stack(sp, mask)
    mem_file = "snap-%d.mem0" % n
    with open(os.path.join(OUT, mem_file), "wb") as fh:
        fh.write(mem)
    lines.append("memory 0x%x 0x%x %s" % (sp, len(mem), mem_file))
    for (s, e, name, path) in sections():
        lines.append("section 0x%x 0x%x %s %s" % (s, e, name, path))
    # Inlined and tail-call frames are not on the stack: a CFI unwinder
    # cannot see them (as in unwind_capture.py).  A real frame's name and
    # line are those of the innermost function inlined at its pc, as
    # addr2line -f -i names it first (and memtrace's symbolizer does).
    f, i, inner = frame, 0, None
    while f is not None:
        if f.type() == gdb.INLINE_FRAME:
            inner = inner or f
        elif f.type() != gdb.TAILCALL_FRAME:
            named = inner or f
            inner = None
            lines.append("frame %d 0x%x" % (i, f.pc() & mask))
            fn = named.function()
            lines.append("func %d %s" % (i, fn.name if fn else (named.name() or "??")))
            sal = named.find_sal()
            if sal.symtab is not None and sal.line:
                lines.append("line %d %d %s" % (i, sal.line, sal.symtab.filename))
            i += 1
        f = f.older()
    with open(os.path.join(OUT, "snap-%d.txt" % n), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(os.path.join(OUT, "snap-%d.bt" % n), "w") as fh:
        fh.write(gdb.execute("bt", to_string=True))


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")
try:
    gdb.execute("set debuginfod enabled off")
except gdb.error:
    pass
gdb.execute("set sysroot " + os.environ["CAP_SYSROOT"])
# Libraries outside the sysroot (a test's own .so) are found beside the
# program.
gdb.execute("set solib-search-path " + os.path.dirname(os.environ["CAP_PROG"]))
gdb.execute("file " + os.environ["CAP_PROG"])
gdb.execute("target remote " + os.environ["CAP_SOCK"])
# Recording starts when START is reached: main, or a function of a library
# that is not loaded yet (a pending breakpoint).
gdb.execute("set breakpoint pending on")
gdb.execute("break " + os.environ.get("CAP_START", "main"))
gdb.execute("continue")
gdb.execute("delete")
# The function's first instruction, not gdb's after-prologue guess: that is
# where memtrace stops a thread, with the return address still in lr/x30.
entry = int(gdb.parse_and_eval("(unsigned long)&%s" % BREAK))
gdb.execute("break *0x%x" % entry)
count = 0
while count < MAX:
    try:
        gdb.execute("continue")
    except gdb.error:
        break
    if not gdb.selected_inferior().pid or not gdb.selected_thread():
        break
    if (int(gdb.newest_frame().pc()) & ~1) != entry & ~1:
        break
    snapshot(count)
    count += 1
print("arch_cross_capture: %d snapshots" % count)
try:
    gdb.execute("kill")
except gdb.error:
    pass   # it has exited
