/*
 * mt_fmt.c - parse marker format strings (shared by libmarktap and marktap.ko).
 */
#include "mt_fmt.h"

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static int fail(struct mt_fmt_error *err, unsigned offset, const char *msg)
{
	if (err) {
		size_t n = strlen(msg);
		if (n >= sizeof(err->message))
			n = sizeof(err->message) - 1;
		memcpy(err->message, msg, n);
		err->message[n] = '\0';
		err->offset = offset;
	}
	return -EINVAL;
}

/*
 * The field name is the identifier that ends just before the conversion,
 * after skipping blanks and one '=' or ':' ("fd %d", "fd=%d", "fd: %d").
 */
static void field_name(const char *fmt, unsigned lit_begin, unsigned conv,
		       unsigned index, struct mt_format *out, char *name)
{
	unsigned end = conv, begin, n, i, dup;

	while (end > lit_begin && (fmt[end - 1] == ' ' || fmt[end - 1] == '\t'))
		end--;
	if (end > lit_begin && (fmt[end - 1] == '=' || fmt[end - 1] == ':'))
		end--;
	while (end > lit_begin && fmt[end - 1] == ' ')
		end--;
	begin = end;
	while (begin > lit_begin && is_ident(fmt[begin - 1]))
		begin--;
	n = end - begin;
	if (n == 0) {
		/* "argN", N counted from 1 as $arg1 is */
		char tmp[16];
		unsigned v = index + 1, k = 0;
		do { tmp[k++] = (char)('0' + v % 10); v /= 10; } while (v);
		memcpy(name, "arg", 3);
		for (i = 0; i < k; i++)
			name[3 + i] = tmp[k - 1 - i];
		name[3 + k] = '\0';
	} else {
		unsigned o = 0;
		if (n > MT_FIELD_NAME_MAX - 4)
			n = MT_FIELD_NAME_MAX - 4;
		if (fmt[begin] >= '0' && fmt[begin] <= '9')
			name[o++] = '_';
		memcpy(name + o, fmt + begin, n);
		name[o + n] = '\0';
	}
	/* A repeated name gets a suffix: "a", "a_2", "a_3"... */
	for (i = 0; i < index; i++)
		if (strcmp(out->fields[i].name, name) == 0)
			break;
	if (i < index) {
		char base[MT_FIELD_NAME_MAX];
		size_t len = strlen(name);

		if (len > MT_FIELD_NAME_MAX - 4)
			len = MT_FIELD_NAME_MAX - 4;
		memcpy(base, name, len);
		for (dup = 2; dup <= MT_FIELDS_MAX + 1; dup++) {
			unsigned k = (unsigned)len;
			memcpy(name, base, len);
			name[k++] = '_';
			if (dup >= 10)
				name[k++] = (char)('0' + dup / 10);
			name[k++] = (char)('0' + dup % 10);
			name[k] = '\0';
			for (i = 0; i < index; i++)
				if (strcmp(out->fields[i].name, name) == 0)
					break;
			if (i == index)
				break;
		}
	}
}

/* Parse "#p" or "#<1|2|4|8><u|d>" at fmt[*pos] (the '#'). */
static int parse_prefix(const char *fmt, unsigned *pos, struct mt_field *f,
			int *has_prefix, struct mt_fmt_error *err)
{
	unsigned p = *pos + 1;

	*has_prefix = 1;
	if (fmt[p] == 'p') {
		f->size = sizeof(void *);
		f->is_signed = 0;
		f->is_pointer = 1;
		f->base = 16;
		*pos = p + 1;
		return 0;
	}
	if (fmt[p] != '1' && fmt[p] != '2' && fmt[p] != '4' && fmt[p] != '8')
		return fail(err, p, "type prefix: expected 'p' or a size 1, 2, 4 or 8 after '#'");
	f->size = (u8)(fmt[p] - '0');
	p++;
	if (fmt[p] == 'u')
		f->is_signed = 0;
	else if (fmt[p] == 'd')
		f->is_signed = 1;
	else
		return fail(err, p, "type prefix: expected 'u' or 'd' after the size");
	p++;
	if (fmt[p] != '%')
		return fail(err, p, "type prefix: expected a '%' conversion after it");
	*pos = p;
	return 0;
}

/* Parse a conversion at fmt[*pos] (the '%'); fills va, ctype and defaults. */
static int parse_conversion(const char *fmt, unsigned *pos, struct mt_field *f,
			    int has_prefix, struct mt_fmt_error *err)
{
	unsigned p = *pos + 1;
	int lng = 0, shrt = 0, sz = 0;
	char c;

	while (fmt[p] == '-' || fmt[p] == '+' || fmt[p] == ' ' || fmt[p] == '#' || fmt[p] == '0')
		p++;
	while (fmt[p] >= '0' && fmt[p] <= '9')
		p++;
	if (fmt[p] == '.') {
		p++;
		while (fmt[p] >= '0' && fmt[p] <= '9')
			p++;
	}
	if (fmt[p] == '*')
		return fail(err, p, "conversion: '*' width is not supported in a marker format");
	for (;; p++) {
		if (fmt[p] == 'l' && lng < 2) lng++;
		else if (fmt[p] == 'h' && shrt < 2) shrt++;
		else if ((fmt[p] == 'z' || fmt[p] == 't') && !sz) sz = 1;
		else break;
	}
	if ((lng && shrt) || (sz && (lng || shrt)))
		return fail(err, p, "conversion: conflicting length modifiers");
	c = fmt[p];
	f->base = 10;
	switch (c) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o':
		f->store = MT_ST_INT;
		f->is_signed = (c == 'd' || c == 'i');
		f->base = (c == 'x' || c == 'X') ? 16 : c == 'o' ? 8 : 10;
		if (lng == 2) {
			f->va = MT_VA_LLONG; f->size = 8;
			f->ctype = f->is_signed ? "long long" : "unsigned long long";
		} else if (lng == 1 || sz) {
			f->va = MT_VA_LONG; f->size = sizeof(long);
			f->ctype = sz ? (f->is_signed ? "ssize_t" : "size_t")
				      : (f->is_signed ? "long" : "unsigned long");
		} else {
			f->va = MT_VA_INT;
			f->size = shrt == 2 ? 1 : shrt == 1 ? 2 : 4;
			f->ctype = shrt == 2 ? (f->is_signed ? "signed char" : "unsigned char")
				 : shrt == 1 ? (f->is_signed ? "short" : "unsigned short")
				 : (f->is_signed ? "int" : "unsigned int");
		}
		break;
	case 'c':
		if (lng || shrt || sz)
			return fail(err, p, "conversion: length modifier on %c");
		f->store = MT_ST_INT; f->va = MT_VA_INT; f->size = 1;
		f->is_signed = 1; f->is_char = 1; f->ctype = "char";
		break;
	case 'p':
		if (lng || shrt || sz)
			return fail(err, p, "conversion: length modifier on %p");
		f->store = MT_ST_INT; f->va = MT_VA_PTR; f->size = sizeof(void *);
		f->is_signed = 0; f->is_pointer = 1; f->base = 16; f->ctype = "void *";
		break;
	case 's':
		if (lng || shrt || sz)
			return fail(err, p, "conversion: length modifier on %s");
		if (has_prefix)
			return fail(err, p, "type prefix: not allowed before %s");
		f->store = MT_ST_STRING; f->va = MT_VA_STRING; f->size = 0;
		f->ctype = "const char *";
		break;
	case 'f': case 'g': case 'e': case 'F': case 'G': case 'E':
		if (lng || shrt || sz)
			return fail(err, p, "conversion: length modifier on a floating conversion");
		if (has_prefix)
			return fail(err, p, "type prefix: not allowed before a floating conversion");
		f->store = MT_ST_DOUBLE; f->va = MT_VA_DOUBLE; f->size = 8;
		f->is_signed = 1; f->ctype = "double";
		break;
	case 'n':
		return fail(err, p, "conversion: %n is not allowed in a marker format");
	case '\0':
		return fail(err, p, "conversion: format ends inside a conversion");
	default:
		return fail(err, p, "conversion: unknown conversion character");
	}
	*pos = p + 1;
	return 0;
}

int mt_fmt_parse(const char *fmt, struct mt_format *out, struct mt_fmt_error *err)
{
	unsigned pos = 0, lit_begin = 0;

	out->nfields = 0;
	out->planned = 0;
	if (!fmt)
		return fail(err, 0, "format: missing (NULL)");
	while (fmt[pos]) {
		struct mt_field f;
		unsigned conv = pos;
		int has_prefix = 0, rc;
		u8 psize = 0, psigned = 0, pptr = 0;

		if (fmt[pos] == '%' && fmt[pos + 1] == '%') {
			pos += 2;
			continue;
		}
		if (fmt[pos] != '%' && fmt[pos] != '#') {
			pos++;
			continue;
		}
		if (fmt[pos] == '#' && fmt[pos + 1] != 'p' &&
		    !(fmt[pos + 1] >= '0' && fmt[pos + 1] <= '9')) {
			pos++; /* a plain '#' in the text */
			continue;
		}
		if (out->nfields == MT_FIELDS_MAX)
			return fail(err, pos, "format: too many fields (at most 32)");
		memset(&f, 0, sizeof(f));
		if (fmt[pos] == '#') {
			rc = parse_prefix(fmt, &pos, &f, &has_prefix, err);
			if (rc)
				return rc;
			psize = f.size; psigned = f.is_signed; pptr = f.is_pointer;
			if (fmt[pos] != '%')
				return fail(err, pos, "type prefix: expected a '%' conversion after it");
		}
		rc = parse_conversion(fmt, &pos, &f, has_prefix, err);
		if (rc)
			return rc;
		if (has_prefix) {
			if (f.store != MT_ST_INT || f.is_char)
				return fail(err, conv, "type prefix: needs an integer conversion");
			f.size = psize;
			f.is_signed = psigned;
			if (pptr) {
				f.is_pointer = 1;
				f.base = 16;
			}
		}
		field_name(fmt, lit_begin, conv, out->nfields, out, f.name);
		out->fields[out->nfields++] = f;
		lit_begin = pos;
	}
	mt_fmt_plan(out);
	return 0;
}

void mt_fmt_plan(struct mt_format *f)
{
	unsigned i;

	f->fixed = 0;
	for (i = 0; i < f->nfields; i++) {
		const struct mt_field *fld = &f->fields[i];
		unsigned take, put;

		switch (fld->va) {
		case MT_VA_INT: take = fld->is_signed ? MT_TAKE_INT : MT_TAKE_UINT; break;
		case MT_VA_STRING: take = MT_TAKE_STRING; break;
		case MT_VA_DOUBLE: take = MT_TAKE_DOUBLE; break;
		default: take = MT_TAKE_WORD; break;   /* long, long long, pointer: 64 bits */
		}
		if (fld->store == MT_ST_STRING) {
			put = MT_PUT_STRING;
		} else {
			put = fld->size == 1 ? MT_PUT_1 : fld->size == 2 ? MT_PUT_2 :
			      fld->size == 4 ? MT_PUT_4 : MT_PUT_8;
			f->fixed += fld->size;
		}
		f->op[i] = (u8)(take << 4 | put);
	}
	f->planned = 1;
}

const char *mt_fmt_stap_type(const struct mt_field *f)
{
	return f->store == MT_ST_STRING ? "string" : "long";
}
