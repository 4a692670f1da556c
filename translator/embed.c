/*
 * embed.c - the %{ %} code of the user's scripts, checked at pass 2.
 *
 * marktap's embedded code is Lua; stap's is C, which cannot run here.  An
 * expression block that names a kernel constant (%{ -EIO %}, %{ S_DEAD %})
 * becomes its number, as stap's compiler would make it.  Any other block
 * that is C is refused here, naming what gave it away, and a block that
 * does not compile as Lua is refused with Lua's words at the block's
 * place: before, both failed only when pass 5 loaded the chunk
 * ("unexpected symbol near '#'", at a line of the generated code).
 */
#include "tr_elab.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

/* Constants stap scripts take from the kernel's headers. */
static const struct {
	const char *name;
	long value;
} constants[] = {
#define E(n) { #n, n }
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC),
	E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY), E(EEXIST),
	E(EXDEV), E(ENODEV), E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE),
	E(ENOTTY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE), E(ERANGE),
	E(EDEADLK), E(ENAMETOOLONG), E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(EWOULDBLOCK),
	E(ENODATA), E(ETIME), E(EOVERFLOW), E(EILSEQ), E(ENOTSOCK), E(EOPNOTSUPP),
	E(ECONNREFUSED), E(ECONNRESET), E(ETIMEDOUT), E(EHOSTUNREACH), E(EALREADY),
	E(EINPROGRESS), E(ECANCELED), E(EOWNERDEAD), E(EDQUOT), E(ESTALE),
#undef E
	{ "ERESTARTSYS", 512 }, { "S_DEAD", 16 },
};

/* What only C has: the first of these in a block names it. */
static const char *const c_marks[] = {
	"STAP_ARG_", "STAP_RETVALUE", "STAP_RETURN", "THIS->", "CONTEXT->", "->", "#include",
	"#define", "#if", "strlcpy", "snprintf", "sprintf(", "kread(", "struct ", "unsigned ",
};

/* The code without its C comments, stap's pragmas ("pure") among them. */
const char *tr_embed_strip_pragmas(const char *code)
{
	struct tr_buf b = {0};

	for (const char *p = code; *p;) {
		const char *end;
		if (p[0] == '/' && p[1] == '*' && (end = strstr(p + 2, "*/"))) {
			p = end + 2;
			continue;
		}
		tr_buf_putc(&b, *p++);
	}
	return tr_buf_str(&b);
}

/*
 * A tapset function whose code carries a pragma is refused where it is
 * called, at pass 2 (elab_bind.c): stap's guru pragma (a comment that
 * says "guru"), the function needs -g as in stap; marktap's refuse
 * pragma (a comment "refuse: REASON"), the function cannot mean
 * anything here, and REASON says why.
 */
const char *tr_embed_refusal(const char *name, const char *code, bool guru)
{
	const char *p, *end;

	if (!guru && strstr(code, "/* guru */"))
		return "function may not be used unless -g is specified";
	if (!(p = strstr(code, "/* refuse:")) || !(end = strstr(p, "*/")))
		return NULL;
	p += strlen("/* refuse:");
	p += strspn(p, " \t\n");
	while (end > p && strchr(" \t\n", end[-1]))
		end--;
	return tr_printf("%s: %.*s", name, (int)(end - p), p);
}

/* %{ NAME %} or %{ -NAME %} of a known constant: its value as text. */
static const char *constant_of(const char *code)
{
	const char *p = code + strspn(code, " \t\n");
	bool minus = *p == '-';
	size_t n;

	p += minus;
	p += strspn(p, " \t");
	n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	if (!n || !isupper((unsigned char)*p) || p[n + strspn(p + n, " \t\n")])
		return NULL;
	for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		if (strlen(constants[i].name) == n && !strncmp(p, constants[i].name, n))
			return tr_printf("%ld", minus ? -constants[i].value : constants[i].value);
	/* the user running marktap (is_myproc: stap's _stp_uid, set when
	 * its module is loaded; marktap's handlers get it with the script) */
	if (n == strlen("MARKTAP_UID") && !strncmp(p, "MARKTAP_UID", n))
		return tr_printf("%ld", minus ? -(long)getuid() : (long)getuid());
	return NULL;
}

/* Refuse C, and Lua that does not compile (as `wrap` puts it); the
 * tapsets' blocks are marktap's own Lua. */
static void check(lua_State *L, const char *code, const char *wrap, const struct tr_token *tok)
{
	const char *lua = tr_embed_strip_pragmas(code);

	if (tok && tok->file && tok->file->tapset)
		return;
	for (size_t i = 0; i < sizeof(c_marks) / sizeof(c_marks[0]); i++)
		if (strstr(lua, c_marks[i])) {
			tr_sem_error(tok, "embedded C code cannot run in marktap (it has '%s'): "
				     "marktap's %%{ %%} blocks hold Lua", c_marks[i]);
			return;
		}
	const char *chunk = tr_printf(wrap, lua);
	if (luaL_loadbufferx(L, chunk, strlen(chunk), "=embedded code", "t") != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		tr_sem_error(tok, "embedded code is not Lua: %s", msg ? msg : "(no message)");
	}
	lua_settop(L, 0);
}

struct walk {
	lua_State *L;
};

static void check_expr(const struct tr_expr *e, void *arg)
{
	struct walk *w = arg;
	const char *value;

	if (e->kind != E_EMBED)
		return;
	if ((value = constant_of(e->str)) != NULL) {
		((struct tr_expr *)e)->str = value;   /* gen.c writes it as it is */
		return;
	}
	check(w->L, e->str, "return (%s)", e->tok);
}

void tr_embed_check(struct tr_session *s)
{
	struct walk w = { luaL_newstate() };
	struct tr_walker walker = { NULL, check_expr, &w };

	if (!w.L)
		return;
	for (unsigned i = 0; i < s->user.n; i++) {
		struct tr_script *sc = s->user.items[i];
		for (unsigned k = 0; k < sc->embeds.n; k++) {
			struct tr_global_embed *ge = sc->embeds.items[k];
			check(w.L, ge->code, "%s", ge->tok);
		}
	}
	/* what pass 3 translates: the elaborated probes, the functions used */
	for (unsigned i = 0; i < s->funcs.n; i++) {
		struct tr_func *f = s->funcs.items[i];
		if (f->code)
			check(w.L, f->code, "return function(...) %s\nend", f->tok);
		else if (f->body)
			tr_walk_stmt(&walker, f->body);
	}
	for (unsigned i = 0; i < s->probes.n; i++) {
		struct tr_probe *p = s->probes.items[i];
		if (p->body)
			tr_walk_stmt(&walker, p->body);
	}
	lua_close(w.L);
}
