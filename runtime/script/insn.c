/*
 * insn.c - x86-64 instructions that may run out of line (insn.h).
 *
 * Encoding: legacy prefixes, an optional REX byte, the opcode (one byte,
 * or 0f and one more), a ModRM byte with an optional SIB byte and 1 or 4
 * displacement bytes, then an immediate.  ModRM with mod 00 and r/m 101 is
 * RIP-relative: its 4 displacement bytes follow the ModRM byte, and count
 * from the end of the instruction (insn_decode() says where they are).
 */
#include <string.h>
#include "insn.h"

enum { NO = 0, M = 1, M_I8 = 2, M_I32 = 3, I8 = 4, I32 = 5, GRP3 = 6, GRPFF = 7, GRPFE = 8,
       MOV_IMM = 9, ONE = 10 };

/* One-byte opcodes: what follows them (NO: not relocatable or unknown). */
static unsigned char one_byte(unsigned char op)
{
	if (op < 0x40 && (op & 7) < 4)
		return M;                                               /* ALU r/m forms */
	if (op < 0x40 && (op & 7) == 4)
		return I8;                                              /* ALU al, imm8 */
	if (op < 0x40 && (op & 7) == 5)
		return I32;                                             /* ALU eax, imm32 */
	if (op >= 0x50 && op <= 0x5f)
		return ONE;                                             /* push/pop reg */
	switch (op) {
	case 0x63: case 0x84: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89:
	case 0x8a: case 0x8b: case 0x8d: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
	case 0xd8: case 0xd9: case 0xda: case 0xdb: case 0xdc: case 0xdd: case 0xde: case 0xdf:  /* x87 */
		return M;
	case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6: case 0x6b:
		return M_I8;
	case 0x81: case 0xc7: case 0x69:
		return M_I32;
	case 0x6a: case 0xa8:
		return I8;
	case 0x68: case 0xa9:
		return I32;
	case 0x90: case 0x98: case 0x99: case 0xc9: case 0x91: case 0x92: case 0x93:
	case 0x94: case 0x95: case 0x96: case 0x97:
		return ONE;
	case 0xf6: case 0xf7:
		return GRP3;
	case 0xfe:
		return GRPFE;
	case 0xff:
		return GRPFF;
	default:
		return op >= 0xb0 && op <= 0xbf ? MOV_IMM : NO;
	}
}

/* Two-byte opcodes (0f xx) with ModRM and no immediate that are neither
 * jumps nor system instructions. */
static int two_byte_m(unsigned char op)
{
	return op == 0x1e || op == 0x1f || op == 0xaf || op == 0xb6 || op == 0xb7 || op == 0xbe ||
	       op == 0xbf || (op >= 0x40 && op <= 0x4f) || (op >= 0x90 && op <= 0x9f) ||
	       (op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2f) || (op >= 0x51 && op <= 0x6f) ||
	       op == 0x7e || op == 0x7f || op == 0xd6 || (op >= 0xd8 && op < 0xff);
}

/* ModRM (and SIB, displacement) at code[i]: the bytes they take, or 0
 * for a short buffer; *rip set for a RIP-relative operand. */
static unsigned modrm_len(const unsigned char *code, size_t avail, size_t i, int *rip)
{
	unsigned char modrm, mod, rm;
	unsigned n = 1;

	if (i >= avail)
		return 0;
	modrm = code[i];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {   /* SIB */
		if (i + 1 >= avail)
			return 0;
		n++;
		if (mod == 0 && (code[i + 1] & 7) == 5)
			n += 4;   /* disp32, no base */
	} else if (mod == 0 && rm == 5) {
		*rip = 1;         /* RIP-relative: disp32 */
		return 5;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

unsigned insn_decode(const unsigned char *code, size_t avail, unsigned *rip_disp)
{
	size_t i = 0;
	int opsize16 = 0, rex_w = 0, rip = 0, addr32 = 0;
	unsigned kind, m, imm = 0, len;

	*rip_disp = 0;
	while (i < avail && i < 4 && (code[i] == 0x66 || code[i] == 0x67 || code[i] == 0xf2 || code[i] == 0xf0 ||
				      code[i] == 0xf3 || code[i] == 0x2e || code[i] == 0x3e ||
				      code[i] == 0x26 || code[i] == 0x36 || code[i] == 0x64 || code[i] == 0x65)) {
		opsize16 |= code[i] == 0x66;
		addr32 |= code[i] == 0x67;
		i++;
	}
	if (i < avail && (code[i] & 0xf0) == 0x40) {
		rex_w = (code[i] & 8) != 0;
		i++;
	}
	if (i >= avail)
		return 0;
	if (code[i] == 0x0f) {
		if (i + 1 < avail && code[i + 1] >= 0xc8 && code[i + 1] <= 0xcf)
			return (unsigned)(i + 2);   /* bswap */
		if (i + 1 >= avail || !two_byte_m(code[i + 1]))
			return 0;
		m = modrm_len(code, avail, i + 2, &rip);
		len = m && i + 2 + m <= 15 && i + 2 + m <= avail ? (unsigned)(i + 2 + m) : 0;
		*rip_disp = len && rip ? (unsigned)(i + 3) : 0;
		return rip && addr32 ? 0 : len;   /* EIP-relative: not moved */
	}
	kind = one_byte(code[i]);
	i++;
	switch (kind) {
	case ONE:
		return (unsigned)i;
	case I8:
		return i + 1 <= avail ? (unsigned)(i + 1) : 0;
	case I32:
		return i + (opsize16 ? 2 : 4) <= avail ? (unsigned)(i + (opsize16 ? 2 : 4)) : 0;
	case MOV_IMM:
		len = (unsigned)(i + (code[i - 1] < 0xb8 ? 1 : rex_w ? 8 : opsize16 ? 2 : 4));
		return len <= avail ? len : 0;
	case M:
	case M_I8:
	case M_I32:
		imm = kind == M ? 0 : kind == M_I8 ? 1 : opsize16 ? 2 : 4;
		break;
	case GRP3:   /* test r/m, imm: /0 and /1; not, neg, mul, div...: no immediate */
		if (i >= avail)
			return 0;
		if (((code[i] >> 3) & 7) < 2)
			imm = code[i - 1] == 0xf6 ? 1 : opsize16 ? 2 : 4;
		break;
	case GRPFE:  /* inc, dec */
	case GRPFF:  /* inc, dec, push; not call or jmp */
		if (i >= avail || (((code[i] >> 3) & 7) > 1 && !(kind == GRPFF && ((code[i] >> 3) & 7) == 6)))
			return 0;
		break;
	default:
		return 0;
	}
	m = modrm_len(code, avail, i, &rip);
	if (!m || i + m + imm > 15 || i + m + imm > avail || (rip && addr32))
		return 0;
	*rip_disp = rip ? (unsigned)(i + 1) : 0;
	return (unsigned)(i + m + imm);
}

int insn_branch(const unsigned char *code, size_t avail, struct insn_branch *b)
{
	unsigned char op = avail ? code[0] : 0;
	int8_t rel8;

	memset(b, 0, sizeof(*b));
	if (avail >= 2 && op == 0xf3 && code[1] == 0xc3)
		b->len = 2, b->kind = INSN_RET;                         /* repz ret */
	else if (op == 0xc3 && avail >= 1)
		b->len = 1, b->kind = INSN_RET;
	else if (op == 0xc2 && avail >= 3)
		b->len = 3, b->kind = INSN_RET;                         /* ret $imm16 */
	else if ((op == 0xe9 || op == 0xe8) && avail >= 5)
		b->len = 5, b->kind = op == 0xe9 ? INSN_JMP : INSN_CALL, memcpy(&b->rel, code + 1, 4);
	else if ((op == 0xeb || (op >= 0x70 && op <= 0x7f)) && avail >= 2)
		b->len = 2, b->kind = op == 0xeb ? INSN_JMP : INSN_JCC, b->cc = op & 15,
		memcpy(&rel8, code + 1, 1), b->rel = rel8;
	else if (op == 0xff && avail >= 6 && code[1] == 0x25)
		b->len = 6, b->kind = INSN_JMP_RIP, b->rip_disp = 2, memcpy(&b->rel, code + 2, 4);
	else if (op == 0xf2 && avail >= 7 && code[1] == 0xff && code[2] == 0x25)   /* bnd jmp */
		b->len = 7, b->kind = INSN_JMP_RIP, b->rip_disp = 3, memcpy(&b->rel, code + 3, 4);
	else if (op == 0x0f && avail >= 6 && code[1] >= 0x80 && code[1] <= 0x8f)
		b->len = 6, b->kind = INSN_JCC, b->cc = code[1] & 15, memcpy(&b->rel, code + 2, 4);
	return b->kind ? (int)b->len : 0;
}

unsigned insn_relocatable_len(const unsigned char *code, size_t avail)
{
	unsigned rip_disp, len = insn_decode(code, avail, &rip_disp);

	return rip_disp ? 0 : len;
}

int insn_is_nop(const unsigned char *code, unsigned len)
{
	unsigned i = 0;

	while (i < len && (code[i] == 0x66 || code[i] == 0x2e))
		i++;
	return (i + 1 == len && code[i] == 0x90) || (i + 2 < len && code[i] == 0x0f && code[i + 1] == 0x1f &&
						       ((code[i + 2] >> 3) & 7) == 0);
}
