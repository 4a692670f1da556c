/*
 * ctf_trace.c - a trace from its metadata: the text (packetized or plain)
 * parsed by ctf_tsdl.c, then laid out here.  Every integer is byte aligned
 * and little endian in our traces (doc/trace-format.md), so the header and
 * context structs have fixed offsets, computed once (struct ctf_layout)
 * instead of interpreting the TSDL per event; other traces' classes are
 * read through their TSDL types (ctf_read.c's generic decoding).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctf_int.h"
#include "ctf_tsdl.h"

/* ---- from TSDL to fixed offsets ---- */

struct wanted {
	const char *name;       /* without a leading '_' */
	struct fixed *dst;
	int is_array;           /* a byte array (uuid, procname) rather than an integer */
};

static const char *strip_underscore(const char *name)
{
	return name[0] == '_' && name[1] ? name + 1 : name;
}

static void fail_at_decl(struct parser *ps, const struct ctf_decl *d, const char *fmt, const char *a, const char *b)
{
	ps->tok.line = d->line;
	ps->tok.col = d->col;
	tsdl_fail(ps, fmt, a, b);
}

/*
 * Lay out a header or context struct whose fields all have a fixed size:
 * 0, or -1 when it has other fields (the trace is then decoded generically).
 */
static int lay_out(struct parser *ps, const struct ctf_type *t, const char *what,
		   struct wanted *w, unsigned nw, unsigned *size_out)
{
	unsigned off = 0, i, k;

	*size_out = 0;
	for (k = 0; k < nw; k++)
		w[k].dst->off = -1;
	if (!t)
		return 0;
	if (t->kind != TY_STRUCT)
		tsdl_fail(ps, "%s is not a structure", what);
	for (i = 0; i < t->ndecls; i++) {
		const struct ctf_decl *d = &t->decls[i];
		const struct ctf_type *ty = d->type;
		unsigned size;
		int is_array = 0;

		if (ty->kind == TY_ARRAY && ty->elem->kind == TY_INT && ty->elem->size == 8 &&
		    ty->length <= 4096) {
			size = (unsigned)ty->length;
			is_array = 1;
			ty = ty->elem;
		} else if (ty->kind == TY_INT && ty->size && ty->size % 8 == 0 && ty->size <= 64) {
			size = ty->size / 8;
		} else {
			return -1;
		}
		if (ty->align > 8 || ty->big_endian)
			return -1;
		for (k = 0; k < nw; k++) {
			if (strcmp(strip_underscore(d->name), w[k].name))
				continue;
			if (w[k].is_array != is_array)
				fail_at_decl(ps, d, "%s field '%s' has the wrong type", what, d->name);
			w[k].dst->off = (int)off;
			w[k].dst->size = size;
		}
		off += size;
		if (off > 65536)
			tsdl_fail(ps, "%s is too large", what);
	}
	*size_out = off;
	return 0;
}

static int is_uint(const struct ctf_type *t, unsigned bits)
{
	return t && t->kind == TY_INT && t->size == bits && !t->is_signed && !t->big_endian &&
	       t->align <= 8;
}

static const struct ctf_decl *member(const struct ctf_type *t, unsigned i, const char *name)
{
	if (!t || t->kind != TY_STRUCT || i >= t->ndecls || strcmp(t->decls[i].name, name))
		return NULL;
	return &t->decls[i];
}

/*
 * marktap's compact event header (mt_event.h), exactly:
 *   enum : uint8 { ..., extended = 255 } id;
 *   variant <id> { struct { uint24 timestamp (clock) } compact;
 *                  struct { uint16 id; uint64 timestamp (clock) } extended; } v;
 * Any other shape is read generically.
 */
static int is_compact_header(const struct ctf_type *eh)
{
	const struct ctf_decl *id = member(eh, 0, "id"), *v = member(eh, 1, "v"), *c, *x;
	const struct ctf_type *vt;
	const char *label;

	if (!id || !v || eh->ndecls != 2 || id->type->kind != TY_ENUM ||
	    !is_uint(id->type->elem, 8))
		return 0;
	label = ctf_enum_label(id->type, 255);
	vt = v->type;
	if (!label || strcmp(label, "extended") || vt->kind != TY_VARIANT || vt->ndecls != 2 ||
	    strcmp(vt->ref, "id"))
		return 0;
	c = &vt->decls[0];
	x = &vt->decls[1];
	if (strcmp(c->name, "compact") || strcmp(x->name, "extended"))
		return 0;
	for (unsigned k = 0; k < 255; k++) {   /* every other id is compact */
		label = ctf_enum_label(id->type, k);
		if (!label || strcmp(label, "compact"))
			return 0;
	}
	return c->type->ndecls == 1 && member(c->type, 0, "timestamp") &&
	       is_uint(c->type->decls[0].type, 24) && c->type->decls[0].type->maps_clock &&
	       x->type->ndecls == 2 && member(x->type, 0, "id") &&
	       is_uint(x->type->decls[0].type, 16) && member(x->type, 1, "timestamp") &&
	       is_uint(x->type->decls[1].type, 64) && x->type->decls[1].type->maps_clock;
}

static void build_layout(struct parser *ps, struct ctf_layout *L)
{
	struct wanted ph[] = {
		{ "magic", &L->magic, 0 }, { "uuid", &L->uuid, 1 },
		{ "stream_instance_id", &L->instance, 0 },
	};
	struct wanted pc[] = {
		{ "timestamp_begin", &L->ts_begin, 0 }, { "timestamp_end", &L->ts_end, 0 },
		{ "content_size", &L->content_size, 0 }, { "packet_size", &L->packet_size, 0 },
		{ "packet_seq_num", &L->seq, 0 }, { "events_discarded", &L->discarded, 0 },
		{ "cpu_id", &L->cpu_id, 0 },
	};
	struct wanted eh[] = { { "id", &L->ev_id, 0 }, { "timestamp", &L->ev_ts, 0 } };
	struct wanted ec[] = {
		{ "pid", &L->pid, 0 }, { "tid", &L->tid, 0 }, { "procname", &L->procname, 1 },
		{ "vpid", &L->vpid, 0 }, { "vtid", &L->vtid, 0 },
	};

	if (!ps->nstream_blocks)
		tsdl_fail(ps, "no stream block");
	ps->packet_context = ps->streams[0].pc;
	ps->event_header = ps->streams[0].eh;
	ps->event_context = ps->streams[0].ec;
	L->ph = ps->packet_header;
	L->pc = ps->packet_context;
	L->eh = ps->event_header;
	L->ec = ps->event_context;
	L->compact = ps->nstream_blocks == 1 && is_compact_header(ps->event_header);
	if (lay_out(ps, ps->packet_header, "packet.header", ph, 3, &L->ph_size) ||
	    lay_out(ps, ps->packet_context, "packet.context", pc, 7, &L->pc_size) ||
	    (!L->compact && lay_out(ps, ps->event_header, "event.header", eh, 2, &L->eh_size)) ||
	    lay_out(ps, ps->event_context, "event.context", ec, 5, &L->ec_size)) {
		L->generic = 1;
		L->compact = 0;
		return;
	}
	if (L->compact)
		L->eh_size = 0;     /* read_event reads it */
	if (L->pid.off < 0)
		L->pid = L->vpid;   /* as LTTng's contexts name them */
	if (L->tid.off < 0)
		L->tid = L->vtid;
	if (L->magic.off >= 0 && L->magic.size != 4)
		tsdl_fail(ps, "packet.header magic is not 32 bits");
	if (L->uuid.off >= 0 && L->uuid.size != 16)
		tsdl_fail(ps, "packet.header uuid is not 16 bytes");
	if (L->ev_ts.off < 0 && !L->compact)
		tsdl_fail(ps, "event.header has no timestamp");
}

/* An 8-bit integer with an encoding: a character */
static int is_char_type(const struct ctf_type *t)
{
	return t->kind == TY_INT && t->size == 8 && t->encoded;
}

/* A top-level field of a generically decoded event: what it reads as. */
static void generic_field(struct ctf_field *f, const struct ctf_type *ty)
{
	f->size = 8;            /* values are widened (ctf_read.c) */
	switch (ty->kind) {
	case TY_ENUM:
		f->enum_type = ty;
		ty = ty->elem;
		/* fall through */
	case TY_INT:
		f->kind = CTF_INT;
		f->is_signed = (unsigned char)ty->is_signed;
		f->base = (unsigned char)ty->base;
		f->is_char = is_char_type(ty);
		break;
	case TY_FLOAT:
		f->kind = CTF_FLOAT;
		break;
	case TY_STRING:
		f->kind = CTF_STRING;
		break;
	case TY_ARRAY:
	case TY_SEQ:
		f->kind = is_char_type(ty->elem) ? CTF_STRING : CTF_TEXT;
		break;
	default:
		f->kind = CTF_TEXT;
	}
}

/* Floats the fixed path reads: IEEE binary32 and binary64. */
static int is_ieee(const struct ctf_type *ty)
{
	return (ty->exp_dig == 11 && ty->mant_dig == 53) || (ty->exp_dig == 8 && ty->mant_dig == 24);
}

/* An event's payload: integers, floats and strings, byte aligned (else generic). */
static void build_class(struct parser *ps, struct pending_event *e, int *generic)
{
	struct ctf_event_class *c = e->cls;
	const struct ctf_type *t = e->fields;
	struct ctf_field *f;
	unsigned i;

	if (!t)
		return;
	ps->tok.line = e->line;
	ps->tok.col = e->col;
	if (t->kind != TY_STRUCT)
		tsdl_fail(ps, "event '%s': fields is not a structure", c->name);
	c->type = t;
	f = ctf_arena_alloc(ps->arena, (t->ndecls ? t->ndecls : 1) * sizeof(*f));
	memset(f, 0, (t->ndecls ? t->ndecls : 1) * sizeof(*f));
	for (i = 0; i < t->ndecls; i++) {
		const struct ctf_decl *d = &t->decls[i];
		const struct ctf_type *ty = d->type;

		f[i].name = strip_underscore(d->name);
		f[i].name_len = (unsigned)strlen(f[i].name);
		f[i].base = 10;
		if (ty->kind == TY_INT && (ty->size == 8 || ty->size == 16 || ty->size == 32 || ty->size == 64)) {
			f[i].kind = CTF_INT;
			f[i].size = (unsigned char)(ty->size / 8);
			f[i].is_signed = (unsigned char)ty->is_signed;
			f[i].base = (unsigned char)ty->base;
			f[i].is_char = ty->size == 8 && ty->encoded;
		} else if (ty->kind == TY_FLOAT && is_ieee(ty)) {
			f[i].kind = CTF_FLOAT;
			f[i].size = ty->exp_dig == 11 ? 8 : 4;
		} else if (ty->kind == TY_STRING) {
			f[i].kind = CTF_STRING;
		} else {
			*generic = 1;
		}
		if (ty->align > 8 || ty->big_endian)
			*generic = 1;
		if (ty->kind == TY_FLOAT && !is_ieee(ty))
			fail_at_decl(ps, d, "event '%s' field '%s': unsupported float (IEEE binary32 and binary64 only)",
				     c->name, d->name);
	}
	c->fields = f;
	c->nfields = t->ndecls;
}

/* Once one part needs the generic decoder, every class's fields read as it does. */
static void make_generic(struct ctf_trace *t)
{
	unsigned i, k;

	t->layout->generic = 1;
	for (i = 0; i < t->nclasses; i++) {
		struct ctf_event_class *c = t->class_list[i];
		struct ctf_field *f = (struct ctf_field *)c->fields;
		for (k = 0; k < c->nfields; k++)
			generic_field(&f[k], c->type->decls[k].type);
	}
}

/* The stream class an event belongs to: by its stream_id, or the only one. */
static struct ctf_sclass *event_sclass(struct parser *ps, struct ctf_layout *L, struct pending_event *e)
{
	for (unsigned k = 0; k < L->nsc; k++)
		if (L->nsc == 1 || L->sc[k].id == (e->stream_id == UINT64_MAX ? 0 : e->stream_id))
			return &L->sc[k];
	ps->tok.line = e->line;
	ps->tok.col = e->col;
	tsdl_fail(ps, "event '%s': no stream class %llu", e->cls->name,
		   (unsigned long long)(e->stream_id == UINT64_MAX ? 0 : e->stream_id));
}

/* Each stream class's events by id (ids are per stream class). */
static void index_classes(struct parser *ps, struct ctf_layout *L)
{
	struct pending_event *e;

	L->nsc = ps->nstream_blocks;
	L->sc = ctf_arena_alloc(ps->arena, L->nsc * sizeof(*L->sc));
	memset(L->sc, 0, L->nsc * sizeof(*L->sc));
	for (unsigned k = 0; k < L->nsc; k++) {
		L->sc[k].id = ps->streams[k].id;
		L->sc[k].pc = ps->streams[k].pc;
		L->sc[k].eh = ps->streams[k].eh;
		L->sc[k].ec = ps->streams[k].ec;
		for (unsigned j = 0; j < k; j++)
			if (L->sc[j].id == L->sc[k].id)
				tsdl_fail(ps, "two stream classes with id %llu", (unsigned long long)L->sc[k].id);
	}
	for (e = ps->events; e; e = e->next) {
		struct ctf_sclass *sc = event_sclass(ps, L, e);
		if (e->cls->id + 1 > sc->nids)
			sc->nids = e->cls->id + 1;
	}
	{
		uint64_t slots = 0;
		for (unsigned k = 0; k < L->nsc; k++)
			slots += L->sc[k].nids;
		if (slots > 2 * MAX_IDS)
			tsdl_fail(ps, "event ids too large over the stream classes (%llu slots)",
				   (unsigned long long)slots);
	}
	for (unsigned k = 0; k < L->nsc; k++) {
		L->sc[k].classes = ctf_arena_alloc(ps->arena, (L->sc[k].nids + 1) * sizeof(*L->sc[k].classes));
		memset(L->sc[k].classes, 0, (L->sc[k].nids + 1) * sizeof(*L->sc[k].classes));
	}
	for (e = ps->events; e; e = e->next) {
		struct ctf_sclass *sc = event_sclass(ps, L, e);
		if (sc->classes[e->cls->id]) {
			ps->tok.line = e->line;
			ps->tok.col = e->col;
			tsdl_fail(ps, "two events with id %llu ('%s' and '%s')", (unsigned long long)e->cls->id,
				   sc->classes[e->cls->id]->name, e->cls->name);
		}
		sc->classes[e->cls->id] = e->cls;
	}
}

/* The thread events of a marktap trace, if it declares them as libmarktap
 * writes them: an integer pid and a string name. */
static void find_thread_class(struct ctf_trace *t)
{
	unsigned i;

	for (i = 0; i < t->nclasses; i++) {
		const struct ctf_event_class *c = t->class_list[i];
		int pid, name;

		if (strcmp(c->name, "marktap_statedump:thread"))
			continue;
		pid = ctf_class_field(c, "pid");
		name = ctf_class_field(c, "name");
		if (pid >= 0 && name >= 0 && c->fields[pid].kind == CTF_INT &&
		    c->fields[name].kind == CTF_STRING) {
			t->thread_class = c;
			t->thread_pid = pid;
			t->thread_name = name;
		}
	}
}

/* ---- the event context beyond pid, tid and procname ---- */

static int has_member(const struct ctf_type *t, const char *name)
{
	for (unsigned i = 0; i < t->ndecls; i++)
		if (!strcmp(strip_underscore(t->decls[i].name), name))
			return 1;
	return 0;
}

/* A member the reader takes for ctf_event's pid, tid or procname
 * (ctf_read.c): pid, else vpid; tid, else vtid. */
static int taken_by_reader(const struct ctf_type *ec, const char *name)
{
	name = strip_underscore(name);
	if (!strcmp(name, "pid") || !strcmp(name, "tid") || !strcmp(name, "procname"))
		return 1;
	if (!strcmp(name, "vpid"))
		return !has_member(ec, "pid");
	if (!strcmp(name, "vtid"))
		return !has_member(ec, "tid");
	return 0;
}

/* The fixed layout reads integers of an event context; any other member
 * (a byte array but procname) is read by the generic decoder. */
static int context_needs_generic(const struct ctf_type *ec)
{
	if (!ec || ec->kind != TY_STRUCT)
		return 0;
	for (unsigned i = 0; i < ec->ndecls; i++)
		if (ec->decls[i].type->kind != TY_INT && !taken_by_reader(ec, ec->decls[i].name))
			return 1;
	return 0;
}

/*
 * The class of a stream class's other context fields (sc->ctx): their
 * names without '_', their kinds as the generic decoder widens them, or,
 * with the fixed layout (integers only), their sizes and offsets in ec.
 */
static void build_context(struct parser *ps, struct ctf_trace *t, struct ctf_sclass *sc, int generic)
{
	const struct ctf_type *ec = sc->ec;
	struct ctf_event_class *cls;
	struct ctf_field *f;
	unsigned i, k = 0, n = 0, off = 0;

	if (!ec || ec->kind != TY_STRUCT)
		return;
	for (i = 0; i < ec->ndecls; i++)
		n += !taken_by_reader(ec, ec->decls[i].name);
	if (!n)
		return;
	cls = ctf_arena_alloc(ps->arena, sizeof(*cls));
	memset(cls, 0, sizeof(*cls));
	f = ctf_arena_alloc(ps->arena, n * sizeof(*f));
	memset(f, 0, n * sizeof(*f));
	sc->ctx_of_decl = ctf_arena_alloc(ps->arena, ec->ndecls * sizeof(*sc->ctx_of_decl));
	sc->ctx_off = ctf_arena_alloc(ps->arena, n * sizeof(*sc->ctx_off));
	for (i = 0; i < ec->ndecls; i++) {
		const struct ctf_type *ty = ec->decls[i].type;
		/* in a laid out context: an integer, or the procname array */
		unsigned size = ty->kind == TY_ARRAY ? (unsigned)ty->length : ty->size / 8;

		sc->ctx_of_decl[i] = -1;
		if (!taken_by_reader(ec, ec->decls[i].name)) {
			f[k].name = strip_underscore(ec->decls[i].name);
			f[k].name_len = (unsigned)strlen(f[k].name);
			generic_field(&f[k], ty);
			if (!generic)
				f[k].size = (unsigned char)size;
			sc->ctx_off[k] = off;
			sc->ctx_of_decl[i] = (int)k++;
		}
		off += size;
	}
	cls->name = "context";
	cls->name_len = 7;
	cls->fields = f;
	cls->nfields = n;
	cls->type = ec;
	sc->ctx = cls;
	if (n > t->max_ctx_fields)
		t->max_ctx_fields = n;
}

static void build_trace(struct parser *ps)
{
	struct ctf_trace *t = ps->trace;
	struct pending_event *e;
	unsigned n = 0;
	int generic = 0;

	t->layout = ctf_arena_alloc(ps->arena, sizeof(*t->layout));
	memset(t->layout, 0, sizeof(*t->layout));
	build_layout(ps, t->layout);
	if (!t->freq)
		t->freq = 1000000000;
	/* unsigned: absurd offsets wrap instead of overflowing */
	t->offset_ns = (int64_t)((uint64_t)ps->offset_s * 1000000000u +
		(uint64_t)((unsigned __int128)ps->offset_cycles * 1000000000u / t->freq));
	for (e = ps->events; e; e = e->next) {
		build_class(ps, e, &generic);
		e->cls->name_len = (unsigned)strlen(e->cls->name);
		if (e->cls->nfields > t->max_fields)
			t->max_fields = e->cls->nfields;
		n++;
	}
	index_classes(ps, t->layout);
	/* the fixed layout reads stream class 0 only */
	t->classes = t->layout->sc[0].classes;
	t->nids = t->layout->sc[0].nids;
	t->class_list = ctf_arena_alloc(ps->arena, (n + 1) * sizeof(*t->class_list));
	t->nclasses = n;
	n = 0;
	for (e = ps->events; e; e = e->next) {
		e->cls->index = n;
		t->class_list[n++] = e->cls;
	}
	if (!t->layout->generic && t->layout->nsc == 1 && context_needs_generic(t->layout->sc[0].ec))
		generic = 1;
	if (generic || t->layout->generic || t->layout->nsc > 1)
		make_generic(t);
	for (unsigned k = 0; k < t->layout->nsc; k++)
		build_context(ps, t, &t->layout->sc[k], t->layout->generic);
	for (e = ps->events; e; e = e->next)
		e->cls->context = event_sclass(ps, t->layout, e)->ctx;
	find_thread_class(t);
}

int ctf_class_field(const struct ctf_event_class *c, const char *name)
{
	unsigned i;

	for (i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].name, name))
			return (int)i;
	return -1;
}

const char *ctf_enum_label(const struct ctf_type *t, uint64_t v)
{
	int is_signed = t->elem->is_signed;
	unsigned i;

	for (i = 0; i < t->nmaps; i++) {
		const struct ctf_mapping *m = &t->maps[i];
		if (is_signed ? (int64_t)v >= m->lo && (int64_t)v <= m->hi
			      : v >= (uint64_t)m->lo && v <= (uint64_t)m->hi)
			return m->label;
	}
	return NULL;
}

/*
 * Packetized metadata (LTTng's): packets of a 37-byte header (magic
 * 0x75D11D57, uuid, checksum, content_size and packet_size in bits, then
 * compression, encryption and checksum schemes and the version, all 0
 * but the version) and text.  The text of all packets, or NULL with err.
 */
#define MD_MAGIC 0x75D11D57u
#define MD_HEADER 37

static char *depacketize(const char *path, const unsigned char *p, size_t len,
			 size_t *out_len, struct ctf_err *err)
{
	char *text = malloc(len + 1);
	size_t off = 0, n = 0;

	if (!text)
		abort();
	while (off < len) {
		uint32_t magic, content, packet;

		if (len - off < MD_HEADER) {
			ctf_set_err(err, "%s: byte %zu: truncated metadata packet header (%zu bytes left)", path, off, len - off);
			goto fail;
		}
		memcpy(&magic, p + off, 4);
		memcpy(&content, p + off + 24, 4);
		memcpy(&packet, p + off + 28, 4);
		if (magic != MD_MAGIC) {
			ctf_set_err(err, "%s: byte %zu: bad metadata packet magic 0x%08x (expected 0x75d11d57)", path, off, magic);
			goto fail;
		}
		if (p[off + 32] || p[off + 33] || p[off + 34]) {
			ctf_set_err(err, "%s: byte %zu: compressed, encrypted or checksummed metadata is not supported", path, off);
			goto fail;
		}
		if (content % 8 || packet % 8 || content / 8 < MD_HEADER || content > packet ||
		    packet / 8 > len - off) {
			ctf_set_err(err, "%s: byte %zu: bad metadata packet sizes (content %u, packet %u bits; %zu bytes left)",
				    path, off, content, packet, len - off);
			goto fail;
		}
		memcpy(text + n, p + off + MD_HEADER, content / 8 - MD_HEADER);
		n += content / 8 - MD_HEADER;
		off += packet / 8;
	}
	text[n] = '\0';
	*out_len = n;
	return text;
fail:
	free(text);
	return NULL;
}

struct ctf_trace *ctf_trace_parse(const char *path, const char *name,
				  const char *text, size_t len, struct ctf_err *err)
{
	struct ctf_arena *arena = NULL;
	struct ctf_trace *volatile t;
	struct parser *ps = calloc(1, sizeof(*ps));

	if (!ps)
		abort();
	if (len >= 4 && (unsigned char)text[0] == 0x57 && (unsigned char)text[1] == 0x1d &&
	    (unsigned char)text[2] == 0xd1 && (unsigned char)text[3] == 0x75) {
		ps->plain = depacketize(path, (const unsigned char *)text, len, &len, err);
		if (!ps->plain) {
			free(ps);
			return NULL;
		}
		text = ps->plain;
	}
	t = ctf_arena_alloc(&arena, sizeof(*t));
	memset(t, 0, sizeof(*t));
	/* for messages and listings: printable (a directory's name is its maker's) */
	t->path = ctf_arena_alloc(&arena, 4 * strlen(path) + 1);
	ctf_printable((char *)t->path, path, strlen(path));
	t->name = ctf_arena_alloc(&arena, 4 * strlen(name) + 1);
	ctf_printable((char *)t->name, name, strlen(name));
	ps->path = path;
	ps->p = ps->line_start = text;
	ps->end = text + len;
	ps->line = 1;
	ps->arena = &arena;
	ps->err = err;
	ps->trace = t;
	ps->events_tail = &ps->events;
	ps->streams = ctf_arena_alloc(&arena, MAX_SCLASSES * sizeof(*ps->streams));
	memset(ps->streams, 0, MAX_SCLASSES * sizeof(*ps->streams));
	if (setjmp(ps->fail)) {
		ctf_arena_free(arena);
		free(ps->plain);
		free(ps);
		return NULL;
	}
	tsdl_parse_top(ps);
	ps->tok.line = ps->line;
	ps->tok.col = 1;
	build_trace(ps);
	t->arena = arena;
	free(ps->plain);
	free(ps);
	return t;
}

void ctf_trace_free(struct ctf_trace *t)
{
	if (t) {
		free(t->threads);
		ctf_arena_free(t->arena);
	}
}

