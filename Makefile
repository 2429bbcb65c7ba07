# memtrace build.  Sources are found by wildcard: a new .c file in a module
# folder is built without touching this file.
#
#   make            memtrace and memtrace-fs (target/memtrace, host-fs/memtrace-fs)
#   make check      install missing packages, build, run every test
#   make demo       install, build, trace a demo program, print its report
#   make bench      benchmark table (see README)
#   make bench-board  per-call cost on the arm64/armhf boards (qemu-system)
#   make fuzz       run every fuzzer for FUZZ_SECONDS each
#   make install    PREFIX=/usr/local DESTDIR=
#   make ARCH=i386  32-bit build (gcc -m32);  CROSS_COMPILE=aarch64-linux-gnu-

PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CROSS_COMPILE ?=
HOST_ARCH := $(shell uname -m)

ifeq ($(CROSS_COMPILE),)
ARCH ?= $(HOST_ARCH)
else
ARCH ?= $(patsubst %-linux-gnu-,%,$(patsubst %-linux-gnueabihf-,arm,$(CROSS_COMPILE)))
endif

# The 32-bit build keeps its own folders, so the native build stays usable.
ASAN_BUILD := build-asan
ifeq ($(ARCH),i386)
ifeq ($(origin BUILD),file)
BUILD := build-i386
endif
ASAN_BUILD := build-i386-asan
endif

CC := $(CROSS_COMPILE)gcc
CXX := $(CROSS_COMPILE)g++
AR := $(CROSS_COMPILE)ar
ARCH_CFLAGS :=
CROSS_LDFLAGS :=
# Cross builds (`make cross`).  Debian's gcc-aarch64-linux-gnu and
# gcc-arm-linux-gnueabihf conflict with gcc-multilib (the i386 build needs
# it), so without <triple>-gcc on PATH clang cross-compiles against the
# libc6-dev-*-cross sysroot and libgcc-12-dev-*-cross, and lld links.  The
# target's zlib comes from its sysroot when there is one, else it is built
# from source by tools/cross-zlib.sh (see there why).
ifneq ($(CROSS_COMPILE),)
CROSS_TRIPLE := $(patsubst %-,%,$(CROSS_COMPILE))
ifeq ($(shell command -v $(CROSS_COMPILE)gcc 2>/dev/null),)
CC := clang --target=$(CROSS_TRIPLE)
CXX := clang++ --target=$(CROSS_TRIPLE)
AR := llvm-ar
CROSS_LDFLAGS := -fuse-ld=lld
endif
ifeq ($(wildcard $(shell $(CC) -print-file-name=libz.a)),)
CROSS_ZLIB := $(BUILD)/zlib/libz.a
ARCH_CFLAGS += -I$(BUILD)/zlib/include
CROSS_LDFLAGS += -L$(BUILD)/zlib
endif
endif
ifeq ($(ARCH),i386)
ARCH_CFLAGS := -m32
endif
# The C++ demangler is libiberty's (c++filt's own): Debian's libiberty-dev
# when it serves this build's architecture, else the same sources from
# binutils-source, built by tools/cross-iberty.sh.
IBERTY_LIB := $(shell $(CC) $(ARCH_CFLAGS) -print-file-name=libiberty.a)
ifeq ($(wildcard $(IBERTY_LIB)),)
CROSS_IBERTY := $(BUILD)/iberty/libiberty.a
IBERTY_LIB := $(CROSS_IBERTY)
IBERTY_CFLAGS := -I$(BUILD)/iberty/include
endif

OPT ?= -O2
WARN := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes
CFLAGS ?= $(OPT) -g
# 64-bit file offsets also on 32-bit CPUs: /proc/PID/mem is written at the
# target's addresses, which lie above 2 GiB there.
ALL_CFLAGS := -std=gnu11 $(WARN) $(ARCH_CFLAGS) -I. $(IBERTY_CFLAGS) -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 $(CFLAGS)
# CPPFLAGS: dpkg-buildflags gives -D_FORTIFY_SOURCE=2 there (debian/rules).
ALL_CFLAGS += $(CPPFLAGS)
LDFLAGS ?=
ALL_LDFLAGS := $(ARCH_CFLAGS) $(CROSS_LDFLAGS) $(LDFLAGS)

ifeq ($(SAN),1)
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ALL_LDFLAGS += -fsanitize=address,undefined
endif

ARCH_SRCS_x86_64 := arch/x86_64.c arch/x86_insn.c arch/x86_64_patch.c
ARCH_SRCS_i386 := arch/i386.c arch/x86_insn.c arch/i386_patch.c
ARCH_SRCS_aarch64 := arch/aarch64.c arch/aarch64_insn.c arch/aarch64_patch.c
ARCH_SRCS_arm := arch/arm.c arch/arm_insn.c arch/thumb_insn.c arch/arm_patch.c
ARCH_SRCS := $(ARCH_SRCS_$(ARCH))

SHARED_SRCS := $(wildcard shared/*.c shared/*/*.c)
TARGET_SRCS := $(filter-out target/main.c,$(wildcard target/*.c target/*/*.c))
LIB_SRCS := $(TARGET_SRCS) $(SHARED_SRCS) $(ARCH_SRCS)
HOSTFS_SRCS := $(wildcard host-fs/*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
# The in-process agent (target/agent/payload/): freestanding, position
# independent, linked into a flat image that memtrace embeds as a byte array
# (an empty one where the CPU has no agent).
AGENT_CC ?= gcc
AGENT_CFLAGS := -std=gnu11 -I. -O2 -ffreestanding -fPIC -fvisibility=hidden -fno-stack-protector \
    -fno-builtin -nostdlib -mgeneral-regs-only -mfsgsbase -fno-asynchronous-unwind-tables \
    -fno-jump-tables -fcf-protection=none -fno-tree-loop-distribute-patterns $(WARN)
LIB_OBJS += $(BUILD)/agent/agent_blob.o
AGENT_I386_CFLAGS := -m32 -march=i686 -std=gnu11 -I. -O2 -ffreestanding -fPIC -fvisibility=hidden \
    -fno-stack-protector -fno-builtin -nostdlib -mno-sse -mno-mmx -fno-asynchronous-unwind-tables \
    -fno-unwind-tables -fno-jump-tables -fcf-protection=none -fno-tree-loop-distribute-patterns $(WARN)
AGENT_A64_CFLAGS := -std=gnu11 -I. -O2 -ffreestanding -fPIC -fvisibility=hidden -fno-stack-protector \
    -fno-builtin -nostdlib -mgeneral-regs-only -fno-asynchronous-unwind-tables -fno-unwind-tables \
    -fno-jump-tables -mbranch-protection=none -mno-outline-atomics -ffixed-x18 $(WARN)
# arm: ARM or Thumb-2 code as the compiler's default is (agent_entry is ARM
# code either way); no frame pointer, r7 is the system call number.
AGENT_ARM_CFLAGS := -std=gnu11 -I. -O2 -ffreestanding -fPIC -fvisibility=hidden -fno-stack-protector \
    -fno-builtin -nostdlib -mfloat-abi=soft -fno-asynchronous-unwind-tables -fno-unwind-tables \
    -fno-jump-tables -fomit-frame-pointer $(WARN)
ifneq ($(filter clang%,$(CC)),)
AGENT_A64_CC := $(CC)
AGENT_A64_LD := ld.lld
AGENT_A64_OBJCOPY := llvm-objcopy
else
AGENT_A64_CC := $(CC)
AGENT_A64_LD := $(CROSS_COMPILE)ld
AGENT_A64_OBJCOPY := $(CROSS_COMPILE)objcopy
endif
# memtrace-fs is the host side: the 32-bit build keeps it a native binary
# (own object folder), so a 32-bit target talks to a 64-bit host for real.
HOSTFS_OBJDIR := $(BUILD)/obj
ifeq ($(ARCH),i386)
HOSTFS_OBJDIR := $(BUILD)/host-obj
endif
HOST_CFLAGS := $(filter-out $(ARCH_CFLAGS),$(ALL_CFLAGS))
HOST_LDFLAGS := $(filter-out $(ARCH_CFLAGS),$(ALL_LDFLAGS))
# memtrace-fs reads ELF (build-ids) with the same reader as the tracer:
# shared/elf/ and shared/files/, with the rest of shared/.
HOSTFS_OBJS := $(HOSTFS_SRCS:%.c=$(HOSTFS_OBJDIR)/%.o) $(SHARED_SRCS:%.c=$(HOSTFS_OBJDIR)/%.o)
MAIN_OBJ := $(BUILD)/obj/target/main.o

TARGET_LIBS := $(IBERTY_LIB) -lz -lpthread -lm
# libelf (unit-test oracle only): the 32-bit build links Debian's
# libelf1:i386 by path, the headers being the same for every architecture.
UNIT_LIBELF := -lelf
ifeq ($(ARCH),i386)
UNIT_LIBELF := /usr/lib/i386-linux-gnu/libelf.so.1
endif
HOSTFS_LIBS := -lavahi-client -lavahi-common -lz
# The debuginfod endpoint (host-fs/http.c): Debian's libmicrohttpd-dev.
HOSTFS_LIBS += -lmicrohttpd
# --upstream (host-fs/upstream.c): elfutils' libdebuginfod (libdebuginfod-dev).
HOSTFS_LIBS += -ldebuginfod
# --key (TLS 1.3 PSK, shared/wire_tls.c): OpenSSL, through the table of
# shared/tls_lib.c.  Native builds (memtrace and memtrace-fs) compile
# against libssl-dev's headers but link no OpenSSL: the first --key loads
# libssl.so.3 and libcrypto.so.3 with dlopen (the .deb Recommends libssl3),
# so a run without --key pays nothing for it.  Linked in, OpenSSL's
# relocated .data.rel.ro made every start of the PIE tracer ~380 KiB
# bigger.  Cross builds link the target's libssl.a and libcrypto.a
# statically (MT_TLS_STATIC, unpacked from its libssl-dev by
# tools/cross-openssl.sh) so that the board binary stays self-contained,
# and pay that RSS at every start; when the download fails, and for
# ARCH=i386, they are made without TLS (MT_NO_TLS): --key says so in one line.
ifeq ($(CROSS_COMPILE)$(filter-out $(HOST_ARCH),$(ARCH)),)
# Relative relocations packed (DT_RELR, glibc >= 2.36): the tracer's ~1100
# are 26 KiB of .rela.dyn as RELA entries, read at every start, and 320
# bytes packed.
TARGET_LIBS += -Wl,-z,pack-relative-relocs
else
DEB_ARCH_aarch64 := arm64
DEB_ARCH_arm := armhf
CROSS_SSL := $(BUILD)/openssl
CROSS_SSL_OK :=
ifneq ($(CROSS_COMPILE),)
ifneq ($(DEB_ARCH_$(ARCH)),)
CROSS_SSL_OK := $(shell tools/cross-openssl.sh $(CROSS_SSL) $(DEB_ARCH_$(ARCH)) && echo yes)
endif
endif
ifeq ($(CROSS_SSL_OK),yes)
ALL_CFLAGS += -I$(CROSS_SSL)/usr/include -I$(CROSS_SSL)/usr/include/$(CROSS_TRIPLE)
ALL_LDFLAGS += -L$(CROSS_SSL)/usr/lib/$(CROSS_TRIPLE)
ALL_CFLAGS += -DMT_TLS_STATIC
TARGET_LIBS += -Wl,-Bstatic -lssl -lcrypto -Wl,-Bdynamic
else
ALL_CFLAGS += -DMT_NO_TLS
endif
endif

# The console's line editor (target/console/line_edit.c): libedit, linked
# statically with libbsd, libmd and ncurses' libtinfo, so that the board
# binary stays self-contained.  Native builds take Debian's libedit-dev;
# arm/aarch64 cross builds unpack the target's packages
# (tools/cross-libedit.sh).  Without them (ARCH=i386: no i386 packages
# here, or a failed download) the console keeps its plain line reader, and
# `memtrace --version` says "console: plain line reader".
LIBEDIT_OK :=
ifneq ($(wildcard $(shell $(CC) $(ARCH_CFLAGS) -print-file-name=libedit.a)),)
LIBEDIT_OK := yes
else ifneq ($(CROSS_COMPILE),)
ifneq ($(DEB_ARCH_$(ARCH)),)
CROSS_LIBEDIT := $(BUILD)/libedit
LIBEDIT_OK := $(shell tools/cross-libedit.sh $(CROSS_LIBEDIT) $(DEB_ARCH_$(ARCH)) && echo yes)
ifeq ($(LIBEDIT_OK),yes)
LIBEDIT_CFLAGS := -I$(CROSS_LIBEDIT)/usr/include
ALL_LDFLAGS += -L$(CROSS_LIBEDIT)/usr/lib/$(CROSS_TRIPLE)
endif
endif
endif
ifeq ($(LIBEDIT_OK),yes)
$(BUILD)/obj/target/console/line_edit.o: ALL_CFLAGS += -DMT_LIBEDIT $(LIBEDIT_CFLAGS)
TARGET_LIBS += -Wl,-Bstatic -ledit -lbsd -lmd -ltinfo -Wl,-Bdynamic
endif

UNIT_SRCS := $(wildcard selftest/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:selftest/unit/%.c=$(BUILD)/unit/%)
PROG_C := $(wildcard selftest/programs/*.c)
PROG_CXX := $(wildcard selftest/programs/*.cpp)
PROG_BINS := $(PROG_C:selftest/programs/%.c=$(BUILD)/selftest/%) \
             $(PROG_CXX:selftest/programs/%.cpp=$(BUILD)/selftest/%)
BENCH_BIN := $(BUILD)/bench/allocbench

# --format pprof (target/report/report_pprof.c): profile.proto encoded by
# Debian's protobuf-c, the C code generated by protoc-c at build time and
# libprotobuf-c linked statically (the board binary stays self-contained).
# Cross builds unpack the target's libprotobuf-c-dev (tools/cross-debs.sh);
# when that fails, and for ARCH=i386, they are made without pprof
# (MT_NO_PPROF), and --format says so.
PB_GEN := $(BUILD)/gen
PB_C := $(PB_GEN)/target/report/profile.pb-c.c
PB_H := $(PB_C:.c=.h)
PPROF :=
ifeq ($(CROSS_COMPILE)$(filter-out $(HOST_ARCH),$(ARCH)),)
PPROF := yes
else ifneq ($(CROSS_COMPILE),)
ifneq ($(DEB_ARCH_$(ARCH)),)
CROSS_PB := $(BUILD)/protobuf-c
ifeq ($(shell tools/cross-debs.sh $(CROSS_PB) $(DEB_ARCH_$(ARCH)) protobuf-c libprotobuf-c-dev && echo yes),yes)
PPROF := yes
ALL_CFLAGS += -I$(CROSS_PB)/usr/include
ALL_LDFLAGS += -L$(CROSS_PB)/usr/lib/$(CROSS_TRIPLE)
endif
endif
endif
ifeq ($(PPROF),yes)
ALL_CFLAGS += -I$(PB_GEN)
LIB_OBJS += $(BUILD)/obj/gen/profile.pb-c.o
TARGET_LIBS += -Wl,-Bstatic -lprotobuf-c -Wl,-Bdynamic
else
ALL_CFLAGS += -DMT_NO_PPROF
endif

.PHONY: all deps check test demo bench bench-board fuzz install clean lint tests-build tests-build-tools cross

ifeq ($(CROSS_COMPILE),)
ifeq ($(ARCH),$(HOST_ARCH))
all: target/memtrace host-fs/memtrace-fs
else
# Another word size (ARCH=i386) stays in its own folder: target/memtrace
# remains the native tracer.
all: $(BUILD)/memtrace $(BUILD)/memtrace-fs
endif
else
# Cross builds also make the programs that arch_cross_*.sh run under qemu.
CROSS_TOOLS := $(patsubst selftest/cross/%.c,$(BUILD)/cross/%,$(wildcard selftest/cross/*.c))
all: $(BUILD)/memtrace $(CROSS_TOOLS)
endif

$(BUILD)/obj/%.o: %.c | $(CROSS_ZLIB) $(CROSS_IBERTY)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

ifeq ($(ARCH)-$(CROSS_COMPILE),x86_64-)
$(BUILD)/agent/agent.bin: target/agent/payload/agent_x86_64.c target/agent/payload/agent_core.inc.c target/heap/sample_draw.h target/agent/payload/agent_x86.h target/agent/payload/agent.ld target/agent/agent_abi.h arch/agent_cpu_flags.h
	@mkdir -p $(dir $@)
	$(AGENT_CC) $(AGENT_CFLAGS) -c $< -o $(BUILD)/agent/agent.o
	ld -nostdlib -static -T target/agent/payload/agent.ld -o $(BUILD)/agent/agent.elf $(BUILD)/agent/agent.o
	objcopy -O binary $(BUILD)/agent/agent.elf $@
else ifeq ($(ARCH)-$(CROSS_COMPILE),i386-)
# i386: the same compiler with -m32, ld for elf_i386.
$(BUILD)/agent/agent.bin: target/agent/payload/agent_i386.c target/agent/payload/agent_core.inc.c target/heap/sample_draw.h target/agent/payload/agent_x86.h target/agent/payload/agent.ld target/agent/agent_abi.h arch/agent_cpu_flags.h
	@mkdir -p $(dir $@)
	$(AGENT_CC) $(AGENT_I386_CFLAGS) -c $< -o $(BUILD)/agent/agent.o
	ld -m elf_i386 -nostdlib -static -e agent_header -T target/agent/payload/agent.ld -o $(BUILD)/agent/agent.elf $(BUILD)/agent/agent.o
	objcopy -O binary $(BUILD)/agent/agent.elf $@
else ifeq ($(ARCH),aarch64)
# aarch64: built with the cross compiler (clang and lld when there is no
# aarch64-linux-gnu-gcc) or natively.
$(BUILD)/agent/agent.bin: target/agent/payload/agent_aarch64.c target/agent/payload/agent_core.inc.c target/heap/sample_draw.h target/agent/payload/agent.ld target/agent/agent_abi.h arch/agent_cpu_flags.h
	@mkdir -p $(dir $@)
	$(AGENT_A64_CC) $(AGENT_A64_CFLAGS) -c $< -o $(BUILD)/agent/agent.o
	$(AGENT_A64_LD) -nostdlib -static -e agent_header -T target/agent/payload/agent.ld -o $(BUILD)/agent/agent.elf $(BUILD)/agent/agent.o
	$(AGENT_A64_OBJCOPY) -O binary $(BUILD)/agent/agent.elf $@
else ifeq ($(ARCH),arm)
# arm: the cross compiler (clang and lld when there is no
# arm-linux-gnueabihf-gcc) or natively, as for aarch64.
$(BUILD)/agent/agent.bin: target/agent/payload/agent_arm.c target/agent/payload/agent_core.inc.c target/agent/payload/agent.ld target/agent/agent_abi.h arch/agent_cpu_flags.h
	@mkdir -p $(dir $@)
	$(AGENT_A64_CC) $(AGENT_ARM_CFLAGS) -c $< -o $(BUILD)/agent/agent.o
	$(AGENT_A64_LD) -nostdlib -static -e agent_header -T target/agent/payload/agent.ld -o $(BUILD)/agent/agent.elf $(BUILD)/agent/agent.o
	$(AGENT_A64_OBJCOPY) -O binary $(BUILD)/agent/agent.elf $@
else
$(BUILD)/agent/agent.bin:
	@mkdir -p $(dir $@)
	: > $@
endif

$(BUILD)/agent/agent_blob.c: $(BUILD)/agent/agent.bin
	{ echo '/* generated from $< */'; \
	  echo 'extern const unsigned char mt_agent_blob[]; extern const unsigned long mt_agent_blob_len;'; \
	  echo 'const unsigned char mt_agent_blob[] = {'; \
	  od -An -v -tx1 $< | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0};'; \
	  echo "const unsigned long mt_agent_blob_len = $$(stat -c %s $<);"; } > $@

$(BUILD)/agent/agent_blob.o: $(BUILD)/agent/agent_blob.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(PB_C) $(PB_H) &: target/report/profile.proto
	@mkdir -p $(PB_GEN)
	protoc-c --c_out=$(PB_GEN) $<

$(BUILD)/obj/gen/profile.pb-c.o: $(PB_C) $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/target/report/report_pprof.o: $(if $(findstring MT_NO_PPROF,$(ALL_CFLAGS)),,$(PB_H))

$(BUILD)/libmt.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/zlib/libz.a:
	tools/cross-zlib.sh $(BUILD)/zlib $(CC) $(ARCH_CFLAGS)

$(BUILD)/iberty/libiberty.a:
	tools/cross-iberty.sh $(BUILD)/iberty $(CC) $(ARCH_CFLAGS)

# Extra link flags for the tracer alone.  It stays a PIE (ASLR for a root
# tool that parses hostile ELF, DWARF and wire input).
TRACER_LDFLAGS ?=

$(BUILD)/memtrace: $(MAIN_OBJ) $(BUILD)/libmt.a
	$(CC) $(ALL_LDFLAGS) $(TRACER_LDFLAGS) -o $@ $^ $(TARGET_LIBS)

ifneq ($(HOSTFS_OBJDIR),$(BUILD)/obj)
$(HOSTFS_OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@
endif

$(BUILD)/memtrace-fs: $(HOSTFS_OBJS)
	$(CC) $(HOST_LDFLAGS) -o $@ $^ $(HOSTFS_LIBS)

# Copied whenever they differ: the build folder may be newer or older.
target/memtrace: $(BUILD)/memtrace FORCE
	@cmp -s $< $@ || cp $< $@

host-fs/memtrace-fs: $(BUILD)/memtrace-fs FORCE
	@cmp -s $< $@ || cp $< $@

FORCE:

$(BUILD)/unit/%: selftest/unit/%.c $(BUILD)/libmt.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libmt.a $(ALL_LDFLAGS) $(TARGET_LIBS) $(UNIT_LIBELF)

$(BUILD)/cross/%: selftest/cross/%.c $(BUILD)/libmt.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libmt.a $(ALL_LDFLAGS) $(TARGET_LIBS)

# Programs with known allocation behaviour: built for gdb and valgrind to read.
$(BUILD)/selftest/%: selftest/programs/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g -O0 -fno-omit-frame-pointer $(ARCH_CFLAGS) -pthread -o $@ $< -ldl

$(BUILD)/selftest/%: selftest/programs/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -g -O0 $(ARCH_CFLAGS) -pthread -o $@ $<

$(BENCH_BIN): bench/allocbench.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(ARCH_CFLAGS) -pthread -o $@ $<

tests-build: tests-build-tools $(PROG_BINS) $(BENCH_BIN)
# What make check needs of the sanitizer build: the traced programs and
# the bench come from the release build (run-tests.sh's MT_RELEASE_BUILD).
tests-build-tools: $(BUILD)/memtrace $(BUILD)/memtrace-fs $(UNIT_BINS)

deps:
	@ARCH=$(ARCH) tools/install-deps.sh

# The test command of the README.  Unit tests and the tracer itself run with
# AddressSanitizer and UBSan; the same suite then checks the release build
# where it matters for speed.
# A test skipped for a missing tool that install-deps.sh installs fails
# instead: check installs them first, so such a skip is a broken install
# step (selftest/run-tests.sh, MT_STRICT).  STRICT=0 only lists it.
# The builds use every core (JOBS, default nproc): make check's 20 minutes
# on 2 cores leave no room for a serial build.
STRICT ?= 1
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: deps
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) BUILD=$(ASAN_BUILD) SAN=1 OPT=-O1 tests-build-tools
	$(MAKE) -j$(JOBS) tests-build
	$(MAKE) -j$(JOBS) cross
	MT_STRICT=$(STRICT) MT_BUILD=$(ASAN_BUILD) MT_RELEASE_BUILD=$(BUILD) selftest/run-tests.sh

test: tests-build
	MT_BUILD=$(BUILD) MT_RELEASE_BUILD=$(BUILD) selftest/run-tests.sh $(TESTS)

demo: deps all $(BUILD)/selftest/demo
	@echo '$$ $(BUILD)/memtrace -a $(BUILD)/selftest/demo'
	@$(BUILD)/memtrace -a $(BUILD)/selftest/demo

bench: deps all $(BENCH_BIN)
	bench/run-bench.sh $(BUILD)
	bench/agent-bench.sh $(BUILD)
	bench/scale-bench.sh $(BUILD)
	bench/client-request-bench.sh $(BUILD)
	bench/redis-bench.sh $(BUILD)

# memtrace's per-call cost on the arm64 and armhf boards (Debian's kernels
# in qemu-system), against each board's own ptrace floor.
bench-board: deps cross
	bench/board-bench.sh aarch64
	bench/board-bench.sh arm

FUZZ_SECONDS ?= 60
fuzz:
	selftest/fuzz/run-fuzzers.sh $(FUZZ_SECONDS)
	$(MAKE) all
	selftest/leakgen/fuzz.sh $(BUILD)/memtrace $(FUZZ_SECONDS)

lint:
	selftest/engine-boundary.sh
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr -I. -D__x86_64__ --std=c11 target host-fs shared arch/x86_64.c arch/x86_insn.c arch/i386_patch.c
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr -I. -D__aarch64__ --std=c11 arch/aarch64.c arch/aarch64_insn.c arch/aarch64_patch.c selftest/cross
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr -I. -D__arm__ --std=c11 arch/arm.c arch/arm_insn.c arch/thumb_insn.c arch/arm_patch.c
	$(MAKE) $(PB_H)
	clang-tidy --quiet $(TARGET_SRCS) $(SHARED_SRCS) $(HOSTFS_SRCS) target/main.c -- -std=gnu11 -I. -I$(PB_GEN) -D_GNU_SOURCE
	python3 selftest/include-cycles.py $(BUILD)

# The boards' tracers: arm64 and armhf cross-built, i386 with gcc -m32
# (selftest/tests/board_*.sh).
cross:
	$(MAKE) BUILD=build-aarch64 CROSS_COMPILE=aarch64-linux-gnu- ARCH=aarch64
	$(MAKE) BUILD=build-arm CROSS_COMPILE=arm-linux-gnueabihf- ARCH=arm
	$(MAKE) BUILD=build-i386 ARCH=i386 build-i386/memtrace

install: install-memtrace install-memtrace-fs

clean:
	rm -rf build build-* target/memtrace host-fs/memtrace-fs

# --- Shipping: version, manual pages, completion, service (dist/, debian/) --
# --version prints VERSION and, built from git, `git describe`; the header
# is rewritten only when one of them changes.
MT_VERSION := $(shell cat VERSION 2>/dev/null)
MT_GIT_DESC := $(shell git describe --tags --always --dirty 2>/dev/null)
$(BUILD)/gen/mt_version.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define MT_VERSION "%s"\n#define MT_GIT_DESC "%s"\n' '$(MT_VERSION)' '$(MT_GIT_DESC)' >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(BUILD)/obj/shared/version.o $(BUILD)/host-obj/shared/version.o: $(BUILD)/gen/mt_version.h
$(BUILD)/obj/shared/version.o: ALL_CFLAGS += -I$(BUILD)/gen
$(BUILD)/host-obj/shared/version.o: HOST_CFLAGS += -I$(BUILD)/gen
# The HTML report's style and script (target/report/report_html.{css,js}),
# as C string literals: one line of the file per line of the string.  And
# for the page's Content-Security-Policy, the SHA-256 (base64) of each as
# the page holds it: a newline, then every line ended by a newline.  Only
# coreutils and awk (Essential in Debian): sha256sum's hex made bytes by
# coreutils' printf (dash's has no \x).
HTML_ASSETS := target/report/report_html.css target/report/report_html.js
$(BUILD)/gen/report_html_assets.h: $(HTML_ASSETS) Makefile
	@mkdir -p $(dir $@)
	@{ for a in CSS:target/report/report_html.css JS:target/report/report_html.js; do \
	    printf '#define REPORT_HTML_%s \\\n' "$${a%%:*}"; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n" \\/' "$${a#*:}"; \
	    printf '    ""\n'; \
	    hex=$$({ echo; awk '{ print }' "$${a#*:}"; } | sha256sum | cut -c1-64 | sed 's/../\\x&/g') && \
	    sum=$$(env printf "$$hex" | base64 -w0) && [ $${#sum} = 44 ] && \
	    printf '#define REPORT_HTML_%s_SHA256 "%s"\n' "$${a%%:*}" "$$sum" || exit 1; \
	    done; } >$@.new && mv $@.new $@
$(BUILD)/obj/target/report/report_html.o: $(BUILD)/gen/report_html_assets.h
$(BUILD)/obj/target/report/report_html.o: ALL_CFLAGS += -I$(BUILD)/gen

BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
AVAHI_EXAMPLEDIR ?= $(PREFIX)/share/doc/memtrace-fs/examples
.PHONY: install-memtrace install-memtrace-fs install-service

# The tracer alone (also for cross builds: the binary of $(BUILD)).
install-memtrace: $(BUILD)/memtrace
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(BUILD)/memtrace $(DESTDIR)$(BINDIR)/memtrace
	install -m 644 dist/man/memtrace.1 $(DESTDIR)$(MANDIR)/man1/memtrace.1
	install -m 644 dist/bash-completion/memtrace $(DESTDIR)$(BASHCOMPDIR)/memtrace

install-memtrace-fs: $(BUILD)/memtrace-fs
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(BUILD)/memtrace-fs $(DESTDIR)$(BINDIR)/memtrace-fs
	install -m 644 dist/man/memtrace-fs.1 $(DESTDIR)$(MANDIR)/man1/memtrace-fs.1
	install -m 644 dist/bash-completion/memtrace $(DESTDIR)$(BASHCOMPDIR)/memtrace-fs

# memtrace-fs as a systemd service (with install-memtrace-fs): the unit (its
# ExecStart names $(BINDIR)), its settings in $(SYSCONFDIR)/default/memtrace-fs (kept when
# present) and the avahi service file for hosts that run it with -n.
install-service:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(AVAHI_EXAMPLEDIR)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' dist/systemd/memtrace-fs.service.in \
	    >$(DESTDIR)$(SYSTEMDUNITDIR)/memtrace-fs.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/memtrace-fs.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/memtrace-fs ] || \
	    install -m 644 dist/default/memtrace-fs $(DESTDIR)$(SYSCONFDIR)/default/memtrace-fs
	install -m 644 dist/avahi/memtrace-fs.service $(DESTDIR)$(AVAHI_EXAMPLEDIR)/memtrace-fs.service

-include $(shell find $(BUILD)/obj $(BUILD)/host-obj -name '*.d' 2>/dev/null)
