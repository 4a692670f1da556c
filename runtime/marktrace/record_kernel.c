/*
 * record_kernel.c - marktrace record --kernel (the session lives in marktap.ko).
 */
#include "marktrace.h"
#include "record.h"

int mt_record_kernel(struct mt_record_opts *o, const char *dir)
{
	(void)o;
	(void)dir;
	mt_error("record: --kernel: not available yet in this build");
	return 1;
}

int mt_list_kernel(void)
{
	mt_error("list: --kernel: not available yet in this build");
	return 1;
}
