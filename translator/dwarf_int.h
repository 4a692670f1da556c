/*
 * dwarf_int.h - between the DWARF readers (dwarf.c, dwarf_plt.c,
 * dwarf_var.c): the open ELF files and the functions found in them.
 */
#ifndef DWARF_INT_H
#define DWARF_INT_H

#include "tr_points.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

/* One ELF file, with its DWARF when it has some. */
struct dwmod {
	const char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;                      /* NULL: no debuginfo */
	Dwarf_Addr bias;                /* DWARF address + bias = dwfl address */
};

struct tr_dwfunc {
	const char *name, *pp_name;    /* "add", "add@/src/t.c:3" */
	uint64_t lowpc, entry;          /* file addresses: first instruction, after prologue */
	Dwarf_Die die;                  /* the subprogram, or an inlined instance */
	Dwarf_Die fb;                   /* the subprogram with the frame base */
	bool has_die, inlined;
	struct dwmod *m;
};

/* The module of path, opened once: NULL with *errmsg if it cannot be
 * (dwarf.c). */
struct dwmod *tr_dw_open(const char *path, char **errmsg);

/* A struct, class or union: members to read. */
static inline bool is_record(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

/* A function's or variable's name, also through DW_AT_abstract_origin
 * (out-of-line copies and inlined instances carry their origin's). */
static inline const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

#endif
