/* x86 instruction length decoder and displaced-execution planner.
 *
 * The decoder is table driven: one property byte per opcode of each map says
 * whether a ModRM byte follows and what immediate comes after it.  Only the
 * length and the position of the displacement and immediate matter to
 * memtrace, so operands are not named. */
#include "arch/x86_insn.h"

#include <string.h>

/* Opcode properties. */
enum {
    P_MODRM = 1 << 0,   /* a ModRM byte (and maybe SIB and displacement) follows */
    P_IMM8 = 1 << 1,    /* 1-byte immediate */
    P_IMM16 = 1 << 2,   /* 2-byte immediate (ret imm16, enter's first part, far selector) */
    P_IMMZ = 1 << 3,    /* 2 or 4 bytes by operand size */
    P_IMMV = 1 << 4,    /* 2, 4 or 8 bytes by operand size (mov r, imm; B8+r) */
    P_MOFFS = 1 << 5,   /* address-size offset (mov al/eax <-> moffs; A0-A3) */
    P_GRP3 = 1 << 6,    /* F6/F7: /0 and /1 (test) carry an immediate */
    P_INV64 = 1 << 7,   /* invalid in 64-bit mode */
    P_BAD = 1 << 8,     /* invalid, or not supported here (3DNow) */
    P_REGFORM = 1 << 9, /* ModRM is a register pair whatever its mod (mov cr/dr) */
    P_IMM32 = 1 << 10,  /* 4-byte immediate whatever the operand size (XOP map A) */
};

#define MI8 (P_MODRM | P_IMM8)
#define MIZ (P_MODRM | P_IMMZ)

/* The 1-byte map.  Prefix bytes (26 2E 36 3E 64-67 F0 F2 F3), REX (40-4F in
 * 64-bit mode) and the escapes 0F, C4, C5, 62 are handled before the table is
 * consulted; their entries describe the 32-bit meaning. */
static const uint16_t map_1byte[256] = {
    /* ALU ops: op r/m,r / op r,r/m (00-03), op al,ib (04), op eAX,iz (05);
     * push/pop segment and BCD adjusts do not exist in 64-bit mode. */
    [0x00 ... 0x03] = P_MODRM, [0x04] = P_IMM8, [0x05] = P_IMMZ, [0x06 ... 0x07] = P_INV64,
    [0x08 ... 0x0b] = P_MODRM, [0x0c] = P_IMM8, [0x0d] = P_IMMZ, [0x0e] = P_INV64,
    [0x10 ... 0x13] = P_MODRM, [0x14] = P_IMM8, [0x15] = P_IMMZ, [0x16 ... 0x17] = P_INV64,
    [0x18 ... 0x1b] = P_MODRM, [0x1c] = P_IMM8, [0x1d] = P_IMMZ, [0x1e ... 0x1f] = P_INV64,
    [0x20 ... 0x23] = P_MODRM, [0x24] = P_IMM8, [0x25] = P_IMMZ, [0x27] = P_INV64,
    [0x28 ... 0x2b] = P_MODRM, [0x2c] = P_IMM8, [0x2d] = P_IMMZ, [0x2f] = P_INV64,
    [0x30 ... 0x33] = P_MODRM, [0x34] = P_IMM8, [0x35] = P_IMMZ, [0x37] = P_INV64,
    [0x38 ... 0x3b] = P_MODRM, [0x3c] = P_IMM8, [0x3d] = P_IMMZ, [0x3f] = P_INV64,
    /* 40-5F inc/dec/push/pop reg: no operands bytes. */
    /* pusha/popa, bound, arpl/movsxd, push iz, imul r,r/m,iz, push ib, imul ib. */
    [0x60 ... 0x61] = P_INV64, [0x62] = P_MODRM | P_INV64, [0x63] = P_MODRM,
    [0x68] = P_IMMZ, [0x69] = MIZ, [0x6a] = P_IMM8, [0x6b] = MI8,
    /* jcc rel8 */
    [0x70 ... 0x7f] = P_IMM8,
    /* group 1 immediates (82 is an alias of 80 outside 64-bit mode), test,
     * xchg, mov, lea, mov sreg, pop r/m */
    [0x80] = MI8, [0x81] = MIZ, [0x82] = MI8 | P_INV64, [0x83] = MI8,
    [0x84 ... 0x8f] = P_MODRM,
    /* 90-99 xchg/nop/cbw/cwd; 9A far call ptr16:z; 9B-9F fwait, pushf, popf, sahf, lahf */
    [0x9a] = P_IMMZ | P_IMM16 | P_INV64,
    [0xa0 ... 0xa3] = P_MOFFS,
    /* a4-a7 movs/cmps; test al/eAX; stos/lods/scas */
    [0xa8] = P_IMM8, [0xa9] = P_IMMZ,
    [0xb0 ... 0xb7] = P_IMM8, [0xb8 ... 0xbf] = P_IMMV,
    /* shift group 2 by ib, ret iw, les/lds (VEX in 64-bit mode), mov r/m imm */
    [0xc0 ... 0xc1] = MI8, [0xc2] = P_IMM16, [0xc4 ... 0xc5] = P_MODRM | P_INV64,
    [0xc6] = MI8, [0xc7] = MIZ,
    /* enter iw,ib; leave; lret iw; lret; int3; int ib; into; iret */
    [0xc8] = P_IMM16 | P_IMM8, [0xca] = P_IMM16, [0xcd] = P_IMM8, [0xce] = P_INV64,
    /* shift group 2 by 1/cl; aam/aad ib; salc (undocumented); xlat; x87 */
    [0xd0 ... 0xd3] = P_MODRM, [0xd4 ... 0xd5] = P_IMM8 | P_INV64, [0xd6] = P_BAD,
    [0xd8 ... 0xdf] = P_MODRM,
    /* loop*, jcxz rel8; in/out ib; call/jmp rel z; far jmp ptr16:z; jmp rel8 */
    [0xe0 ... 0xe7] = P_IMM8, [0xe8 ... 0xe9] = P_IMMZ, [0xea] = P_IMMZ | P_IMM16 | P_INV64,
    [0xeb] = P_IMM8,
    /* group 3 (test has an immediate), group 4/5 */
    [0xf6] = P_MODRM | P_GRP3, [0xf7] = P_MODRM | P_GRP3, [0xfe ... 0xff] = P_MODRM,
};

/* The 0F map. */
static const uint16_t map_0f[256] = {
    /* system groups 6/7, lar, lsl; syscall, clts, sysret, invd, wbinvd, ud2;
     * prefetch group; 3DNow (femms, 0F 0F) is not supported */
    [0x00 ... 0x03] = P_MODRM, [0x04] = P_BAD, [0x0a] = P_BAD, [0x0c] = P_BAD,
    [0x0d] = P_MODRM, [0x0e ... 0x0f] = P_BAD,
    /* SSE moves, hint nops / endbr (18-1F), mov cr/dr, SSE */
    [0x10 ... 0x1f] = P_MODRM, [0x20 ... 0x23] = P_MODRM | P_REGFORM, [0x24 ... 0x27] = P_BAD,
    [0x28 ... 0x2f] = P_MODRM,
    /* 30-35 wrmsr..sysexit, 37 getsec; 38/3A escapes are handled before */
    [0x36] = P_BAD, [0x39] = P_BAD, [0x3b ... 0x3f] = P_BAD,
    /* cmovcc, SSE/MMX */
    [0x40 ... 0x6f] = P_MODRM,
    /* pshuf*, shift groups 12-14 take ib; emms has no operand */
    [0x70 ... 0x73] = MI8, [0x74 ... 0x76] = P_MODRM,
    [0x78 ... 0x79] = P_MODRM, [0x7a ... 0x7b] = P_BAD, [0x7c ... 0x7f] = P_MODRM,
    /* jcc rel z */
    [0x80 ... 0x8f] = P_IMMZ,
    /* setcc */
    [0x90 ... 0x9f] = P_MODRM,
    /* push/pop fs, cpuid, bt, shld ib/cl, PadLock; push/pop gs, rsm, bts, shrd,
     * group 15, imul */
    [0xa3] = P_MODRM, [0xa4] = MI8, [0xa5] = P_MODRM,
    [0xa6 ... 0xa7] = P_MODRM | P_REGFORM,   /* VIA PadLock: xsha*, xcrypt-* */
    [0xab] = P_MODRM, [0xac] = MI8, [0xad ... 0xaf] = P_MODRM,
    /* cmpxchg, lss, btr, lfs, lgs, movzx, popcnt, ud1, group 8 ib, btc, bsf, bsr, movsx */
    [0xb0 ... 0xb9] = P_MODRM, [0xba] = MI8, [0xbb ... 0xbf] = P_MODRM,
    /* xadd, cmpps ib, movnti, pinsrw ib, pextrw ib, shufps ib, group 9; bswap */
    [0xc0 ... 0xc1] = P_MODRM, [0xc2] = MI8, [0xc3] = P_MODRM, [0xc4 ... 0xc6] = MI8,
    [0xc7] = P_MODRM,
    /* MMX/SSE arithmetic, ud0 */
    [0xd0 ... 0xff] = P_MODRM,
};

/* VEX and EVEX encodings of the 0F map: everything has ModRM (vzeroupper /
 * vzeroall, 0F 77, are the exception handled in code); these take an ib. */
static bool vex_0f_has_imm8(uint8_t op)
{
    return (op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6);
}

static uint64_t read_le(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    for (unsigned k = size; k-- > 0;)
        v = (v << 8) | p[k];
    return v;
}

static int64_t sign_extend(uint64_t v, unsigned size)
{
    if (size >= 8)
        return (int64_t)v;
    unsigned shift = 64 - 8 * size;
    return (int64_t)(v << shift) >> shift;
}

static bool is_legacy_prefix(uint8_t b)
{
    switch (b) {
    case 0xf0: case 0xf2: case 0xf3:
    case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
    case 0x66: case 0x67:
        return true;
    default:
        return false;
    }
}

/* ModRM, SIB and displacement starting at p[*i]. */
static bool decode_modrm(const uint8_t *p, size_t limit, size_t *i, bool mode64,
                         bool register_form, struct x86_insn *out)
{
    if (*i >= limit)
        return false;
    out->has_modrm = true;
    out->modrm_off = (unsigned)*i;
    out->modrm = p[(*i)++];
    unsigned mod = out->modrm >> 6, rm = out->modrm & 7;
    unsigned disp = 0;
    if (mod == 3 || register_form)
        return true;
    if (!mode64 && out->addrsize_prefix) {
        /* 16-bit addressing: no SIB; [disp16] replaces [bp] with mod 00. */
        if (mod == 0 && rm == 6)
            disp = 2;
        else if (mod == 1)
            disp = 1;
        else if (mod == 2)
            disp = 2;
    } else {
        if (rm == 4) {
            if (*i >= limit)
                return false;
            out->has_sib = true;
            out->sib = p[(*i)++];
            if (mod == 0 && (out->sib & 7) == 5)
                disp = 4;
        } else if (mod == 0 && rm == 5) {
            disp = 4;
            out->rip_relative = mode64;
        }
        if (mod == 1)
            disp = 1;
        else if (mod == 2)
            disp = 4;
    }
    if (disp) {
        out->disp_off = (unsigned)*i;
        out->disp_size = disp;
        *i += disp;
        if (*i > limit)
            return false;
    }
    return true;
}

/* Sizes in bytes of the immediate fields the properties ask for. */
static unsigned immediate_size(uint16_t prop, const struct x86_insn *in, bool mode64)
{
    bool rex_w = (in->rex & 8) != 0;
    unsigned z = (in->opsize_prefix && !rex_w) ? 2 : 4;
    unsigned size = 0;
    if (prop & P_IMM8)
        size += 1;
    if (prop & P_IMM16)
        size += 2;
    if (prop & P_IMMZ)
        size += z;
    if (prop & P_IMM32)
        size += 4;
    if (prop & P_IMMV)
        size += rex_w ? 8 : z;
    if (prop & P_MOFFS)
        size += mode64 ? (in->addrsize_prefix ? 4 : 8) : (in->addrsize_prefix ? 2 : 4);
    if ((prop & P_GRP3) && ((in->modrm >> 3) & 7) < 2)
        size += (in->opcode == 0xf6) ? 1 : z;
    return size;
}

/* Control flow of legacy-encoded instructions. */
static void classify_flow(struct x86_insn *in)
{
    uint8_t op = in->opcode;
    unsigned reg = (in->modrm >> 3) & 7;
    enum x86_flow f = X86_FLOW_NORMAL;
    if (in->map == X86_MAP_1BYTE) {
        if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3))
            f = X86_FLOW_JCC_REL;
        else if (op == 0xe9 || op == 0xeb)
            f = X86_FLOW_JMP_REL;
        else if (op == 0xe8)
            f = X86_FLOW_CALL_REL;
        else if (op == 0xc2 || op == 0xc3)
            f = X86_FLOW_RET;
        else if (op == 0x9a || op == 0xea || op == 0xca || op == 0xcb || op == 0xcf)
            f = X86_FLOW_FAR;
        else if (op == 0xcc || op == 0xcd || op == 0xce || op == 0xf1)
            f = X86_FLOW_TRAP;
        else if (op == 0xc7 && in->modrm == 0xf8)
            f = X86_FLOW_XBEGIN;
        else if (op == 0xff && reg == 2)
            f = X86_FLOW_CALL_INDIRECT;
        else if (op == 0xff && reg == 4)
            f = X86_FLOW_JMP_INDIRECT;
        else if (op == 0xff && (reg == 3 || reg == 5))
            f = X86_FLOW_FAR;
    } else if (in->map == X86_MAP_0F) {
        if (op >= 0x80 && op <= 0x8f)
            f = X86_FLOW_JCC_REL;
        else if (op == 0x05 || op == 0x07 || op == 0x34 || op == 0x35 || op == 0x0b ||
                 op == 0xb9 || op == 0xff)
            f = X86_FLOW_TRAP;
    }
    in->flow = f;
    if (f == X86_FLOW_JCC_REL || f == X86_FLOW_JMP_REL || f == X86_FLOW_CALL_REL ||
        f == X86_FLOW_XBEGIN) {
        in->rel_off = in->imm_off;
        in->rel_size = in->imm_size;
    }
}

/* VEX (C4/C5), EVEX (62) or XOP (8F) prefix at p[*i]; sets the map and
 * leaves *i at the opcode. */
static bool decode_vex_prefix(const uint8_t *p, size_t limit, size_t *i, struct x86_insn *out)
{
    uint8_t esc = p[*i];
    if (out->rex || out->opsize_prefix || out->rep || out->lock)
        return false;   /* #UD: these prefixes may not precede VEX/EVEX/XOP */
    if (esc == 0xc5) {
        /* C5 [R vvvv L pp]: always the 0F map */
        if (*i + 2 > limit)
            return false;
        out->encoding = X86_ENC_VEX;
        out->map = X86_MAP_0F;
        *i += 2;
        return true;
    }
    if (esc == 0xc4 || esc == 0x8f) {
        /* C4/8F [RXB mmmmm] [W vvvv L pp] */
        if (*i + 3 > limit)
            return false;
        unsigned mmmmm = p[*i + 1] & 0x1f;
        if (esc == 0xc4 && mmmmm >= 1 && mmmmm <= 3) {
            out->encoding = X86_ENC_VEX;
            out->map = (enum x86_map)mmmmm;
        } else if (esc == 0x8f && mmmmm >= 8 && mmmmm <= 10) {
            out->encoding = X86_ENC_XOP;
            out->map = (enum x86_map)(X86_MAP_XOP8 + (mmmmm - 8));
        } else {
            return false;
        }
        out->vex_w = (p[*i + 2] & 0x80) != 0;
        *i += 3;
        return true;
    }
    /* EVEX: 62 P0 P1 P2, P1 bit 2 is always 1. */
    if (*i + 4 > limit)
        return false;
    unsigned mmm = p[*i + 1] & 7;
    if ((p[*i + 2] & 4) == 0)
        return false;
    switch (mmm) {
    case 1: out->map = X86_MAP_0F; break;
    case 2: out->map = X86_MAP_0F38; break;
    case 3: out->map = X86_MAP_0F3A; break;
    case 5: out->map = X86_MAP_5; break;
    case 6: out->map = X86_MAP_6; break;
    default: return false;
    }
    out->encoding = X86_ENC_EVEX;
    out->vex_w = (p[*i + 2] & 0x80) != 0;
    *i += 4;
    return true;
}

/* Opcode properties of VEX, EVEX and XOP instructions. */
static uint16_t vex_properties(const struct x86_insn *in)
{
    switch (in->map) {
    case X86_MAP_0F:
        if (in->encoding == X86_ENC_VEX && in->opcode == 0x77)
            return 0;   /* vzeroupper / vzeroall */
        return vex_0f_has_imm8(in->opcode) ? MI8 : P_MODRM;
    case X86_MAP_0F3A:
    case X86_MAP_XOP8:
        return MI8;
    case X86_MAP_XOPA:
        return P_MODRM | P_IMM32;
    default:
        return P_MODRM;
    }
}

/* Outside 64-bit mode C4, C5 and 62 are les, lds and bound unless the next
 * byte would be a register-form ModRM, which those do not allow.  8F is pop
 * r/m unless the ModRM reg field is non-zero (XOP), in every mode. */
static bool is_vex_escape(const uint8_t *p, size_t limit, size_t i, bool mode64)
{
    uint8_t b = p[i];
    if (b == 0x8f)
        return i + 1 < limit && ((p[i + 1] >> 3) & 7) != 0;
    if (b != 0xc4 && b != 0xc5 && b != 0x62)
        return false;
    if (mode64)
        return true;
    return i + 1 < limit && (p[i + 1] >> 6) == 3;
}

bool x86_decode(const uint8_t *p, size_t avail, bool mode64, struct x86_insn *out)
{
    memset(out, 0, sizeof(*out));
    size_t limit = avail < X86_INSN_MAX_LEN ? avail : X86_INSN_MAX_LEN;
    size_t i = 0;

    for (; i < limit && is_legacy_prefix(p[i]); i++) {
        switch (p[i]) {
        case 0xf0: out->lock = true; break;
        case 0xf2: case 0xf3: out->rep = p[i]; break;
        case 0x66: out->opsize_prefix = true; break;
        case 0x67: out->addrsize_prefix = true; break;
        default: out->segment = p[i]; break;
        }
    }
    out->n_prefixes = (unsigned)i;
    if (i >= limit)
        return false;
    if (mode64 && (p[i] & 0xf0) == 0x40) {
        out->rex = p[i++];
        /* A REX not directly before the opcode is ignored by the CPU;
         * disassemblers show it as a separate instruction.  Refuse it. */
        if (i >= limit || (p[i] & 0xf0) == 0x40 || is_legacy_prefix(p[i]))
            return false;
    }

    uint16_t prop;
    if (is_vex_escape(p, limit, i, mode64)) {
        if (!decode_vex_prefix(p, limit, &i, out))
            return false;
        if (i >= limit)
            return false;
        out->opcode_off = (unsigned)i;
        out->opcode = p[i++];
        prop = vex_properties(out);
    } else if (p[i] == 0x0f) {
        if (++i >= limit)
            return false;
        if (p[i] == 0x38 || p[i] == 0x3a) {
            out->map = p[i] == 0x38 ? X86_MAP_0F38 : X86_MAP_0F3A;
            if (++i >= limit)
                return false;
            prop = out->map == X86_MAP_0F38 ? P_MODRM : MI8;
        } else {
            out->map = X86_MAP_0F;
            prop = map_0f[p[i]];
        }
        out->opcode_off = (unsigned)i;
        out->opcode = p[i++];
    } else {
        out->map = X86_MAP_1BYTE;
        out->opcode_off = (unsigned)i;
        out->opcode = p[i++];
        prop = map_1byte[out->opcode];
    }
    if ((prop & P_BAD) || (mode64 && (prop & P_INV64)))
        return false;

    if ((prop & P_MODRM) && !decode_modrm(p, limit, &i, mode64, (prop & P_REGFORM) != 0, out))
        return false;
    /* Invalid group encodings: FE /2-/7, FF /7. */
    if (out->encoding == X86_ENC_LEGACY && out->map == X86_MAP_1BYTE) {
        unsigned reg = (out->modrm >> 3) & 7;
        if ((out->opcode == 0xfe && reg >= 2) || (out->opcode == 0xff && reg == 7))
            return false;
    }

    unsigned imm = immediate_size(prop, out, mode64);
    /* AMD SSE4a extrq/insertq xmm, ib, ib: 0F 78 with a 66 or F2 prefix
     * (without, it is vmread). */
    if (out->encoding == X86_ENC_LEGACY && out->map == X86_MAP_0F && out->opcode == 0x78 &&
        (out->opsize_prefix || out->rep == 0xf2))
        imm += 2;
    if (imm) {
        out->imm_off = (unsigned)i;
        out->imm_size = imm;
        i += imm;
        if (i > limit)
            return false;
    }
    out->len = (unsigned)i;
    if (out->encoding == X86_ENC_LEGACY)
        classify_flow(out);
    return true;
}

uint64_t x86_branch_target(const struct x86_insn *insn, const uint8_t *p, uint64_t insn_addr,
                           bool mode64)
{
    int64_t rel = sign_extend(read_le(p + insn->rel_off, insn->rel_size), insn->rel_size);
    uint64_t target = insn_addr + insn->len + (uint64_t)rel;
    return mode64 ? target : (target & 0xffffffffu);
}

/* ---- displaced execution ---- */

static void put_le(uint8_t *p, uint64_t v, unsigned size)
{
    for (unsigned k = 0; k < size; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* Appends a jump to an absolute address: `jmp *0(%rip); .quad dest` in 64-bit
 * mode (reaches anywhere, touches no register), `jmp rel32` in 32-bit mode
 * (reaches anywhere in 4 GiB). */
static unsigned jump_len(bool mode64)
{
    return mode64 ? 14 : 5;
}

static void append_jump(struct displace_plan *plan, uint64_t slot_addr, uint64_t dest, bool mode64)
{
    uint8_t *s = plan->slot_bytes + plan->slot_len;
    if (mode64) {
        static const uint8_t jmp_mem[6] = {0xff, 0x25, 0, 0, 0, 0};
        memcpy(s, jmp_mem, sizeof(jmp_mem));
        put_le(s + 6, dest, 8);
    } else {
        uint64_t next = slot_addr + plan->slot_len + 5;
        s[0] = 0xe9;
        put_le(s + 1, (dest - next) & 0xffffffffu, 4);
    }
    plan->slot_len += jump_len(mode64);
}

static void append_bytes(struct displace_plan *plan, const uint8_t *bytes, unsigned n)
{
    memcpy(plan->slot_bytes + plan->slot_len, bytes, n);
    plan->slot_len += n;
}

/* Instructions whose only effect is advancing the PC. */
static bool is_nop(const struct x86_insn *in, const uint8_t *p)
{
    if (in->encoding != X86_ENC_LEGACY || in->lock)
        return false;
    if (in->map == X86_MAP_1BYTE && in->opcode == 0x90)
        return (in->rex & 1) == 0;   /* with REX.B it is xchg %r8,%rax */
    if (in->map != X86_MAP_0F)
        return false;
    if (in->opcode == 0x1f && ((in->modrm >> 3) & 7) == 0)
        return true;                  /* nopw/nopl r/m */
    /* endbr64 / endbr32: F3 0F 1E FA / FB */
    return in->opcode == 0x1e && in->rep == 0xf3 && !in->opsize_prefix && in->rex == 0 &&
           (p[in->modrm_off] == 0xfa || p[in->modrm_off] == 0xfb);
}

static struct displace_plan unsupported(unsigned len)
{
    struct displace_plan plan;
    memset(&plan, 0, sizeof(plan));
    plan.kind = DISPLACE_UNSUPPORTED;
    plan.insn_len = len;
    return plan;
}

/* Copies the instruction into the slot with a RIP-relative displacement
 * rewritten to reach the same address from the slot. */
static bool append_relocated_insn(struct displace_plan *plan, const struct x86_insn *in,
                                  const uint8_t *p, uint64_t insn_addr, uint64_t slot_addr)
{
    unsigned at = plan->slot_len;
    append_bytes(plan, p, in->len);
    if (!in->rip_relative)
        return true;
    if (in->addrsize_prefix)
        return false;   /* addr32 RIP-relative wraps to 32 bits: rare, not worth it */
    /* RIP arithmetic wraps at 2^64, so unsigned arithmetic is exact. */
    uint64_t disp = (uint64_t)sign_extend(read_le(p + in->disp_off, 4), 4);
    uint64_t operand = insn_addr + in->len + disp;
    uint64_t new_disp = operand - (slot_addr + at + in->len);
    if (sign_extend(new_disp & 0xffffffffu, 4) != (int64_t)new_disp)
        return false;
    put_le(plan->slot_bytes + at + in->disp_off, new_disp, 4);
    return true;
}

/* Conditional branch: the copy with its displacement pointing over the
 * fall-through jump, then the fall-through jump, then the taken jump. */
static void plan_conditional(struct displace_plan *plan, const struct x86_insn *in,
                             const uint8_t *p, uint64_t next, uint64_t target,
                             uint64_t slot_addr, bool mode64)
{
    unsigned at = plan->slot_len;
    append_bytes(plan, p, in->len);
    put_le(plan->slot_bytes + at + in->rel_off, jump_len(mode64), in->rel_size);
    append_jump(plan, slot_addr, next, mode64);
    append_jump(plan, slot_addr, target, mode64);
}

/* Pushes the original return address as a call would: 64-bit: lea
 * -8(%rsp),%rsp (keeps the flags, unlike sub); movl lo,(%rsp); movl
 * hi,4(%rsp).  32-bit: push imm32. */
static void append_push_return(struct displace_plan *plan, uint64_t next, bool mode64)
{
    if (mode64) {
        static const uint8_t lea_rsp[5] = {0x48, 0x8d, 0x64, 0x24, 0xf8};
        uint8_t lo[7] = {0xc7, 0x04, 0x24};
        uint8_t hi[8] = {0xc7, 0x44, 0x24, 0x04};
        put_le(lo + 3, next & 0xffffffffu, 4);
        put_le(hi + 4, next >> 32, 4);
        append_bytes(plan, lea_rsp, sizeof(lea_rsp));
        append_bytes(plan, lo, sizeof(lo));
        append_bytes(plan, hi, sizeof(hi));
    } else {
        uint8_t push[5] = {0x68};
        put_le(push + 1, next & 0xffffffffu, 4);
        append_bytes(plan, push, sizeof(push));
    }
}

/* Whether the r/m operand names the stack pointer, as register or base,
 * which the push in front of it would move. */
static bool rm_uses_stack_pointer(const struct x86_insn *in, bool mode64)
{
    unsigned mod = in->modrm >> 6, rm = in->modrm & 7;
    bool rex_b = (in->rex & 1) != 0;
    if (!mode64 && in->addrsize_prefix)
        return false;   /* 16-bit addressing has no sp form */
    if (mod == 3)
        return rm == 4 && !rex_b;
    return rm == 4 && (in->sib & 7) == 4 && !rex_b;
}

/* call r/m: push the original return address, then jmp r/m (the same
 * ModRM with /4 for /2), RIP-relative operands rewritten. */
static bool plan_call_indirect(struct displace_plan *plan, const struct x86_insn *in,
                               const uint8_t *p, uint64_t insn_addr, uint64_t next,
                               uint64_t slot_addr, bool mode64)
{
    if (rm_uses_stack_pointer(in, mode64))
        return false;
    append_push_return(plan, next, mode64);
    unsigned at = plan->slot_len;
    if (!append_relocated_insn(plan, in, p, insn_addr, slot_addr))
        return false;
    plan->slot_bytes[at + in->modrm_off] = (uint8_t)((in->modrm & ~0x38u) | (4u << 3));
    return true;
}

struct displace_plan x86_displace(const uint8_t *insn, size_t avail, uint64_t insn_addr,
                                  uint64_t slot_addr, bool mode64)
{
    struct x86_insn in;
    if (!x86_decode(insn, avail, mode64, &in))
        return unsupported(0);
    struct displace_plan plan = unsupported(in.len);
    uint64_t next = insn_addr + in.len;
    if (!mode64)
        next &= 0xffffffffu;

    if (is_nop(&in, insn)) {
        plan.kind = DISPLACE_EMULATE;
        plan.new_pc = next;
        return plan;
    }
    bool relative = in.flow == X86_FLOW_JMP_REL || in.flow == X86_FLOW_JCC_REL ||
                    in.flow == X86_FLOW_CALL_REL;
    /* A 16-bit operand size truncates the new IP to 16 bits (and AMD and
     * Intel disagree about it in 64-bit mode): not displaced (unsupported). */
    if (relative && in.opsize_prefix)
        return plan;
    uint64_t target = relative ? x86_branch_target(&in, insn, insn_addr, mode64) : 0;

    switch (in.flow) {
    case X86_FLOW_JMP_REL:
        plan.kind = DISPLACE_EMULATE;
        plan.new_pc = target;
        return plan;
    case X86_FLOW_JCC_REL:
        plan_conditional(&plan, &in, insn, next, target, slot_addr, mode64);
        break;
    case X86_FLOW_CALL_REL:
        append_push_return(&plan, next, mode64);
        append_jump(&plan, slot_addr, target, mode64);
        break;
    case X86_FLOW_CALL_INDIRECT:
        if (in.opsize_prefix ||
            !plan_call_indirect(&plan, &in, insn, insn_addr, next, slot_addr, mode64))
            return unsupported(in.len);
        break;
    case X86_FLOW_NORMAL:
    case X86_FLOW_JMP_INDIRECT:   /* the target comes from a register or memory */
    case X86_FLOW_RET:            /* the target comes from the stack */
        if (!append_relocated_insn(&plan, &in, insn, insn_addr, slot_addr))
            return unsupported(in.len);
        append_jump(&plan, slot_addr, next, mode64);
        break;
    default:
        /* Far transfers, traps and system calls report or depend on their
         * own address. */
        return plan;
    }
    plan.kind = DISPLACE_OUT_OF_LINE;
    return plan;
}
