#!/usr/bin/env bash
# Hand-written line tables that compilers rarely emit, resolved by
# `memtrace --addr2line` and by eu-addr2line for every address of .text:
#  - DWARF 3 with opcode_base 10 (opcodes 10-12 are special opcodes there),
#    DW_LNE_define_file, a vendor extended opcode, set_discriminator,
#    fixed_advance_pc, const_add_pc, a row repeated at one address;
#  - DWARF 5 with DW_FORM_strp names, DW_FORM_udata directory indexes,
#    DW_FORM_data16 MD5s, an absolute file name, minimum_instruction_length 2;
#  - 64-bit DWARF 4 with a relative comp_dir and a negate_stmt.
# file:line must equal eu-addr2line's wherever it knows one, and be unknown
# where it does not; discriminators must equal binutils addr2line's.
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP" || exit 1
need_tool eu-addr2line elfutils
need_tool addr2line binutils
if ! [ -x "${MEMTRACE:-}" ] || ! "$MEMTRACE" --addr2line "$MEMTRACE" 0 >/dev/null 2>&1; then
    skip "\$MEMTRACE --addr2line not available"
fi

cat >hand.s <<'ASM'
# Hand-written line tables: DWARF 3 with opcode_base 10, define_file and a
# vendor extended opcode; DWARF 5 with strp/udata/data16 forms and
# minimum_instruction_length 2; 64-bit DWARF 4.
    .text
    .globl _start
_start:
f3: .fill 64, 1, 0x90
f3_end:
f5: .fill 64, 1, 0x90
f5_end:
f64: .fill 64, 1, 0x90
f64_end:
    ret

    .section .debug_abbrev,"",@progbits
abbrev:
    .uleb128 1, 0x11; .byte 0          # compile_unit, no children
    .uleb128 0x03, 0x08                # name string
    .uleb128 0x1b, 0x08                # comp_dir string
    .uleb128 0x10, 0x06                # stmt_list data4
    .uleb128 0x11, 0x01                # low_pc addr
    .uleb128 0x12, 0x01                # high_pc addr
    .uleb128 0, 0
    .uleb128 2, 0x11; .byte 0          # compile_unit for v5 CUs
    .uleb128 0x03, 0x08
    .uleb128 0x1b, 0x08
    .uleb128 0x10, 0x17                # stmt_list sec_offset
    .uleb128 0x11, 0x01
    .uleb128 0x12, 0x07                # high_pc data8 (length)
    .uleb128 0, 0
    .uleb128 0

    .section .debug_info,"",@progbits
cu3:
    .long cu3_end - cu3_ver
cu3_ver:
    .short 3; .long abbrev; .byte 8
    .uleb128 1; .asciz "a.c"; .asciz "/tmp/comp3"; .long line3; .quad f3; .quad f3_end
cu3_end:
cu5:
    .long cu5_end - cu5_ver
cu5_ver:
    .short 5; .byte 1, 8; .long abbrev
    .uleb128 2; .asciz "a.c"; .asciz "/tmp/comp5"; .long line5; .quad f5; .quad f5_end - f5
cu5_end:
cu64:
    .long cu64_end - cu64_ver
cu64_ver:
    .short 4; .long abbrev; .byte 8
    .uleb128 2; .asciz "w.c"; .asciz "rel/comp"; .long line64; .quad f64; .quad f64_end - f64
cu64_end:

    .section .debug_str,"MS",@progbits,1
str_a5: .asciz "a5.c"
str_b5: .asciz "b5.h"
str_abs: .asciz "/abs/c.h"

    .section .debug_line,"",@progbits
line3:
    .long line3_end - line3_ver
line3_ver:
    .short 3
    .long line3_prog - line3_hdr
line3_hdr:
    .byte 1, 1                       # min_insn_length, default_is_stmt
    .byte -3, 12, 10                 # line_base, line_range, opcode_base
    .byte 0, 1, 1, 1, 1, 0, 0, 0, 1  # standard_opcode_lengths 1..9
    .asciz "inc"; .asciz "/usr/include/x"; .byte 0
    .asciz "a.c"; .uleb128 0, 0, 0
    .asciz "b.h"; .uleb128 1, 0, 0
    .asciz "c.h"; .uleb128 2, 7, 9
    .byte 0
line3_prog:
    .byte 0; .uleb128 9; .byte 2; .quad f3      # set_address
    .byte 3; .sleb128 9; .byte 1                # line 10; copy
    .byte 38                                    # special: +2 addr, +1 line
    .byte 10                                    # special (opcode_base 10): +0, -3
    .byte 4; .uleb128 2; .byte 2; .uleb128 6; .byte 1     # b.h, f3+8
    .byte 0; .uleb128 10; .byte 3; .asciz "gen.c"; .uleb128 1, 0, 0   # define_file -> 4
    .byte 0; .uleb128 4; .byte 0x80, 1, 2, 3    # vendor extended opcode
    .byte 4; .uleb128 4; .byte 8                # gen.c; const_add_pc (+20)
    .byte 3; .sleb128 90
    .byte 0; .uleb128 2; .byte 4; .uleb128 5    # discriminator 5
    .byte 1                                     # f3+28 gen.c:100
    .byte 9; .short 16; .byte 3; .sleb128 -50; .byte 4; .uleb128 3; .byte 1   # f3+44 c.h:50
    .byte 4; .uleb128 1; .byte 3; .sleb128 7; .byte 2; .uleb128 6; .byte 1     # f3+50 a.c:57
    .byte 2; .uleb128 8; .byte 1                # f3+58 a.c:57 again
    .byte 2; .uleb128 6; .byte 0; .uleb128 1; .byte 1     # end_sequence at f3+64
line3_end:

line5:
    .long line5_end - line5_ver
line5_ver:
    .short 5
    .byte 8, 0
    .long line5_prog - line5_hdr
line5_hdr:
    .byte 2, 1, 1                    # min_insn_length 2, max_ops 1, default_is_stmt
    .byte -5, 14, 13
    .byte 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1
    .byte 1; .uleb128 1, 0x08        # dir format: path string
    .uleb128 3
    .asciz "/tmp/comp5"; .asciz "sub"; .asciz "/opt/inc"
    .byte 3; .uleb128 1, 0x0e, 2, 0x0f, 5, 0x1e   # path strp, dir udata, MD5 data16
    .uleb128 3
    .long str_a5; .uleb128 0; .quad 1, 2
    .long str_b5; .uleb128 1; .quad 3, 4
    .long str_abs; .uleb128 2; .quad 5, 6
line5_prog:
    .byte 0; .uleb128 9; .byte 2; .quad f5
    .byte 4; .uleb128 0; .byte 3; .sleb128 4; .byte 1            # f5+0 a5.c:5
    .byte 2; .uleb128 3; .byte 4; .uleb128 1; .byte 1            # f5+6 sub/b5.h:5
    .byte 13 + 5 + 14 * 2                                        # special: +4 addr (2*2), +0 line
    .byte 4; .uleb128 2; .byte 3; .sleb128 20; .byte 1           # f5+10 /abs/c.h:25
    .byte 8                                                      # const_add_pc: (255-13)/14=17 *2 = +34
    .byte 4; .uleb128 0; .byte 1                                 # f5+44 a5.c:25
    .byte 2; .uleb128 10; .byte 0; .uleb128 1; .byte 1           # end at f5+64
line5_end:

line64:
    .long 0xffffffff
    .quad line64_end - line64_ver
line64_ver:
    .short 4
    .quad line64_prog - line64_hdr
line64_hdr:
    .byte 1, 1, 0, -5, 14, 13
    .byte 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1
    .asciz "../src"; .byte 0
    .asciz "w.c"; .uleb128 1, 0, 0
    .asciz "x.h"; .uleb128 0, 0, 0
    .byte 0
line64_prog:
    .byte 0; .uleb128 9; .byte 2; .quad f64
    .byte 3; .sleb128 299; .byte 1                               # f64+0 w.c:300
    .byte 6; .byte 13 + 5 + 14 * 7                               # f64+7 w.c:300 (not stmt)
    .byte 4; .uleb128 2; .byte 2; .uleb128 9; .byte 1            # f64+16 x.h:300
    .byte 2; .uleb128 48; .byte 0; .uleb128 1; .byte 1           # end at f64+64
line64_end:

    .section .debug_aranges,"",@progbits
    .irp cu, 3, 5, 64
    .long 44; .short 2; .long cu\cu; .byte 8, 0; .long 0
    .quad f\cu; .quad f\cu\()_end - f\cu
    .quad 0, 0
    .endr
ASM
gcc -nostdlib -no-pie -Wl,-e,_start -o hand hand.s || { echo "cannot assemble hand.s"; exit 1; }

read -r lo size < <(readelf -SW hand | awk '{for (i = 1; i < NF; i++) if ($i == ".text") { print $(i + 2), $(i + 4); exit }}')
lo=$((16#$lo)); size=$((16#$size))
for ((a = lo - 1; a <= lo + size; a++)); do printf '0x%x\n' "$a"; done >addrs.txt

xargs eu-addr2line -e hand <addrs.txt | sed -E 's/:([0-9]+):[0-9]+$/:\1/' >eu.txt
xargs addr2line -e hand <addrs.txt >binutils.txt
xargs "$MEMTRACE" --addr2line hand <addrs.txt | awk 'NR % 2 == 0' >ours.txt
paste -d '\t' addrs.txt eu.txt binutils.txt ours.txt | awk -F '\t' '
    function disc(s) { return match(s, / \(discriminator [0-9]+\)$/) ? substr(s, RSTART) : "" }
    function bare(s) { sub(/ \(discriminator [0-9]+\)$/, "", s); return s }
    {
        ours = bare($4)
        if ($2 == "??:0" || $2 ~ /:0$/) {
            if (ours != "??:0") { bad++; print "  " $1 ": eu-addr2line knows nothing, memtrace says " $4 }
            else unknown++
        } else if ($2 != ours) {
            bad++; print "  " $1 ": eu-addr2line " $2 ", memtrace " $4
        } else ok++
        if ($3 !~ /^(\?\?|<unknown>)/ && $3 !~ /:\?$/ && disc($3) != disc($4)) {
            bad++; print "  " $1 ": binutils " $3 ", memtrace " $4
        }
        if (disc($4) != "") discs++
    }
    END {
        printf "%d addresses: %d agree, %d unknown to both, %d with a discriminator, %d wrong\n", NR, ok, unknown, discs, bad
        exit (bad > 0 || ok < 100 || discs == 0)
    }'
