/*
 * ufunc-bitfield.c - bit fields for $s->member (tests/script/ufunc-bitfield.t):
 * unsigned and signed, 1 to 61 bits, across byte and word boundaries, in
 * a packed record where DWARF 4 gives a negative DW_AT_bit_offset.
 * Prints the values use() reads, as "name=value" (argv[1], if any, is
 * stored in s.b first, so the compiler cannot know it).  "tail": a packed
 * record whose last field ends the last byte of a page before an
 * unmapped one (use_tail()); a read of the field's bytes must not pass
 * the record's end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct bf {
	unsigned a : 3;
	signed b : 5;
	unsigned c : 12;
	signed d : 1;
	long e : 40;
	unsigned long f : 23;
	char tag;
	signed g : 7;
	_Bool h : 1;
};

struct __attribute__((packed)) pk {
	char x;
	unsigned long y : 61;
	signed z : 3;
};

__attribute__((noinline)) long use(const struct bf *s, const struct pk *p)
{
	printf("a=%d b=%d c=%d d=%d e=%ld f=%ld g=%d h=%d tag=%d y=%ld z=%d\n", s->a, s->b, s->c, s->d,
	       (long)s->e, (long)s->f, s->g, s->h, s->tag, (long)p->y, p->z);
	return s->a + s->b + s->c + s->d + s->e + (long)s->f + s->g + (long)p->y + p->z;
}

struct __attribute__((packed)) tail {
	char c;
	unsigned x : 20;
	signed y : 4;
};

__attribute__((noinline)) int use_tail(const struct tail *t)
{
	printf("x=%d y=%d\n", t->x, t->y);
	return t->x + t->y;
}

static int tail(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct tail *t;

	if (p == MAP_FAILED || munmap(p + 4096, 4096) != 0)
		return 1;
	t = (struct tail *)(p + 4096 - sizeof(*t));
	t->c = 1;
	t->x = 987654;
	t->y = -5;
	return use_tail(t) == 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "tail"))
		return tail();
	struct bf s = { 5, -11, 3000, -1, -549755813888L, 8388607, 'q', -64, 1 };
	struct pk p = { 'x', 0x1555555555555555UL, -3 };

	if (argc > 1)
		s.b = atoi(argv[1]);
	return use(&s, &p) == 0;
}
