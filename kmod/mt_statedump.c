/*
 * mt_statedump.c - the state when recording starts: every thread and its
 * name, and the active swap files (the seed's ltt_dump_swap_files), so a
 * trace reader knows what existed before the first event.
 *
 *   statedump_process_state "pid %d parent_pid %d tgid %d name %s"
 *   statedump_swap_files    "filp %p vfsmount %p dname %s"   (catalogue)
 *   statedump_end           MARK_NOARGS
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/swap.h>
#include "mt_kmod.h"

static struct swap_info_struct **mt_swap_info;
static unsigned int *mt_nr_swapfiles;
static struct mutex *mt_swapon_mutex;

static void find_swap_symbols(void)
{
	if (!mt_swap_info) {
		mt_nr_swapfiles = (unsigned int *)mt_ksym("nr_swapfiles");
		mt_swapon_mutex = (struct mutex *)mt_ksym("swapon_mutex");
		mt_swap_info = (struct swap_info_struct **)mt_ksym("swap_info");
	}
}

/*
 * The struct file of an active swap area, 0 if none.  Lock-free read:
 * swap_info[] entries are never freed once allocated (swapoff keeps the
 * struct for reuse), so the worst a race gives is a stale pointer value,
 * which we only record.
 */
unsigned long mt_swap_file_of_type(unsigned type)
{
	struct swap_info_struct *p;

	if (!mt_swap_info || !mt_nr_swapfiles || type >= MAX_SWAPFILES ||
	    type >= READ_ONCE(*mt_nr_swapfiles))
		return 0;
	p = READ_ONCE(mt_swap_info[type]);
	if (!p || !(READ_ONCE(p->flags) & SWP_WRITEOK))
		return 0;
	return (unsigned long)READ_ONCE(p->swap_file);
}

static void dump_swap_files(struct mt_rec *r)
{
	unsigned type;

	if (!mt_swap_info || !mt_swapon_mutex)
		return;
	/* swapon_mutex: swapon/swapoff cannot change the files meanwhile */
	mutex_lock(mt_swapon_mutex);
	for (type = 0; type < MAX_SWAPFILES; type++) {
		struct file *f = (struct file *)mt_swap_file_of_type(type);

		if (f)
			mt_kmarker_fire_to(r, &mt_m_statedump_swap_files, f, f->f_path.mnt,
					   f->f_path.dentry->d_name.name);
	}
	mutex_unlock(mt_swapon_mutex);
}

static void dump_processes(struct mt_rec *r)
{
	struct task_struct *g, *t;

	rcu_read_lock();
	for_each_process_thread(g, t) {
		char comm[TASK_COMM_LEN];

		__get_task_comm(comm, sizeof(comm), t);
		mt_kmarker_fire_to(r, &mt_m_statedump_process_state, t->pid,
				   task_pid_nr(rcu_dereference(t->real_parent)), t->tgid, comm);
	}
	rcu_read_unlock();
}

/* The state dump goes to r alone: other recordings and scripts that
 * armed these markers did not ask for another one. */
void mt_statedump(struct mt_rec *r)
{
	dump_processes(r);
	dump_swap_files(r);
	mt_kmarker_fire_to(r, &mt_m_statedump_end);
}

int mt_statedump_init(void)
{
	find_swap_symbols();
	if (!mt_swap_info || !mt_nr_swapfiles || !mt_swapon_mutex)
		mt_m_statedump_swap_files.unavailable =
			"swap_info, nr_swapfiles or swapon_mutex not found (kallsyms)";
	return 0;
}

/* Fired by mt_statedump() itself, not by a hook: armed with the session. */
MT_KMARKER(statedump_swap_files, "state dump at start (swap_info[], swapon_mutex)");
MT_KMARKER(statedump_process_state, "state dump at start (every thread)");
MT_KMARKER(statedump_end, "state dump at start (end)");
