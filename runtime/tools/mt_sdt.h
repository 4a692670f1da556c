/*
 * mt_sdt.h - SystemTap SDT probes (<sys/sdt.h>) of an ELF file: the
 * ".note.stapsdt" notes and their argument operands.
 *
 * Used by marktap (probe points, listings) and by the script host, which
 * runs handlers at the probes of programs that do not use libmarktap
 * (runtime/script/sdt.c).  Plain C on the file's bytes: no libelf, so the
 * host loaded into a traced program needs nothing more.
 */
#ifndef MT_SDT_H
#define MT_SDT_H

#include <stddef.h>
#include <stdint.h>

#define MT_SDT_MAXARGS 12

struct mt_sdt_probe {
	char *provider, *name, *args;   /* args: "-4@%edi 8@-16(%rbp)" */
	uint64_t pc;                    /* link-time address, base applied */
	uint64_t semaphore;             /* link-time address, or 0 */
	int nargs;
};

/* The probes of the file at path, in note order: 0 and *out (free with
 * mt_sdt_free), or -1 with err set.  A file without probes gives 0, n 0. */
int mt_sdt_read(const char *path, struct mt_sdt_probe **out, size_t *n, char *err, size_t errlen);
void mt_sdt_free(struct mt_sdt_probe *p, size_t n);

/* One operand, "-4@-20(%rbp)": where the value is and its size. */
enum { MT_SDT_REG, MT_SDT_IMM, MT_SDT_MEM };

struct mt_sdt_arg {
	int kind;
	int size;                       /* 1, 2, 4 or 8 bytes */
	int is_signed;
	int base, index;                /* x86-64 register numbers (below); -1 none */
	int scale;
	int64_t disp;                   /* displacement, or the immediate */
	int link_addr;                  /* MEM at disp, a link-time address (a
					 * symbol's): add the object's load bias */
};

/* x86-64 registers, in the order of the DWARF numbering. */
enum {
	MT_R_RAX, MT_R_RDX, MT_R_RCX, MT_R_RBX, MT_R_RSI, MT_R_RDI, MT_R_RBP, MT_R_RSP,
	MT_R_R8, MT_R_R9, MT_R_R10, MT_R_R11, MT_R_R12, MT_R_R13, MT_R_R14, MT_R_R15,
	MT_R_RIP, MT_R_COUNT,
};

/* The operands of args: their number (<= max), or -1 with err set for an
 * operand this reader does not decode (another architecture, a symbol the
 * file's symbol table does not have).  mt_sdt_read rewrites operands that
 * name a symbol, "-8@16+arr(%rip)", as "-8@=0xADDR" (the link-time
 * address). */
int mt_sdt_parse_args(const char *args, struct mt_sdt_arg *a, int max, char *err, size_t errlen);

#endif
