#!/usr/bin/env bash
# file:line and function names of memtrace's symbolizer against elfutils'
# eu-addr2line, on
# binaries built here (C at -O2 with DWARF 2, 3, 4, 5, compressed -gz and
# legacy .zdebug, clang
# DWARF 5 with MD5s, C++ templates) and on libc's build-id debug file.
# Addresses are sampled from each file's own decoded line table
# (readelf -wL) and at random in .text.  Every address eu-addr2line knows a
# line for must get exactly the same file:line, and every function name
# (innermost inlined function, as addr2line -f prints it) must be the same
# except for two symbols of one address.  The clang build, which
# eu-addr2line 0.188 cannot read, is judged by binutils addr2line (lines)
# and llvm-symbolizer (function names).
#
# Uses `$MEMTRACE --addr2line` when the binary supports it, else the unit
# test program (same code, through the library API).
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
MT_BUILD=${MT_BUILD:-build}
SAMPLES=${MT_LINE_SAMPLES:-1500}
cd "$MT_TMP" || exit 1

need_tool eu-addr2line elfutils
need_tool gcc gcc

mode=unit
if [ -x "${MEMTRACE:-}" ] && "$MEMTRACE" --addr2line "$MEMTRACE" 0 >/dev/null 2>&1; then
    mode=memtrace
fi
UNIT=$MT_ROOT/$MT_BUILD/unit/test_line_elfutils
if [ $mode = unit ] && [ ! -x "$UNIT" ]; then
    skip "neither \$MEMTRACE --addr2line nor $UNIT available"
fi
echo "checking through: $mode"

# --- programs ---------------------------------------------------------------
# A real C program to symbolize: the line-table test itself and the DWARF
# readers it uses (with the section maps they may read through, and so
# memtrace's ELF reader).
C_SRCS="$MT_ROOT/selftest/unit/test_line_elfutils.c $MT_ROOT/shared/xalloc.c $MT_ROOT/shared/log.c $MT_ROOT/shared/text_escape.c $MT_ROOT/shared/intern.c"
C_SRCS="$C_SRCS $MT_ROOT/shared/files/cursor.c $MT_ROOT/shared/files/byte_source.c"
C_SRCS="$C_SRCS $MT_ROOT/target/elf/elf_section_map.c"
for m in elf_file elf_compress; do
    C_SRCS="$C_SRCS $MT_ROOT/shared/elf/$m.c"
done
for m in dwarf_sections info_form info_cu info_abbrev info_ranges info_inline info_inline_ranges info_call_sites line_header line_program line_index; do
    C_SRCS="$C_SRCS $MT_ROOT/target/dwarf/$m.c"
done
CFLAGS_C="-std=gnu11 -I$MT_ROOT -O2"
files=()
build() { # name compiler flags...
    local name=$1; shift
    if "$@" -o "$name" >"$name.log" 2>&1; then files+=("$MT_TMP/$name"); else
        echo "could not build $name:"; tail -5 "$name.log"; exit 1; fi
}
build c_dwarf5 gcc $CFLAGS_C -g -gdwarf-5 $C_SRCS -lelf -lz
build c_dwarf4 gcc $CFLAGS_C -g -gdwarf-4 $C_SRCS -lelf -lz
build c_dwarf3 gcc $CFLAGS_C -g -gdwarf-3 $C_SRCS -lelf -lz
build c_dwarf2 gcc $CFLAGS_C -g -gdwarf-2 $C_SRCS -lelf -lz
build c_gz gcc $CFLAGS_C -g -gz $C_SRCS -lelf -lz
build c_zdebug gcc $CFLAGS_C -g -gdwarf-4 -gz=zlib-gnu $C_SRCS -lelf -lz
# eu-addr2line 0.188 cannot read clang 14's DWARF 5 CU DIEs (addrx,
# rnglistx); binutils addr2line judges the clang build instead.
clang_file=
if command -v clang >/dev/null && command -v addr2line >/dev/null; then
    clang -std=gnu11 -I"$MT_ROOT" -O2 -g -gdwarf-5 -Wno-everything $C_SRCS -lelf -lz -o c_clang >c_clang.log 2>&1 &&
        clang_file=$MT_TMP/c_clang
fi
cat >templates.cpp <<'CPP'
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

template <typename T> struct Stack {
    std::vector<T> items;
    void push(const T &v) { items.push_back(v); }
    T pop() { T v = items.back(); items.pop_back(); return v; }
    bool empty() const { return items.empty(); }
};

template <typename K, typename V> V sum_values(const std::map<K, V> &m)
{
    V total{};
    for (const auto &kv : m)
        total += kv.second;
    return total;
}

struct Shape { virtual ~Shape() = default; virtual double area() const = 0; };
struct Square : Shape { double s; explicit Square(double x) : s(x) {} double area() const override { return s * s; } };
struct Circle : Shape { double r; explicit Circle(double x) : r(x) {} double area() const override { return 3.14159 * r * r; } };

int main(int argc, char **argv)
{
    std::map<std::string, int> words;
    for (int i = 0; i < argc; i++)
        words[argv[i]] += i;
    Stack<std::string> st;
    for (auto &kv : words)
        st.push(kv.first);
    std::vector<std::unique_ptr<Shape>> shapes;
    for (int i = 0; i < 10; i++) {
        if (i % 2) shapes.push_back(std::make_unique<Square>(i));
        else shapes.push_back(std::make_unique<Circle>(i));
    }
    std::sort(shapes.begin(), shapes.end(), [](const auto &a, const auto &b) { return a->area() < b->area(); });
    std::ostringstream out;
    while (!st.empty())
        out << st.pop() << ' ';
    std::map<int, double> areas;
    for (size_t i = 0; i < shapes.size(); i++)
        areas[(int)i] = shapes[i]->area();
    out << sum_values(words) << ' ' << sum_values(areas);
    std::cout << out.str() << std::endl;
    return 0;
}
CPP
build cxx_templates g++ -std=gnu++17 -g -O2 templates.cpp

libc=$(ldd /bin/true | awk '/libc\.so/{print $3}')
libc_debug=
if [ -n "$libc" ]; then
    id=$(readelf -n "$libc" | awk '/Build ID/{print $3}')
    cand=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
    [ -r "$cand" ] && libc_debug=$cand
fi
[ -n "$libc_debug" ] && files+=("$libc_debug") || echo "libc6-dbg not installed: libc not checked"

# --- comparison -------------------------------------------------------------
if [ $mode = unit ]; then
    MT_LINE_SAMPLES=$SAMPLES "$UNIT" "${files[@]}" ${clang_file:+--oracle=addr2line "$clang_file"}
    exit $?
fi

total_agree=0 total_bad=0
oracle=eu-addr2line
# libc itself, as the tracer sees it: memtrace must find the debug file by
# build-id (eu-addr2line does too); rows are sampled from the debug file.
[ -n "$libc_debug" ] && files+=("$libc@$libc_debug")
[ -n "$clang_file" ] && files+=(--oracle=addr2line "$clang_file")
for entry in "${files[@]}"; do
    case $entry in --oracle=*) oracle=${entry#--oracle=}; continue ;; esac
    f=${entry%@*} rows_from=${entry#*@}
    # Row addresses of the decoded line table, one before and one after,
    # plus random .text addresses.
    readelf -wL "$rows_from" 2>/dev/null | awk '$3 ~ /^0x[0-9a-f]+$/ {print $3}' >rows.txt
    read -r tlo tsize < <(readelf -SW "$f" 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == ".text") { print $(i + 2), $(i + 4); exit }}')
    awk -v n="$SAMPLES" -v tlo="${tlo:-0}" -v tsize="${tsize:-0}" '
        function hex(s,  v, i, c) { v = 0; s = tolower(s); sub(/^0x/, "", s)
            for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
            return v }
        { a[NR] = hex($1) }
        END { srand(42)
              for (i = 0; i < n && NR > 0; i++) printf "0x%x\n", a[int(rand() * NR) + 1] + int(rand() * 3) - 1
              if (tsize != "0") { lo = hex(tlo); sz = hex(tsize)
                  for (i = 0; i < n / 4; i++) printf "0x%x\n", lo + int(rand() * sz) } }' rows.txt >addrs.txt
    # Every sequence's end address (readelf's "-" rows) and the byte after
    # it: at and past a sequence's end there is no line unless another
    # sequence starts there.
    readelf -wL "$rows_from" 2>/dev/null | awk '$2 == "-" && $3 ~ /^0x[0-9a-f]+$/ {print $3}' | head -n 300 |
        awk 'function hex(s,  v, i) { v = 0; s = tolower(s); sub(/^0x/, "", s)
                 for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                 return v }
             { print $1; printf "0x%x\n", hex($1) + 1 }' >ends.txt
    cat ends.txt >>addrs.txt
    xargs $oracle -f -e "$f" <addrs.txt >eu2.txt
    xargs "$MEMTRACE" --addr2line "$f" <addrs.txt >ours2.txt 2>ours.err
    if [ "$(wc -l <ours2.txt)" -ne $((2 * $(wc -l <addrs.txt))) ]; then
        echo "$f: memtrace --addr2line printed $(wc -l <ours2.txt) lines for $(wc -l <addrs.txt) addresses:"
        head -5 ours.err
        total_bad=$((total_bad + 1))
        continue
    fi
    awk 'NR % 2 == 0' eu2.txt | sed -E 's/:([0-9]+):[0-9]+$/:\1/; s/ \(discriminator [0-9]+\)$//' >eu.txt
    awk 'NR % 2 == 0' ours2.txt | sed -E 's/ \(discriminator [0-9]+\)$//' >ours.txt
    # Function names: eu-addr2line -f prints "callee inlined at FILE:LINE
    # in caller"; addr2line -f just the innermost name, as memtrace does.
    # Judged against elfutils only (binutils misreads clang's rnglistx).
    awk 'NR % 2 == 1' eu2.txt | sed 's/ inlined at .*//' >eu_fn.txt
    awk 'NR % 2 == 1' ours2.txt >ours_fn.txt
    same_fn=$(paste -d '\t' eu_fn.txt ours_fn.txt | awk -F '\t' '$1 == $2' | wc -l)
    # Two names of one address (memcpy/memmove aliases in libc's assembly,
    # which has no DWARF functions) are the symbol table's choice, not a
    # wrong answer: those are counted apart.
    if [ "$oracle" = eu-addr2line ]; then
        nm "$rows_from" 2>/dev/null | awk 'NF == 3 {print $1, $3}' >syms.txt
        read -r bad_fn aliases < <(paste -d '\t' addrs.txt eu_fn.txt ours_fn.txt | awk -F '\t' '
            FILENAME == "syms.txt" { split($0, f, " "); at[f[2]] = f[1]; next }
            $2 == $3 { next }
            ($2 in at) && ($3 in at) && at[$2] == at[$3] { alias++; next }
            { if (++n <= 5) print "  FUNCTION " $1 ": eu-addr2line " $2 ", memtrace " $3 > "/dev/stderr" }
            END { print n + 0, alias + 0 }' syms.txt -)
        total_bad=$((total_bad + bad_fn))
        same_fn="$same_fn, aliases $aliases"
    elif command -v llvm-symbolizer >/dev/null; then
        # clang's inlining (rnglistx ranges): llvm-symbolizer names the
        # innermost frame first in each blank-line separated block.
        llvm-symbolizer --obj="$f" <addrs.txt | awk 'BEGIN { RS = ""; FS = "\n" } { print $1 }' >llvm_fn.txt
        bad_fn=$(paste -d '\t' addrs.txt llvm_fn.txt ours_fn.txt | awk -F '\t' '$2 != $3 {
            if (++n <= 5) print "  FUNCTION " $1 ": llvm-symbolizer " $2 ", memtrace " $3 > "/dev/stderr" }
            END { print n + 0 }')
        total_bad=$((total_bad + bad_fn))
        same_fn="$(( $(wc -l <addrs.txt) - bad_fn )) as llvm-symbolizer"
    fi
    # Past the end of every line sequence there is no line (gdb, binutils
    # and llvm-addr2line); eu-addr2line stretches some sequences to the
    # next one.  Where eu-addr2line knows a line and memtrace says none,
    # binutils addr2line is the judge: it must say none too ("??:0", or
    # "FILE:?" when it names the unit's file without a line).
    paste -d '\t' addrs.txt eu.txt ours.txt | awk -F '\t' '$2 !~ /^\?\?:/ && $2 !~ /:[0?]$/ && $3 ~ /^\?\?:/ { print $1 }' >noline.txt
    past_end=0 past_bad=0
    if [ -s noline.txt ] && [ "$oracle" = eu-addr2line ]; then
        xargs addr2line -e "$f" <noline.txt | sed -E 's/ \(discriminator [0-9]+\)$//' >bu_noline.txt
        read -r past_end past_bad < <(paste -d '\t' noline.txt bu_noline.txt | awk -F '\t' '
            $2 ~ /^\?\?:/ || $2 ~ /:\?$/ { ok++; next }
            { bad++; if (bad <= 10) print "  PAST-END " $1 ": binutils " $2 ", memtrace ??:0" > "/dev/stderr" }
            END { print ok + 0, bad + 0 }')
    fi
    # At every sequence end: where binutils has no line, memtrace must have
    # none either (whatever eu-addr2line says).
    ends_bad=0
    if [ -s ends.txt ] && command -v addr2line >/dev/null; then
        xargs addr2line -e "$f" <ends.txt | sed -E 's/ \(discriminator [0-9]+\)$//' >bu_ends.txt
        xargs "$MEMTRACE" --addr2line "$f" <ends.txt | awk 'NR % 2 == 0' >ours_ends.txt
        ends_bad=$(paste -d '\t' ends.txt bu_ends.txt ours_ends.txt | awk -F '\t' '
            ($2 ~ /^\?\?:/ || $2 ~ /:\?$/) && $3 !~ /^\?\?:/ {
                if (++n <= 5) print "  SEQUENCE END " $1 ": binutils " $2 ", memtrace " $3 > "/dev/stderr" }
            END { print n + 0 }')
        echo "$f: $(wc -l <ends.txt) sequence-end addresses, $ends_bad with a line where binutils has none"
        total_bad=$((total_bad + ends_bad))
    fi
    read -r agree bad < <(paste -d '\t' addrs.txt eu.txt ours.txt | awk -F '\t' -v judged="$( [ "$oracle" = eu-addr2line ] && echo 1)" '
        $2 ~ /^\?\?:/ || $2 ~ /:[0?]$/ { next }
        $2 == $3 { ok++; next }
        judged && $3 ~ /^\?\?:/ { next }
        { bad++; if (bad <= 10) print "  MISMATCH " $1 ": oracle " $2 ", memtrace " $3 > "/dev/stderr" }
        END { print ok + 0, bad + 0 }')
    echo "$f [$oracle]: $(wc -l <addrs.txt) addresses, $agree agree, $bad mismatch, $past_end past a sequence end as binutils, $past_bad not (same function name: $same_fn)"
    total_agree=$((total_agree + agree)); total_bad=$((total_bad + bad + past_bad))
done
echo "total: $total_agree agree, $total_bad mismatch"
[ "$total_bad" -eq 0 ] && [ "$total_agree" -gt 0 ]
