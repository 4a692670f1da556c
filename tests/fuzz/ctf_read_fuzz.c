/*
 * ctf_read_fuzz.c - libFuzzer target for the CTF reader and the filter.
 *
 * The first byte of the input picks what the rest is:
 *   0: a stream file, read with a fixed metadata (tests/runtime/view/
 *      alltypes.trace: every field type), every event formatted as
 *      `marktrace view` does and run through a filter;
 *   1: metadata text, then (after a NUL byte) a stream file for it;
 *   2: a --filter expression, bound to the fixed metadata's events.
 * Every item read also goes through the state module of timeline and
 * export (tstate.c: thread and CPU numbers, names and states are the
 * input's; metadata saying domain = "kernel" reaches its kernel paths),
 * each interval's row name through the JSON/HTML and XML escapers.
 * Build and run: tests/runtime/view-fuzz.t, or `make fuzz-ctf-read`.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctf_read.h"
#include "filter.h"
#include "tout.h"
#include "tstate.h"
#include "vbuf.h"

static const char fixed_metadata[] =
	"/* CTF 1.8 */\n"
	"\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	"\n"
	"trace {\n"
	"\tmajor = 1;\n"
	"\tminor = 8;\n"
	"\tuuid = \"2a6b1a5e-55d4-4c3c-9a1d-0d8f2f7e9b10\";\n"
	"\tbyte_order = le;\n"
	"\tpacket.header := struct {\n"
	"\t\tuint32_t magic;\n"
	"\t\tuint8_t  uuid[16];\n"
	"\t\tuint32_t stream_id;\n"
	"\t\tuint64_t stream_instance_id;\n"
	"\t};\n"
	"};\n"
	"\n"
	"env {\n"
	"\thostname = \"host\";\n"
	"\tdomain = \"ust\";\n"
	"\ttracer_name = \"marktap\";\n"
	"\ttracer_major = 0;\n"
	"\ttracer_minor = 1;\n"
	"};\n"
	"\n"
	"clock {\n"
	"\tname = \"monotonic\";\n"
	"\tuuid = \"2a6b1a5e-55d4-4c3c-9a1d-0d8f2f7e9b10\";\n"
	"\tdescription = \"CLOCK_MONOTONIC\";\n"
	"\tfreq = 1000000000;\n"
	"\tprecision = 1;\n"
	"\toffset_s = 1796200000;\n"
	"\toffset = 123456789;\n"
	"\tabsolute = false;\n"
	"};\n"
	"\n"
	"typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n"
	"\n"
	"struct packet_context {\n"
	"\tuint64_clock_monotonic_t timestamp_begin;\n"
	"\tuint64_clock_monotonic_t timestamp_end;\n"
	"\tuint64_t content_size;\n"
	"\tuint64_t packet_size;\n"
	"\tuint64_t packet_seq_num;\n"
	"\tuint64_t events_discarded;\n"
	"\tuint32_t cpu_id;\n"
	"};\n"
	"\n"
	"stream {\n"
	"\tid = 0;\n"
	"\tpacket.context := struct packet_context;\n"
	"\tevent.header := struct {\n"
	"\t\tuint16_t id;\n"
	"\t\tuint64_clock_monotonic_t timestamp;\n"
	"\t};\n"
	"\tevent.context := struct {\n"
	"\t\tint32_t _pid;\n"
	"\t\tint32_t _tid;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } _procname[16];\n"
	"\t};\n"
	"};\n"
	"\n"
	"/* marktap format: \"d %d i %i u %u x %x o %o hd %hd hu %hu hhd %hhd hhu %hhu\" */\n"
	"event {\n"
	"\tname = \"ints\";\n"
	"\tid = 0;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 32; align = 8; signed = true; base = 10; } _d;\n"
	"\t\tinteger { size = 32; align = 8; signed = true; base = 10; } _i;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; base = 10; } _u;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; base = 16; } _x;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; base = 8; } _o;\n"
	"\t\tinteger { size = 16; align = 8; signed = true; base = 10; } _hd;\n"
	"\t\tinteger { size = 16; align = 8; signed = false; base = 10; } _hu;\n"
	"\t\tinteger { size = 8; align = 8; signed = true; base = 10; } _hhd;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; base = 10; } _hhu;\n"
	"\t};\n"
	"};\n"
	"\n"
	"/* marktap format: \"ld %ld lu %lu zu %zu lld %lld llu %llu\" */\n"
	"event {\n"
	"\tname = \"longs\";\n"
	"\tid = 1;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = true; base = 10; } _ld;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 10; } _lu;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 10; } _zu;\n"
	"\t\tinteger { size = 64; align = 8; signed = true; base = 10; } _lld;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 10; } _llu;\n"
	"\t};\n"
	"};\n"
	"\n"
	"/* marktap format: \"p %p ip #p%lu u1 #1u%u u2 #2u%hu u4 #4u%lu u8 #8u%llu d1 #1d%d d2 #2d%hd d4 #4d%ld d8 #8d%lld\" */\n"
	"event {\n"
	"\tname = \"prefixed\";\n"
	"\tid = 2;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _p;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _ip;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; base = 10; } _u1;\n"
	"\t\tinteger { size = 16; align = 8; signed = false; base = 10; } _u2;\n"
	"\t\tinteger { size = 32; align = 8; signed = false; base = 10; } _u4;\n"
	"\t\tinteger { size = 64; align = 8; signed = false; base = 10; } _u8;\n"
	"\t\tinteger { size = 8; align = 8; signed = true; base = 10; } _d1;\n"
	"\t\tinteger { size = 16; align = 8; signed = true; base = 10; } _d2;\n"
	"\t\tinteger { size = 32; align = 8; signed = true; base = 10; } _d4;\n"
	"\t\tinteger { size = 64; align = 8; signed = true; base = 10; } _d8;\n"
	"\t};\n"
	"};\n"
	"\n"
	"/* marktap format: \"c %c s %s f %f\" */\n"
	"event {\n"
	"\tname = \"chars\";\n"
	"\tid = 3;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t\tinteger { size = 8; align = 8; signed = true; base = 10; encoding = UTF8; } _c;\n"
	"\t\tstring _s;\n"
	"\t\tfloating_point { exp_dig = 11; mant_dig = 53; align = 8; } _f;\n"
	"\t};\n"
	"};\n"
	"\n"
	"/* marktap format: \" \" */\n"
	"event {\n"
	"\tname = \"empty\";\n"
	"\tid = 4;\n"
	"\tstream_id = 0;\n"
	"\tfields := struct {\n"
	"\t};\n"
	"};\n";

static struct ctf_trace *fixed;
static struct mt_filter *filter;
static struct vbuf *out;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ctf_err err;
	struct mt_filter_err ferr;

	(void)argc;
	(void)argv;
	fixed = ctf_trace_parse("fixed/metadata", ".", fixed_metadata, sizeof(fixed_metadata) - 1, &err);
	filter = mt_filter_compile("(fs_* or s == \"t*\" or c > 'a') and not (cpu == 3 || d8 < -5 || f >= 0.5)", &ferr);
	if (!fixed || !filter)
		abort();
	out = malloc(sizeof(*out));
	vb_init(out, open("/dev/null", O_WRONLY));
	return 0;
}

/* What cmd_view.c does with an event, minus the time. */
static void format_event(const struct ctf_event *ev)
{
	const struct ctf_event_class *c = ev->cls;
	unsigned i;

	vb_check(out);
	vb_escaped(out, ev->procname, ev->procname_len);
	vb_i64(out, ev->pid);
	vb_i64(out, ev->tid);
	vb_put(out, c->name, strlen(c->name));
	for (i = 0; i < c->nfields; i++) {
		const struct ctf_field *f = &c->fields[i];
		vb_check(out);
		vb_put(out, f->name, strlen(f->name));
		if (f->kind == CTF_STRING)
			vb_quoted(out, ctf_field_string(ev, i), (size_t)-1);
		else if (f->kind == CTF_FLOAT)
			vb_double(out, ctf_field_float(ev, i));
		else if (f->is_char)
			vb_quoted_char(out, (unsigned char)ctf_field_uint(ev, i));
		else if (f->base == 16)
			vb_hex(out, ctf_field_uint(ev, i));
		else if (f->base == 8)
			vb_oct(out, ctf_field_uint(ev, i));
		else if (f->base == 2)
			vb_bin(out, ctf_field_uint(ev, i));
		else
			vb_i64(out, ctf_field_int(ev, i));
	}
	vb_char(out, '\n');
}

/* What timeline and export do with an interval, minus the lanes. */
static void on_interval(void *ctx, struct ts_row *r, uint64_t start, uint64_t end,
			unsigned state, int32_t aux)
{
	(void)ctx;
	(void)aux;
	vb_check(out);
	tout_json_string(out, r->name, sizeof(r->name), 1);
	tout_text(out, r->first_name, sizeof(r->first_name));
	tout_json_micros(out, end - start);
	vb_str(out, ts_state_name[state < TS_NSTATES ? state : 0]);
}

static void read_stream(struct ctf_trace *t, const uint8_t *data, size_t size, int filtered)
{
	struct ctf_stream *s = ctf_stream_new(t, "fuzz/channel0_0", data, size);
	struct ts ts;
	unsigned i, n;
	int item;

	ts_init(&ts, on_interval, NULL);
	while ((item = ctf_stream_next(s)) != CTF_ITEM_END && item != CTF_ITEM_ERROR) {
		struct ctf_event_class *c = (struct ctf_event_class *)s->ev.cls;
		ts_feed(&ts, s);
		if (item != CTF_ITEM_EVENT)
			continue;
		if (filtered) {
			if (!c->user)
				c->user = (void *)mt_filter_bind(filter, c);
			if (!mt_filter_match(filter, c->user, &s->ev, s->cpu))
				continue;
		}
		format_event(&s->ev);
		vb_check(out);
		tout_json_string(out, c->name, (size_t)-1, 1);
	}
	ts_finish(&ts);
	free(ts_sorted_threads(&ts, &n));
	ts_free(&ts);
	for (i = 0; i < t->nclasses; i++) {   /* the state's bindings of this trace */
		free(t->class_list[i]->state);
		t->class_list[i]->state = NULL;
	}
	ctf_stream_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		read_stream(fixed, data + 1, size - 1, 1);
		break;
	case 1: {
		const uint8_t *nul = memchr(data + 1, 0, size - 1);
		size_t mlen = nul ? (size_t)(nul - data - 1) : size - 1;
		struct ctf_err err;
		struct ctf_trace *t = ctf_trace_parse("fuzz/metadata", ".", (const char *)data + 1, mlen, &err);
		if (t && nul)
			read_stream(t, nul + 1, size - 1 - mlen - 1, 0);
		ctf_trace_free(t);
		break;
	}
	default: {
		char *text = malloc(size);
		struct mt_filter_err ferr;
		struct mt_filter *f;
		unsigned i;
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		f = mt_filter_compile(text, &ferr);
		for (i = 0; f && i < fixed->nclasses; i++)
			mt_filter_bind(f, fixed->class_list[i]);
		mt_filter_free(f);
		free(text);
	}
	}
	vb_flush(out);
	return 0;
}
