# gdb -batch -x unwind_capture.py: stops at every malloc after main starts and
# writes one unwind snapshot per stop (see the format below), so the unwinder
# can be checked offline against gdb's own backtrace.
#
# Environment: UNWIND_OUT (directory for snapshots), UNWIND_MAX (stops to
# record, default 40), UNWIND_BREAK (function to stop at, default malloc).
#
# Snapshot format, version 1: a text file snap-N.txt plus raw memory files.
# Architecture-neutral: registers are DWARF-numbered, byte order and address
# size are stated, every number is hex with 0x.
#
#   memtrace-unwind-snapshot 1
#   arch NAME                       gdb's architecture name (i386:x86-64, aarch64, arm, i386)
#   addr_size 8                     bytes of a pointer
#   endian little|big
#   reg DWARFNO 0xVALUE             one per register known in frame 0
#   memory 0xADDR 0xLEN FILE        FILE (same directory) holds target bytes [ADDR, ADDR+LEN)
#   map 0xSTART 0xEND 0xOFFSET PATH a file-backed mapping (info proc mappings)
#   frame N 0xPC                    gdb's frame N pc: frame 0 where the thread
#                                   stopped, outer frames the return address
#                                   (exact pc below a signal frame)
#
# Also saved for people: snap-N.regs (info registers), snap-N.bt (bt).
import os
import re
import gdb

OUT = os.environ.get("UNWIND_OUT", ".")
MAX = int(os.environ.get("UNWIND_MAX", "40"))
BREAK = os.environ.get("UNWIND_BREAK", "malloc")
STACK_WINDOW = 256 * 1024

# gdb register names in DWARF order, per architecture.
DWARF_REGS = {
    "i386:x86-64": ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
                    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"],
    "i386": ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "eip"],
    "aarch64": ["x%d" % i for i in range(31)] + ["sp", "pc"],
    "arm": ["r%d" % i for i in range(13)] + ["sp", "lr", "pc"],
}


def mappings():
    text = gdb.execute("info proc mappings", to_string=True)
    out = []
    for line in text.splitlines():
        toks = line.split()
        if len(toks) < 5 or not toks[0].startswith("0x"):
            continue
        try:
            start, end, _size, offset = (int(t, 16) for t in toks[:4])
        except ValueError:
            continue
        rest = toks[4:]
        if rest and re.fullmatch(r"[r-][w-][x-][ps-]", rest[0]):
            rest = rest[1:]
        out.append((start, end, offset, " ".join(rest)))
    return out


def snapshot(n):
    frame = gdb.newest_frame()
    arch = frame.architecture().name()
    names = DWARF_REGS.get(arch)
    if names is None:
        raise gdb.GdbError("no DWARF register table for " + arch)
    ptr = gdb.lookup_type("void").pointer().sizeof
    endian = "big" if "big endian" in gdb.execute("show endian", to_string=True) else "little"
    lines = ["memtrace-unwind-snapshot 1", "arch " + arch, "addr_size %d" % ptr,
             "endian " + endian]
    mask = (1 << (8 * ptr)) - 1
    for i, name in enumerate(names):
        try:
            v = int(frame.read_register(name)) & mask
        except gdb.error:
            continue
        lines.append("reg %d 0x%x" % (i, v))
    sp = int(frame.read_register(names[7] if arch == "i386:x86-64" else
                                 {"i386": "esp", "aarch64": "sp", "arm": "sp"}[arch])) & mask
    maps = mappings()
    # The stack the thread runs on, from sp up; and the main stack's top
    # too when sp is elsewhere (a sigaltstack handler, whose interrupted
    # frames live there).
    regions = []
    for (s, e, _o, p) in maps:
        if s <= sp < e:
            regions.append((sp, min(e, sp + STACK_WINDOW)))
    for (s, e, _o, p) in maps:
        if p == "[stack]" and not (s <= sp < e):
            regions.append((max(s, e - STACK_WINDOW), e))
    for k, (lo, hi) in enumerate(regions):
        mem_file = "snap-%d.mem%d" % (n, k)
        gdb.execute("dump binary memory %s 0x%x 0x%x" % (os.path.join(OUT, mem_file), lo, hi))
        lines.append("memory 0x%x 0x%x %s" % (lo, hi - lo, mem_file))
    for (s, e, o, p) in maps:
        if p.startswith("/"):
            lines.append("map 0x%x 0x%x 0x%x %s" % (s, e, o, p))
        elif p == "[vdso]":
            # No file: its image, dumped once, stands in for one.  i386
            # signal handlers return through its sigreturn trampoline.
            image = os.path.join(OUT, "vdso-0x%x.so" % s)
            if not os.path.exists(image):
                gdb.execute("dump binary memory %s 0x%x 0x%x" % (image, s, e))
            lines.append("map 0x%x 0x%x 0x0 %s" % (s, e, image))
    # Inlined calls have no frame of their own on the stack (gdb shows the
    # containing frame next, at the same pc), and gdb's tail-call frames are
    # guessed from DW_TAG_call_site, not found on the stack: keep only frames
    # a CFI unwinder can see.
    virtual = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)
    f, i = frame, 0
    while f is not None:
        if f.type() not in virtual:
            lines.append("frame %d 0x%x" % (i, f.pc() & mask))
            i += 1
        f = f.older()
    with open(os.path.join(OUT, "snap-%d.txt" % n), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(os.path.join(OUT, "snap-%d.regs" % n), "w") as fh:
        fh.write(gdb.execute("info registers", to_string=True))
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
gdb.execute("handle SIGUSR1 nostop noprint pass")
gdb.execute("break main")
gdb.execute("run")
gdb.execute("break " + BREAK)
count = 0
while count < MAX:
    try:
        gdb.execute("continue")
    except gdb.error:
        break
    if not gdb.selected_inferior().pid or not gdb.selected_thread():
        break
    snapshot(count)
    count += 1
print("unwind_capture: %d snapshots" % count)
gdb.execute("kill")
