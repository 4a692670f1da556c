/*
 * tapset-target.c - memory for the tapset function tests
 * (tests/script/tapset-funcs.t): one <sys/sdt.h> probe, data:bufs, whose
 * operands are the addresses of a UTF-16 string ("hé€" and U+1F600 as a
 * surrogate pair), the same in UTF-32, a UTF-16 string with a lone high
 * surrogate, a buffer with a NUL in it, and a writable char array, which
 * it prints after the probe (set_user_* writes it).
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/sdt.h>

static uint16_t utf16[] = { 'h', 0xe9, 0x20ac, 0xd83d, 0xde00, 0 };
static uint32_t utf32[] = { 'h', 0xe9, 0x20ac, 0x1f600, 0 };
static uint16_t bad16[] = { 'a', 0xd800, 'b', 0 };
static char buffer[] = { 'a', '\0', 'b', '\n', 'c' };
static char text[16] = "original";

int main(void)
{
	STAP_PROBE5(data, bufs, utf16, utf32, bad16, buffer, text);
	printf("%s\n", text);
	return 0;
}
