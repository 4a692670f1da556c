/*
 * insn-test.c - runtime/script/insn.c against objdump (tests/script/insn.t).
 *
 * Reads objdump's disassembly of the file named by argv[1], whose section
 * maps address A to file offset A - argv[2]; for every instruction the
 * decoder accepts,
 * its length must be objdump's and objdump must show no transfer of
 * control; a RIP-relative operand must be one objdump shows, its
 * displacement where the decoder says, giving objdump's address; a
 * branch a copy redoes (ret, jmp, jcc, call) must be that, to objdump's
 * target.  Prints "accepted N wrong M", "rip-relative R", "branches B"
 * and the wrong ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "insn.h"

/* A transfer of control, or what objdump cannot decode. */
static int transfers(const char *text)
{
	static const char *const words[] = { "jmp", "call", "ret", "loop", "jrcxz", "jecxz", "syscall",
					     "int", "iret", "sysenter", "bnd j", "notrack", "hlt", "ud2" };
	if (strstr(text, "(bad)") || text[0] == 'j')
		return 1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strncmp(text, words[i], strlen(words[i])))
			return 1;
	return 0;
}

static int moves_pc(const char *text)
{
	return strstr(text, "%rip") || transfers(text);
}

static unsigned long accepted, wrong, rip_accepted, branch_accepted;

/* objdump's "# 1fe9b8 <...>" after a RIP-relative operand: its address. */
static int rip_target(const char *text, unsigned long *target)
{
	const char *hash = strstr(text, "# ");

	return hash && sscanf(hash + 2, "%lx", target) == 1;
}

/* A branch the decoder says a copy can redo: objdump's length, the same
 * kind, objdump's target. */
static void check_branch(unsigned long addr, unsigned long len, const char *text, const unsigned char *code, size_t got)
{
	struct insn_branch b;
	unsigned long target = 0;
	const char *arg = text + strcspn(text, " ");
	int right;

	if (!insn_branch(code, got, &b))
		return;
	accepted++;
	branch_accepted++;
	while (*arg == ' ')
		arg++;
	switch (b.kind) {
	case INSN_RET:
		right = !strncmp(text, "ret", 3) || !strncmp(text, "repz ret", 8);
		break;
	case INSN_CALL:
		right = !strncmp(text, "call ", 5) && sscanf(arg, "%lx", &target) == 1;
		break;
	case INSN_JMP:
		right = !strncmp(text, "jmp ", 4) && sscanf(arg, "%lx", &target) == 1;
		break;
	case INSN_JMP_RIP:   /* "jmp *0x2fca(%rip)  # 4000 <puts@GLIBC_2.2.5>", "bnd jmp ..." */
		right = (!strncmp(text, "jmp ", 4) || !strncmp(text, "bnd jmp ", 8)) && strstr(text, "*") &&
			strstr(text, "(%rip)") && rip_target(text, &target) &&
			b.rip_disp + 4u == b.len && (int32_t)(code[b.rip_disp] | code[b.rip_disp + 1] << 8 |
				code[b.rip_disp + 2] << 16 | (uint32_t)code[b.rip_disp + 3] << 24) == b.rel;
		break;
	default:
		right = text[0] == 'j' && strncmp(text, "jmp", 3) && sscanf(arg, "%lx", &target) == 1;
	}
	if (b.kind != INSN_RET && target != addr + b.len + (unsigned long)(long)b.rel)
		right = 0;
	if (b.len != len || !right) {
		wrong++;
		printf("wrong branch: %lx objdump %lu mine %u kind %d: %s\n", addr, len, b.len, (int)b.kind, text);
	}
}

static void check(FILE *bin, long delta, unsigned long addr, unsigned long len, const char *text)
{
	unsigned char code[16] = { 0 };
	size_t got;
	unsigned mine, rip_disp, plain;
	unsigned long target;
	int32_t disp;

	if (fseek(bin, (long)addr - delta, SEEK_SET) != 0)
		return;
	got = fread(code, 1, sizeof(code), bin);
	plain = insn_relocatable_len(code, got);
	mine = insn_decode(code, got, &rip_disp);
	if (!mine) {
		check_branch(addr, len, text, code, got);
		return;
	}
	accepted++;
	if (!rip_disp) {
		if (mine != len || moves_pc(text) || plain != mine) {
			wrong++;
			printf("wrong: %lx objdump %lu mine %u: %s\n", addr, len, mine, text);
		}
		return;
	}
	/* RIP-relative: the displacement found where it is, counted from
	 * the end of the instruction, gives objdump's address */
	rip_accepted++;
	memcpy(&disp, code + rip_disp, 4);
	if (mine != len || plain || transfers(text) || !strstr(text, "(%rip)") || !rip_target(text, &target) ||
	    target != addr + len + (unsigned long)(long)disp) {
		wrong++;
		printf("wrong: %lx objdump %lu mine %u rip at %u: %s\n", addr, len, mine, rip_disp, text);
	}
}

/* stdin: objdump -d --no-show-raw-insn; an instruction's length is the
 * distance to the next one (blank lines end a run). */
int main(int argc, char **argv)
{
	FILE *bin = argc == 3 ? fopen(argv[1], "rb") : NULL;
	long delta = argc == 3 ? strtol(argv[2], NULL, 0) : 0;
	char line[512], prev_text[512] = "";
	unsigned long prev = 0;

	if (!bin)
		return 2;
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long addr;
		char *tab = strchr(line, '\t');
		line[strcspn(line, "\n")] = '\0';
		if (!tab || sscanf(line, " %lx:", &addr) != 1) {
			prev = 0;
			continue;
		}
		if (prev && addr > prev)
			check(bin, delta, prev, addr - prev, prev_text);
		prev = addr;
		snprintf(prev_text, sizeof(prev_text), "%s", tab + 1);
	}
	printf("accepted %lu wrong %lu\n", accepted, wrong);
	printf("rip-relative %lu\n", rip_accepted);
	printf("branches %lu\n", branch_accepted);
	return 0;
}
