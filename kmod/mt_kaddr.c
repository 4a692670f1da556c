/*
 * mt_kaddr.c - kernel addresses and page frame numbers kept from those
 * who may not see them.
 *
 * Kernel addresses defeat KASLR, and page frame numbers tell physical
 * addresses (/proc/PID/pagemap hides them without CAP_SYS_ADMIN).  A
 * session or script whose opener and caller lack CAP_SYSLOG in the
 * initial namespace (what /proc/kallsyms asks) gets, in their place, the
 * upper 32 bits of a keyed hash (the key drawn at module load), the way
 * printk's %p shows pointers: equal values stay equal within a load, so
 * counts per lock, socket or page still work.  Hashed: %p and #p fields,
 * and fields named data or address (timers' and tasklets' data, a
 * fault's address), when they hold a kernel address (the high half);
 * NULL and user addresses pass: the device's group sees every process's
 * events anyway.  Fields named pfn: always.
 *
 * The policy only: the recorder's writer (mt_write.c) and the Lua host
 * (mt_lua_run.c) each decide, per session or script, whether to apply it.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/string.h>
#include "mt_kmod.h"
#include "mt_event.h"

static siphash_key_t mt_kaddr_key;

void mt_kaddr_init(void)
{
	get_random_bytes(&mt_kaddr_key, sizeof(mt_kaddr_key));
}

void mt_kaddr_fields(struct mt_kmarker *m)
{
	unsigned k;

	m->kaddr_mask = m->pfn_mask = 0;
	for (k = 0; k < m->fmt.nfields; k++) {
		const struct mt_field *f = &m->fmt.fields[k];

		if (f->store != MT_ST_INT || f->size != 8)
			continue;
		if (f->is_pointer || !strcmp(f->name, "data") || !strcmp(f->name, "address"))
			m->kaddr_mask |= 1u << k;
		else if (!strcmp(f->name, "pfn"))
			m->pfn_mask |= 1u << k;
	}
}

bool mt_may_see_kaddr(struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_SYSLOG) &&
	       ns_capable_noaudit(&init_user_ns, CAP_SYSLOG);
}

void mt_hide_kaddr(const struct mt_kmarker *m, struct mt_args *a)
{
	unsigned k;

	for (k = 0; k < m->fmt.nfields; k++) {
		u64 v = a->v[k].u;

		if (((m->kaddr_mask >> k) & 1 && (s64)v < 0) || ((m->pfn_mask >> k) & 1 && v))
			a->v[k].u = siphash_1u64(v, &mt_kaddr_key) >> 32;
	}
}
