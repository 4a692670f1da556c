#include "marktrace.h"
int mt_cmd_view(int argc, char **argv) { (void)argc; (void)argv; mt_error("view: not yet implemented"); return 1; }
