/* LTTng-UST tracepoints with a field of every kind (tests/runtime/lttng-read.t). */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER mtlt

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./mtlt_tp.h"

#if !defined(MTLT_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define MTLT_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

TRACEPOINT_ENUM(mtlt, color,
	TP_ENUM_VALUES(
		ctf_enum_value("RED", 0)
		ctf_enum_value("GREEN", 1)
		ctf_enum_range("MANY", 10, 20)
	)
)

TRACEPOINT_EVENT(mtlt, ints,
	TP_ARGS(int, i),
	TP_FIELDS(
		ctf_integer(int8_t, s8, -i)
		ctf_integer(uint8_t, u8, i * 3)
		ctf_integer(int16_t, s16, -1000 * i)
		ctf_integer(uint16_t, u16, 60000 + i)
		ctf_integer(int32_t, s32, -100000 * i)
		ctf_integer(uint32_t, u32, 4000000000u + (uint32_t)i)
		ctf_integer(int64_t, s64, -5000000000LL * i)
		ctf_integer(uint64_t, u64, 18000000000000000000ULL + (uint64_t)i)
		ctf_integer_hex(uint32_t, h32, 0xdeadbe00u + (uint32_t)i)
		ctf_integer_hex(uint64_t, h64, 0x0123456789abcdefULL + (uint64_t)i)
		ctf_integer_network(uint32_t, n32, 0x01020304u + (uint32_t)i)
		ctf_integer_network_hex(uint16_t, nh16, 0xabcd)
	)
)

TRACEPOINT_EVENT(mtlt, texts,
	TP_ARGS(int, i, const char *, s, const int *, a, size_t, n, const char *, t),
	TP_FIELDS(
		ctf_string(str, s)
		ctf_array(int, arr, a, 3)
		ctf_sequence(int, seq, a, size_t, n)
		ctf_array_text(char, atext, t, 4)
		ctf_sequence_text(char, stext, t, size_t, n)
		ctf_enum(mtlt, color, int, col, i)
		ctf_float(double, dbl, i * 1.5)
		ctf_float(float, flt, i * 0.25f)
		ctf_integer(int, last, i)
	)
)

TRACEPOINT_EVENT(mtlt, empty,
	TP_ARGS(void),
	TP_FIELDS()
)

#endif

#include <lttng/tracepoint-event.h>
