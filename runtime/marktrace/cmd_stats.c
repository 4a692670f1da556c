#include "marktrace.h"
int mt_cmd_stats(int argc, char **argv) { (void)argc; (void)argv; mt_error("stats: not yet implemented"); return 1; }
