/*
 * dwarf_plt.c - process("P").plt("NAME"): the entries of a program's
 * procedure linkage table, from its ELF sections (libelf through the
 * module dwarf.c opened).  elab_point.c makes each entry a function
 * probe whose only variable is $$name.
 */
#include <fnmatch.h>
#include <gelf.h>
#include <string.h>
#include "dwarf_int.h"

/* ---- PLT entries ----------------------------------------------------------- */

/*
 * process("P").plt("NAME"): the entries of P's procedure linkage table.
 * Each entry's "jmp *GOT(%rip)" names the GOT slot it jumps through, and
 * .rela.plt names the symbol the dynamic linker puts in that slot, so
 * an entry is matched to its function by its slot, whatever the layout:
 *
 *	.plt (lazy binding, -z now alike)   .plt.sec (-fcf-protection, IBT)
 *	  PLT0: push GOT+8; jmp *GOT+16       .plt:     endbr64; push N; jmp PLT0
 *	  N:    jmp *slot(%rip)                .plt.sec: endbr64; [bnd] jmp *slot(%rip)
 *	        push N; jmp PLT0
 *
 * With .plt.sec, calls go there and the .plt stubs run at most once (the
 * first call's lazy binding; never with -z now): the probe is on the
 * .plt.sec entry.  It sits on the jmp itself (after endbr64, a no-op),
 * an instruction a jump to a stub can replace.  Entries through .plt.got
 * (GOT slots resolved at load, no .rela.plt entry) are left out, as stap
 * leaves them.  x86-64 only.
 */
static Elf_Scn *section_named(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *sh)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		const char *n;
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The name of the function whose GOT slot is at `slot`, from .rela.plt
 * ("" for a slot without a symbol: an IRELATIVE ifunc, as stap names
 * it), or NULL when no relocation fills that slot. */
static const char *plt_slot_name(Elf *elf, Elf_Scn *rela, const GElf_Shdr *rsh, uint64_t slot)
{
	Elf_Data *d = elf_getdata(rela, NULL);
	Elf_Scn *symscn = elf_getscn(elf, rsh->sh_link);
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr ssh;
	size_t n = rsh->sh_entsize ? rsh->sh_size / rsh->sh_entsize : 0;

	if (!d || !syms || !gelf_getshdr(symscn, &ssh))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		if (!gelf_getrela(d, (int)i, &r) || r.r_offset != slot)
			continue;
		if (!GELF_R_SYM(r.r_info) || !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
			return "";
		name = elf_strptr(elf, ssh.sh_link, sym.st_name);
		return name ? name : "";
	}
	return NULL;
}

/* The "jmp *disp32(%rip)" in the entry at code[0..len) (after endbr64
 * and a bnd prefix): its offset, its GOT slot in *slot; -1 if none. */
static int plt_jump(const unsigned char *code, size_t len, uint64_t at, uint64_t *slot)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t k = 0, j;
	int32_t disp;

	if (len >= 4 && !memcmp(code, endbr64, 4))
		k = 4;
	j = k + (k < len && code[k] == 0xf2);   /* bnd jmp (MPX's PLT) */
	if (j + 6 > len || code[j] != 0xff || code[j + 1] != 0x25)
		return -1;
	memcpy(&disp, code + j + 2, 4);
	*slot = at + j + 6 + (uint64_t)(int64_t)disp;
	return (int)k;
}

int tr_dw_plt(const char *path, const char *glob, struct tr_vec *out, char **errmsg)
{
	struct dwmod *m = tr_dw_open(path, errmsg);
	GElf_Addr bias;
	Elf *elf = m ? dwfl_module_getelf(m->mod, &bias) : NULL;
	GElf_Shdr psh, rsh;
	Elf_Scn *plt, *rela;
	Elf_Data *d;
	size_t shstrndx, step;

	if (!m)
		return -1;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    !(rela = section_named(elf, shstrndx, ".rela.plt", &rsh)))
		return 0;   /* no PLT (static, -fno-plt): nothing matches */
	plt = section_named(elf, shstrndx, ".plt.sec", &psh);
	if (!plt)
		plt = section_named(elf, shstrndx, ".plt", &psh);
	if (!plt || psh.sh_type != SHT_PROGBITS || !(d = elf_getdata(plt, NULL)) || d->d_size < psh.sh_size)
		return 0;
	step = psh.sh_entsize >= 8 && psh.sh_entsize <= 32 ? psh.sh_entsize : 16;
	for (size_t off = 0; off + step <= psh.sh_size; off += step) {
		const unsigned char *code = (const unsigned char *)d->d_buf + off;
		uint64_t slot;
		int k = plt_jump(code, step, psh.sh_addr + off, &slot);
		const char *name = k < 0 ? NULL : plt_slot_name(elf, rela, &rsh, slot);
		if (!name || fnmatch(glob, name, 0) != 0)
			continue;   /* PLT0, a lazy stub, a slot of no function */
		struct tr_pltent *e = tr_alloc(sizeof(*e));
		e->name = tr_strdup(name);
		e->addr = psh.sh_addr + off + (uint64_t)k;
		tr_vec_push(out, e);
	}
	return (int)out->n;
}

/* The first names of path's PLT, for a "no match" message. */
const char *tr_dw_plt_similar(const char *path)
{
	struct tr_vec all = {0};
	struct tr_buf b = {0};
	char *err = NULL;

	if (tr_dw_plt(path, "*", &all, &err) <= 0)
		return NULL;
	for (unsigned i = 0, k = 0; i < all.n && k < 5; i++) {
		const char *n = ((struct tr_pltent *)all.items[i])->name;
		if (*n)
			tr_buf_printf(&b, "%s%s", k++ ? ", " : "", n);
	}
	return b.len ? tr_buf_str(&b) : NULL;
}
