/*
 * <marktap/marker.h> - static markers for user programs.
 *
 *   trace_mark(fs_open, "fd %d filename %s", fd, name);
 *   trace_mark(heartbeat, MARK_NOARGS);
 *
 * Each trace_mark() site places, at compile time:
 *   - a descriptor (struct mt_marker) in the "__markers" section, which
 *     libmarktap finds through a constructor of the object that holds it
 *     (executable, shared library, dlopen'ed library) -- no call needed;
 *   - a ".note.stapsdt" SDT note (provider "marktap"), so SystemTap,
 *     bpftrace and perf can probe the site; its semaphore is the
 *     "enabled" count of the marker's gate in ".probes";
 *   - a ".note.marktap" note with the marker's name and format, read by
 *     "marktrace list" and "marktap -L" from the file alone.
 *
 * A disarmed marker costs one load and a not-taken branch.  Defined before
 * this header is included, MARKTAP_PATCHED_SITES makes the sites of the
 * translation unit patched ones instead (x86-64; elsewhere it is ignored):
 * a 5-byte instruction without effect that libmarktap turns into a jump
 * to the marker's code while the marker is armed or its SDT semaphore
 * raised, then back (one byte rewritten); a
 * disarmed marker then costs nothing measurable (bench/README.md).  Their
 * cost: an outside tool (SystemTap, bpftrace, perf) that raises the
 * semaphore of a process already running reaches the site after
 * libmarktap's next look at the semaphores, within MARKTAP_SITE_POLL_MS
 * (100 ms by default, 0: never; a process started under the tool sees
 * it at once); code pages of a patched marker become the process's own
 * copies; a thread of libmarktap wakes at that period.  marktrace(1),
 * "PATCHED SITES".
 *
 * The format is checked against the arguments by the compiler (printf
 * rules; LTTng type prefixes such as "#p" or "#8u" are plain text to it),
 * and parsed again by libmarktap when the object is loaded: a malformed
 * format is reported with the marker's name and the marker can not be
 * armed.
 */
#ifndef MARKTAP_MARKER_H
#define MARKTAP_MARKER_H

#ifdef __cplusplus
extern "C" {
#endif

/* The format of a marker without arguments, as in the kernel patches. */
#define MARK_NOARGS " "

/*
 * A marker's gate, in section ".probes" where SDT semaphores live (bcc and
 * bpftrace find a semaphore only there):
 *
 *   0  u16 enabled   nonzero: take the slow path (armed count + SDT users);
 *                    the SDT semaphore of the site's .note.stapsdt note
 *   2  u16 armed     bits of MT_ARMED_*: who in libmarktap wants the hit
 */
struct mt_marker_gate {
	unsigned short enabled;
	unsigned short armed;
};

/*
 * Marker descriptor, 32 bytes, an array in section "__markers":
 *
 *   0  gate          the gate above
 *   8  name          marker name
 *  16  format        format string
 *  24  rt            libmarktap's per-marker state (parsed format, id)
 */
struct mt_marker {
	struct mt_marker_gate *gate;
	const char *name;
	const char *format;
	void *rt;
} __attribute__((aligned(32)));

#define MT_ARMED_RECORD 0x1   /* the recorder (marktrace record) */
#define MT_ARMED_SCRIPT 0x2   /* a probe script (marktap)         */

/*
 * A patched site (MARKTAP_PATCHED_SITES), 24 bytes, an array in section
 * "__mt_sites": the 5-byte instruction at `site` ("test $rel32, %eax" off,
 * "jmp rel32" on); `target`, where the jump goes; the marker.
 */
struct mt_marker_site {
	unsigned long site;
	unsigned long target;
	struct mt_marker *marker;
};

void __mt_marker_fire(struct mt_marker *marker, ...);
void __mt_markers_register(struct mt_marker *begin, struct mt_marker *end);
void __mt_markers_unregister(struct mt_marker *begin, struct mt_marker *end);
void __mt_sites_register(struct mt_marker_site *begin, struct mt_marker_site *end);
void __mt_sites_unregister(struct mt_marker_site *begin, struct mt_marker_site *end);

static inline void __attribute__((format(printf, 1, 2), always_inline))
__mt_check_format(const char *fmt, ...)
{
	(void)fmt;
}

/* ---- SDT note ----------------------------------------------------- */

/* Size and signedness of an argument as SDT wants them ("-4", "8"). */
#define _MT_SDT_SIGNED(x) \
	((__typeof__((x) + 0))-1L < (__typeof__((x) + 0))1L)
#define _MT_SDT_SIZE(x) \
	(_MT_SDT_SIGNED(x) ? -(int)sizeof(__typeof__((x) + 0)) : (int)sizeof(__typeof__((x) + 0)))

#define _MT_SDT_OP(n, x) [_mt_s##n] "n"(_MT_SDT_SIZE(x)), [_mt_a##n] "nor"((x) + 0)
#define _MT_SDT_ARG(n) "%c[_mt_s" #n "]@%[_mt_a" #n "]"

#define _MT_SDT_F0  ""
#define _MT_SDT_F1  _MT_SDT_ARG(1)
#define _MT_SDT_F2  _MT_SDT_F1 " " _MT_SDT_ARG(2)
#define _MT_SDT_F3  _MT_SDT_F2 " " _MT_SDT_ARG(3)
#define _MT_SDT_F4  _MT_SDT_F3 " " _MT_SDT_ARG(4)
#define _MT_SDT_F5  _MT_SDT_F4 " " _MT_SDT_ARG(5)
#define _MT_SDT_F6  _MT_SDT_F5 " " _MT_SDT_ARG(6)
#define _MT_SDT_F7  _MT_SDT_F6 " " _MT_SDT_ARG(7)
#define _MT_SDT_F8  _MT_SDT_F7 " " _MT_SDT_ARG(8)
#define _MT_SDT_F9  _MT_SDT_F8 " " _MT_SDT_ARG(9)
#define _MT_SDT_F10 _MT_SDT_F9 " " _MT_SDT_ARG(10)
#define _MT_SDT_F11 _MT_SDT_F10 " " _MT_SDT_ARG(11)
#define _MT_SDT_F12 _MT_SDT_F11 " " _MT_SDT_ARG(12)

#define _MT_SDT_O0()
#define _MT_SDT_O1(a) , _MT_SDT_OP(1, a)
#define _MT_SDT_O2(a, b) _MT_SDT_O1(a), _MT_SDT_OP(2, b)
#define _MT_SDT_O3(a, b, c) _MT_SDT_O2(a, b), _MT_SDT_OP(3, c)
#define _MT_SDT_O4(a, b, c, d) _MT_SDT_O3(a, b, c), _MT_SDT_OP(4, d)
#define _MT_SDT_O5(a, b, c, d, e) _MT_SDT_O4(a, b, c, d), _MT_SDT_OP(5, e)
#define _MT_SDT_O6(a, b, c, d, e, f) _MT_SDT_O5(a, b, c, d, e), _MT_SDT_OP(6, f)
#define _MT_SDT_O7(a, b, c, d, e, f, g) _MT_SDT_O6(a, b, c, d, e, f), _MT_SDT_OP(7, g)
#define _MT_SDT_O8(a, b, c, d, e, f, g, h) \
	_MT_SDT_O7(a, b, c, d, e, f, g), _MT_SDT_OP(8, h)
#define _MT_SDT_O9(a, b, c, d, e, f, g, h, i) \
	_MT_SDT_O8(a, b, c, d, e, f, g, h), _MT_SDT_OP(9, i)
#define _MT_SDT_O10(a, b, c, d, e, f, g, h, i, j) \
	_MT_SDT_O9(a, b, c, d, e, f, g, h, i), _MT_SDT_OP(10, j)
#define _MT_SDT_O11(a, b, c, d, e, f, g, h, i, j, k) \
	_MT_SDT_O10(a, b, c, d, e, f, g, h, i, j), _MT_SDT_OP(11, k)
#define _MT_SDT_O12(a, b, c, d, e, f, g, h, i, j, k, l) \
	_MT_SDT_O11(a, b, c, d, e, f, g, h, i, j, k), _MT_SDT_OP(12, l)

/* The arguments counted, 0 to 12; X for 13 to 24, which _MT_ARGS_OK
 * refuses with a message of its own (an SDT note describes at most 12). */
#define _MT_PICK(z, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, \
		 a16, a17, a18, a19, a20, a21, a22, a23, a24, n, ...) n
#define _MT_NARG(...) _MT_PICK(0, ##__VA_ARGS__, X, X, X, X, X, X, X, X, X, X, X, X, \
			       12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define _MT_ARGS_OK(...) _MT_PICK(0, ##__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
				  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
#define _MT_SDT_FX ""
#define _MT_SDT_OX(...)
#ifdef __cplusplus
#define _MT_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define _MT_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#define _MT_CAT(a, b) _MT_CAT_(a, b)
#define _MT_CAT_(a, b) a##b

#define _MT_SDT(name, marker, ...)                                              \
	__asm__ __volatile__(                                                   \
		"990: nop\n"                                                    \
		".pushsection .note.stapsdt,\"?\",\"note\"\n"                   \
		".balign 4\n"                                                   \
		".4byte 992f-991f, 994f-993f, 3\n"                              \
		"991: .asciz \"stapsdt\"\n"                                     \
		"992: .balign 4\n"                                              \
		"993: .8byte 990b\n"                                            \
		".8byte _.stapsdt.base\n"                                       \
		".8byte %c[_mt_sem]\n"                                          \
		".asciz \"marktap\"\n"                                          \
		".asciz \"" #name "\"\n"                                        \
		".asciz \"" _MT_CAT(_MT_SDT_F, _MT_NARG(__VA_ARGS__)) "\"\n"    \
		"994: .balign 4\n"                                              \
		".popsection\n"                                                 \
		".ifndef _.stapsdt.base\n"                                      \
		".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
		".weak _.stapsdt.base\n"                                        \
		".hidden _.stapsdt.base\n"                                      \
		"_.stapsdt.base: .space 1\n"                                    \
		".size _.stapsdt.base, 1\n"                                     \
		".popsection\n"                                                 \
		".endif\n"                                                      \
		: : [_mt_sem] "i"(&(marker).enabled)                            \
		  _MT_CAT(_MT_SDT_O, _MT_NARG(__VA_ARGS__))(__VA_ARGS__))

/* The name and format, readable from the file by marktrace list. */
#define _MT_NOTE(name, format)                                                  \
	__asm__ __volatile__(                                                   \
		".pushsection .note.marktap,\"?\",\"note\"\n"                   \
		".balign 4\n"                                                   \
		".4byte 992f-991f, 994f-993f, 77\n"                              \
		"991: .asciz \"marktap\"\n"                                     \
		"992: .balign 4\n"                                              \
		"993: .asciz \"" #name "\"\n"                                   \
		".asciz " #format "\n"                                          \
		"994: .balign 4\n"                                              \
		".popsection\n")

/* ---- the marker --------------------------------------------------- */

#define trace_mark(name, format, ...) _mt_trace_mark(name, format, ##__VA_ARGS__)

/* The marker's code, reached when its gate is raised. */
#define _MT_SLOW(name, ...)                                                     \
	do {                                                                    \
		_MT_SDT(name, __mt_gate_##name, ##__VA_ARGS__);                 \
		if (__mt_gate_##name.armed)                                     \
			__mt_marker_fire(&__mt_marker_##name, ##__VA_ARGS__);   \
	} while (0)

#define _MT_DESCRIBE(name, format, ...)                                         \
	static struct mt_marker_gate __mt_gate_##name                           \
		__attribute__((section(".probes"), used));                      \
	static struct mt_marker __mt_marker_##name                              \
		__attribute__((section("__markers"), used)) =                   \
		{ &__mt_gate_##name, #name, format, 0 };                        \
	_MT_NOTE(name, format);                                                 \
	_MT_STATIC_ASSERT(_MT_ARGS_OK(__VA_ARGS__),                             \
			  "trace_mark: at most 12 arguments (the limit "        \
			  "of an SDT probe's note)");                           \
	if (0)                                                                  \
		__mt_check_format(format, ##__VA_ARGS__)

#if defined(MARKTAP_PATCHED_SITES) && defined(__x86_64__)
#define _MT_PATCHED 1
/*
 * The site: "test $rel32, %eax" (a9 and four bytes), an instruction with
 * no effect but on the flags, whose four bytes are the displacement of a
 * jump to the label: libmarktap turns it into "jmp rel32" (e9) and back by
 * rewriting its first byte alone, so that no thread can ever run a mix of
 * the two.  Described in "__mt_sites"; the label's code checks the gate
 * again (a thread that decoded the jump before it went finds it down).
 */
#define _mt_trace_mark(name, format, ...)                                       \
	_mt_patched_mark_(_MT_CAT(_mt_on_, __COUNTER__), name, format, ##__VA_ARGS__)
/* (the label's name expanded before it is made a string) */
#define _mt_patched_mark_(on, name, format, ...) _mt_patched_mark(on, name, format, ##__VA_ARGS__)
#define _mt_patched_mark(on, name, format, ...)                                 \
	do {                                                                    \
		_MT_DESCRIBE(name, format, ##__VA_ARGS__);                      \
		__asm__ goto("990: .byte 0xa9\n"                                \
			     ".long %l[" #on "] - . - 4\n"                      \
			     ".pushsection __mt_sites, \"aw\"\n"                 \
			     ".balign 8\n"                                      \
			     ".quad 990b, %l[" #on "], %c[_mt_m]\n"             \
			     ".popsection\n"                                    \
			     : : [_mt_m] "i"(&__mt_marker_##name) : : on);      \
		if (0) {                                                        \
		on:                                                             \
			if (*(volatile unsigned short *)&__mt_gate_##name.enabled) \
				_MT_SLOW(name, ##__VA_ARGS__);                  \
		}                                                               \
	} while (0)
#else
#define _mt_trace_mark(name, format, ...)                                       \
	do {                                                                    \
		_MT_DESCRIBE(name, format, ##__VA_ARGS__);                      \
		if (__builtin_expect(*(volatile unsigned short *)               \
				     &__mt_gate_##name.enabled, 0))             \
			_MT_SLOW(name, ##__VA_ARGS__);                          \
	} while (0)
#endif

/*
 * Every object that includes this header and has markers tells libmarktap
 * where its "__markers" array is.  The bounds are hidden, so each object
 * (executable or shared library) names its own; libmarktap counts repeats.
 */
extern struct mt_marker __start___markers[] __attribute__((weak, visibility("hidden")));
extern struct mt_marker __stop___markers[] __attribute__((weak, visibility("hidden")));
#ifdef _MT_PATCHED
extern struct mt_marker_site __start___mt_sites[] __attribute__((weak, visibility("hidden")));
extern struct mt_marker_site __stop___mt_sites[] __attribute__((weak, visibility("hidden")));
#endif

static void __attribute__((constructor, used)) __mt_markers_ctor(void)
{
	if (&__start___markers[0] != &__stop___markers[0])
		__mt_markers_register(__start___markers, __stop___markers);
#ifdef _MT_PATCHED
	if (&__start___mt_sites[0] != &__stop___mt_sites[0])
		__mt_sites_register(__start___mt_sites, __stop___mt_sites);
#endif
}

static void __attribute__((destructor, used)) __mt_markers_dtor(void)
{
#ifdef _MT_PATCHED
	if (&__start___mt_sites[0] != &__stop___mt_sites[0])
		__mt_sites_unregister(__start___mt_sites, __stop___mt_sites);
#endif
	if (&__start___markers[0] != &__stop___markers[0])
		__mt_markers_unregister(__start___markers, __stop___markers);
}

#ifdef __cplusplus
}
#endif

#endif
