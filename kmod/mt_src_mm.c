/*
 * mt_src_mm.c - the seed's mm/ markers (006 patch) and fs/buffer.c's
 * buffer waits (003), on 6.1.
 *
 * Page allocation and freeing have tracepoints (kmem:*); the waits, the
 * fault handler, swap I/O and huge pages are kprobes on the functions that
 * took the seed's code.  Swap files are named by struct file pointers
 * that only swap_info[] holds; see mt_statedump.c for how we read it.
 */
#include <linux/kernel.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include "mt_kmod.h"

/* ---- page waits and buffer waits ----------------------------------- */

struct mt_wait_data {
	unsigned long pfn;
	int bit_nr;
};

static int entry_folio_wait(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mt_wait_data *d = (struct mt_wait_data *)ri->data;

	d->pfn = folio_pfn((struct folio *)regs->di);
	d->bit_nr = (int)regs->si;
	mt_kmarker_fire(&mt_m_mm_filemap_wait_start, d->pfn, d->bit_nr);
	return 0;
}

static int ret_folio_wait(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mt_wait_data *d = (struct mt_wait_data *)ri->data;

	mt_kmarker_fire(&mt_m_mm_filemap_wait_end, d->pfn, d->bit_nr);
	return 0;
}

static int entry_buffer_wait(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned long *)ri->data = regs->di;
	mt_kmarker_fire(&mt_m_fs_buffer_wait_start, (void *)regs->di);
	return 0;
}

static int ret_buffer_wait(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_fs_buffer_wait_end, (void *)*(unsigned long *)ri->data);
	return 0;
}

/* wait_on_page_bit became folio_wait_bit; the killable variant is separate */
static MT_KRETPROBE_HOOK(h_folio_wait_bit, "folio_wait_bit", entry_folio_wait, ret_folio_wait,
			 sizeof(struct mt_wait_data), NULL);
static MT_KRETPROBE_HOOK(h_folio_wait_bit_killable, "folio_wait_bit_killable", entry_folio_wait,
			 ret_folio_wait, sizeof(struct mt_wait_data), NULL);
static MT_KRETPROBE_HOOK(h_wait_on_buffer, "__wait_on_buffer", entry_buffer_wait, ret_buffer_wait,
			 sizeof(unsigned long), NULL);
MT_KMARKER(mm_filemap_wait_start, "kretprobe folio_wait_bit, folio_wait_bit_killable (entry)",
	   &h_folio_wait_bit, &h_folio_wait_bit_killable);
MT_KMARKER(mm_filemap_wait_end, "kretprobe folio_wait_bit, folio_wait_bit_killable (return)",
	   &h_folio_wait_bit, &h_folio_wait_bit_killable);
MT_KMARKER(fs_buffer_wait_start, "kretprobe __wait_on_buffer (entry)", &h_wait_on_buffer);
MT_KMARKER(fs_buffer_wait_end, "kretprobe __wait_on_buffer (return)", &h_wait_on_buffer);

/* ---- faults ---------------------------------------------------------- */

/* handle_mm_fault(vma, address, flags, regs) */
static int entry_fault(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct pt_regs *fault_regs = (struct pt_regs *)regs->cx;

	mt_kmarker_fire(&mt_m_mm_handle_fault_entry, regs->si,
			fault_regs ? (long)instruction_pointer(fault_regs) : 0L,
			!!(regs->dx & FAULT_FLAG_WRITE));
	return 0;
}

static int ret_fault(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_mm_handle_fault_exit);
	return 0;
}

static MT_KRETPROBE_HOOK(h_handle_mm_fault, "handle_mm_fault", entry_fault, ret_fault, 0, NULL);
MT_KMARKER(mm_handle_fault_entry, "kretprobe handle_mm_fault (entry)", &h_handle_mm_fault);
MT_KMARKER(mm_handle_fault_exit, "kretprobe handle_mm_fault (return)", &h_handle_mm_fault);

/* ---- pages ----------------------------------------------------------- */

static void probe_page_free(void *data, struct page *page, unsigned int order)
{
	mt_kmarker_fire(&mt_m_mm_page_free, order, page_to_pfn(page));
}

static void probe_page_free_batched(void *data, struct page *page)
{
	mt_kmarker_fire(&mt_m_mm_page_free, 0u, page_to_pfn(page));
}

static void probe_page_alloc(void *data, struct page *page, unsigned int order,
			     gfp_t gfp_flags, int migratetype)
{
	if (page)
		mt_kmarker_fire(&mt_m_mm_page_alloc, order, page_to_pfn(page));
}

static int pre_free_huge_page(struct kprobe *p, struct pt_regs *regs)
{
	mt_kmarker_fire(&mt_m_mm_huge_page_free, page_to_pfn((struct page *)regs->di));
	return 0;
}

static int ret_alloc_huge_page(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct page *page = (struct page *)regs_return_value(regs);

	if (!IS_ERR_OR_NULL(page))
		mt_kmarker_fire(&mt_m_mm_huge_page_alloc, page_to_pfn(page));
	return 0;
}

static MT_TP_HOOK(h_page_free, "mm_page_free", probe_page_free, NULL);
static MT_TP_HOOK(h_page_free_batched, "mm_page_free_batched", probe_page_free_batched, NULL);
static MT_TP_HOOK(h_page_alloc, "mm_page_alloc", probe_page_alloc, NULL);
static MT_KPROBE_HOOK(h_free_huge_page, "free_huge_page", pre_free_huge_page, NULL);
static MT_KRETPROBE_HOOK(h_alloc_huge_page, "alloc_huge_page", NULL, ret_alloc_huge_page, 0, NULL);
MT_KMARKER(mm_page_free, "tracepoint kmem:mm_page_free, kmem:mm_page_free_batched",
	   &h_page_free, &h_page_free_batched);
MT_KMARKER(mm_page_alloc, "tracepoint kmem:mm_page_alloc", &h_page_alloc);
MT_KMARKER(mm_huge_page_free, "kprobe free_huge_page", &h_free_huge_page);
MT_KMARKER(mm_huge_page_alloc, "kretprobe alloc_huge_page", &h_alloc_huge_page);

/* ---- swap ------------------------------------------------------------ */

static void fire_swap(struct mt_kmarker *m, struct page *page)
{
	swp_entry_t entry;

	if (!PageSwapCache(page))
		return;
	entry.val = page_private(page);
	mt_kmarker_fire(m, page_to_pfn(page), (void *)mt_swap_file_of_type(swp_type(entry)),
			swp_offset(entry));
}

static int pre_swap_readpage(struct kprobe *p, struct pt_regs *regs)
{
	fire_swap(&mt_m_mm_swap_in, (struct page *)regs->di);
	return 0;
}

static int pre_swap_writepage(struct kprobe *p, struct pt_regs *regs)
{
	fire_swap(&mt_m_mm_swap_out, (struct page *)regs->di);
	return 0;
}

/*
 * swapon/swapoff: which swap file appeared or went away is the difference
 * between swap_info[] before and after a successful call.
 */
struct mt_swap_snapshot {
	unsigned long file[MAX_SWAPFILES];
	unsigned long user_path;
};

static void snapshot(struct mt_swap_snapshot *s)
{
	unsigned type;

	for (type = 0; type < MAX_SWAPFILES; type++)
		s->file[type] = mt_swap_file_of_type(type);
}

static int entry_swapon(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mt_swap_snapshot *s = (struct mt_swap_snapshot *)ri->data;

	snapshot(s);
	/* __x64_sys_swapon(regs): the user's registers hold the arguments */
	s->user_path = ((struct pt_regs *)regs->di)->di;
	return 0;
}

static int ret_swapon(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mt_swap_snapshot *s = (struct mt_swap_snapshot *)ri->data;
	unsigned type;
	char name[256];

	if (regs_return_value(regs) != 0)
		return 0;
	for (type = 0; type < MAX_SWAPFILES; type++) {
		unsigned long file = mt_swap_file_of_type(type);

		if (file && file != s->file[type])
			mt_kmarker_fire(&mt_m_mm_swap_file_open, (void *)file,
					mt_user_string((const char __user *)s->user_path,
						       name, sizeof(name)));
	}
	return 0;
}

static int entry_swapoff(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	snapshot((struct mt_swap_snapshot *)ri->data);
	return 0;
}

static int ret_swapoff(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mt_swap_snapshot *s = (struct mt_swap_snapshot *)ri->data;
	unsigned type;

	if (regs_return_value(regs) != 0)
		return 0;
	for (type = 0; type < MAX_SWAPFILES; type++)
		if (s->file[type] && mt_swap_file_of_type(type) != s->file[type])
			mt_kmarker_fire(&mt_m_mm_swap_file_close, (void *)s->file[type]);
	return 0;
}

static MT_KPROBE_HOOK(h_swap_readpage, "swap_readpage", pre_swap_readpage, NULL);
static MT_KPROBE_HOOK(h_swap_writepage, "swap_writepage", pre_swap_writepage, NULL);
static MT_KRETPROBE_HOOK(h_swapon, "__x64_sys_swapon", entry_swapon, ret_swapon,
			 sizeof(struct mt_swap_snapshot), NULL);
static MT_KRETPROBE_HOOK(h_swapoff, "__x64_sys_swapoff", entry_swapoff, ret_swapoff,
			 sizeof(struct mt_swap_snapshot), NULL);
MT_KMARKER(mm_swap_in, "kprobe swap_readpage", &h_swap_readpage);
MT_KMARKER(mm_swap_out, "kprobe swap_writepage", &h_swap_writepage);
MT_KMARKER(mm_swap_file_open, "kretprobe __x64_sys_swapon (success)", &h_swapon);
MT_KMARKER(mm_swap_file_close, "kretprobe __x64_sys_swapoff (success)", &h_swapoff);
