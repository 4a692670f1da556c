/* ust_tp.c - the probe provider of bench/ust (LTTng-UST). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "ust_tp.h"
