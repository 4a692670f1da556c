/*
 * mt_ksym.c - addresses of the few unexported kernel symbols we read
 * (swap_info, nr_swapfiles, swapon_mutex, irq_regs).
 *
 * kallsyms_lookup_name is not exported since 5.7, but kprobes resolve
 * symbol names with it: a kprobe placed on kallsyms_lookup_name itself
 * tells us where it is.  Everything that uses an address found here
 * works without it (the value is then reported as 0 or the feature
 * as unavailable).
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include "mt_kmod.h"

static unsigned long (*mt_lookup)(const char *name);

unsigned long mt_ksym(const char *name)
{
	if (!mt_lookup) {
		struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };

		if (register_kprobe(&kp))
			return 0;
		mt_lookup = (unsigned long (*)(const char *))kp.addr;
		unregister_kprobe(&kp);
	}
	return mt_lookup ? mt_lookup(name) : 0;
}
