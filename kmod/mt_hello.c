/*
 * mt_hello.c - a module that does nothing: the kernel tests load it to see
 * kernel_module_load and kernel_module_free carry its name.
 */
#include <linux/module.h>

static int __init mt_hello_init(void) { return 0; }
static void __exit mt_hello_exit(void) { }
module_init(mt_hello_init);
module_exit(mt_hello_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("marktap test module");
