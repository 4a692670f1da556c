/*
 * lua_text.c - Lua source text: the literals pass 3 writes (strings,
 * numbers, comments, the places of errors) and what it reads of a
 * tapset function's embedded Lua (a direct runtime call).  gen*.c and
 * native.c write with these.
 */
#define _GNU_SOURCE
#include "tr_gen.h"

#include <inttypes.h>
#include <string.h>

/* A Lua string literal for bytes. */
static const char *lua_bytes(const char *s, size_t n)
{
	struct tr_buf b = {0};

	tr_buf_putc(&b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			tr_buf_printf(&b, "\\%c", c);
		else if (c == '\n')
			tr_buf_puts(&b, "\\n");
		else if (c < 32 || c >= 127)
			tr_buf_printf(&b, "\\%03u", c);
		else
			tr_buf_putc(&b, (char)c);
	}
	tr_buf_putc(&b, '"');
	return tr_buf_str(&b);
}

const char *tr_lua_string(const char *raw)
{
	size_t n;
	char *bytes = tr_unescape(raw, &n);

	return lua_bytes(bytes, n);
}

const char *tr_lua_plain(const char *s)
{
	return lua_bytes(s, strlen(s));
}

/*
 * Text for a "-- ..." comment line.  Probe points carry names that come
 * from outside the script (a stored trace's event classes, a program's SDT
 * notes): a newline or carriage return there would end the comment and
 * make the rest Lua code, so control bytes are shown as '?'.
 */
const char *tr_lua_comment(const char *s)
{
	char *c = tr_strdup(s);

	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

const char *tr_lua_num(int64_t v)
{
	if (v == INT64_MIN)
		return "(1 << 63)";   /* no math library in marktap.ko's Lua */
	if (v < 0)
		return tr_printf("(%" PRId64 ")", v);
	return tr_printf("%" PRId64, v);
}

/* Where an error happened, as stap prints it after "near". */
const char *tr_lua_loc(const struct tr_token *t)
{
	if (!t || !t->file)
		return "nil";
	return tr_lua_plain(tr_printf("%s at %s:%u:%u", tr_tok_describe(t), t->file->name, t->line, t->col));
}

/* A tapset function that only returns a runtime function's value, such
 * as tid(): "%{ return rt.tid() %}", is called directly (a hit of
 * c[tid()]++ then makes one Lua call less).  "rt.tid", or NULL. */
const char *tr_lua_direct_call(const struct tr_func *f)
{
	const char *c = f->code, *name;
	size_t n;

	if (!c || f->params.n)
		return NULL;
	c += strspn(c, " \t\n");
	if (strncmp(c, "return rt.", 10))
		return NULL;
	name = c + 7;
	n = strspn(name + 3, "abcdefghijklmnopqrstuvwxyz_0123456789") + 3;
	c = name + n;
	if (strncmp(c, "()", 2))
		return NULL;
	c += 2;
	c += strspn(c, " \t\n;");
	if (*c)
		return NULL;
	return tr_printf("%.*s", (int)n, name);
}

