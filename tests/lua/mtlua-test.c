/* mtlua-test.c - the Lua runtime of translated scripts, through its C API.
 *
 * Each case loads a small Lua chunk calling module "mtrt" the way translated
 * scripts do, runs its handler and compares what reached the output and
 * error sinks with the text stap prints for the same script, written from
 * the SystemTap language reference and tapset reference.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tap.h"
#include "mt_lua.h"

struct sink {
	char out[65536];
	size_t outn;
	char err[8192];
	size_t errn;
};

static void sink_write(void *ctx, const char *buf, size_t n)
{
	struct sink *s = ctx;
	if (s->outn + n >= sizeof s->out)
		n = sizeof s->out - 1 - s->outn;
	memcpy(s->out + s->outn, buf, n);
	s->outn += n;
	s->out[s->outn] = 0;
}

static void sink_error(void *ctx, const char *line)
{
	struct sink *s = ctx;
	int n = snprintf(s->err + s->errn, sizeof s->err - s->errn, "%s\n", line);
	if (n > 0 && s->errn + (size_t)n < sizeof s->err)
		s->errn += (size_t)n;
}

static struct sink sink;

/* Options for a case: zero means stap's defaults. */
static struct mt_lua_options opts(void)
{
	struct mt_lua_options o = {0};
	o.write = sink_write;
	o.error = sink_error;
	o.ctx = &sink;
	return o;
}

/* Body lines start at line 3 of the chunk: line N of a body is Lua line N+2. */
static struct mt_lua *load(const struct mt_lua_options *o, const char *body)
{
	char chunk[16384], err[512];
	snprintf(chunk, sizeof chunk,
		 "local rt = require 'mtrt'\n"
		 "rt.probe('t', function(...)\n%s\nend)\n", body);
	memset(&sink, 0, sizeof sink);
	struct mt_lua *mt = mt_lua_new(o);
	if (!mt) {
		tap_diag("mt_lua_new failed");
		return NULL;
	}
	if (mt_lua_load(mt, chunk, strlen(chunk), "=t.lua", err, sizeof err) != 0) {
		tap_diag("load failed: %s", err);
		mt_lua_free(mt);
		return NULL;
	}
	return mt;
}

static bool same(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want) == 0)
		return true;
	tap_diag("%s got:\n%s<<<", what, got);
	tap_diag("%s expected:\n%s<<<", what, want);
	return false;
}

/* Runs body once with options o; compares output and errors. */
static void check_opts(const char *name, struct mt_lua_options o, const char *body,
		       const char *want_out, const char *want_err)
{
	struct mt_lua *mt = load(&o, body);
	if (!mt) {
		tap_ok(0, "%s", name);
		return;
	}
	mt_lua_run(mt, mt_lua_handler(mt, "t"), 0);
	mt_lua_free(mt);
	bool ok = same("output", sink.out, want_out);
	ok = same("errors", sink.err, want_err) && ok;
	tap_ok(ok, "%s", name);
}

static void check(const char *name, const char *body, const char *want_out, const char *want_err)
{
	check_opts(name, opts(), body, want_out, want_err);
}

/* ---- printf ---- */

static void test_printf(void)
{
	check("printf %d %s %x %o %X %u with width and flags",
	      "rt.printf('%5d|%-5s|%x|%#o|%X|%u\\n', 42, 'ab', 255, 8, 255, -1)",
	      "   42|ab   |ff|010|FF|18446744073709551615\n", "");
	check("printf %p is 0x and 16 hex digits (langref example)",
	      "rt.printf('%p', 12345678)", "0x0000000000bc614e", "");
	check("printf flags + space 0 - precision #",
	      "rt.printf('%+d|% d|%05d|%-6d|%.3d|%#x|%#X|%o|%#x', 5, 5, -42, 7, 7, 255, 255, 8, 0)",
	      "+5| 5|-0042|7     |007|0xff|0XFF|10|0", "");
	check("printf * width and precision",
	      "rt.printf('[%*d][%-*s][%.*s][%*d]', 6, 42, 4, 'ab', 2, 'hello', -4, 1)",
	      "[    42][ab  ][he][1   ]", "");
	check("printf %c, %s precision, %%",
	      "rt.printf('%c%c%3c|%10.3s|100%%', 65, 66, 67, 'abcdef')",
	      "AB  C|       abc|100%", "");
	check("printf negative numbers in hex/octal/unsigned are 64-bit",
	      "rt.printf('%x %o %u %d', -1, -8, -2, (1 << 63))",
	      "ffffffffffffffff 1777777777777777777770 18446744073709551614 -9223372036854775808", "");
	check("printf %b writes the value's bytes (width = byte count)",
	      "rt.printf('%1b%2b%4b', 65, 0x4342, 0x0a464544)", "ABCDEF\n", "");
	check("sprintf returns the string, sprint/sprintln/sprintd",
	      "local s = rt.sprintf('<%s:%d>', 'x', -3)\n"
	      "rt.print(s, rt.sprint(1, 'a'), rt.sprintln('z'), rt.sprintd('-', 1, 2, 'c'))",
	      "<x:-3>1az\n1-2-c", "");
	check("print, println, printd, printdln",
	      "rt.print(1, 'a', -2) rt.println() rt.println('x', 7) rt.printd(', ', 1, 'b') rt.printdln('/', 'u', 9)",
	      "1a-2\nx7\n1, bu/9\n", "");
	check("printf with too few arguments is an error, output before it kept",
	      "rt.print('before ') rt.printf('%d %d', 1)",
	      "before 1 ", "ERROR: printf: too few arguments for '%d'\n");
	check("printf of a string with %d is an error",
	      "rt.printf('%d', 'x')", "",
	      "ERROR: printf: argument 1 for %d is not a long but a string\n");
	check("printf unknown conversion is an error",
	      "rt.printf('%q', 1)", "", "ERROR: printf: unknown conversion '%q' in format\n");
}

static const char memory_text[] = "marktap";

static void test_memory(void)
{
	struct mt_lua_options o = opts();
	struct mt_lua *mt = load(&o, "local addr = ... rt.printf('%.4m|%.4M|%-6.2m|%m', addr, addr, addr, addr)");
	if (!mt) {
		tap_ok(0, "printf %%m and %%M read memory");
		return;
	}
	lua_pushinteger(mt_lua_state(mt), (lua_Integer)(uintptr_t)memory_text);
	mt_lua_run(mt, mt_lua_handler(mt, "t"), 1);
	mt_lua_free(mt);
	tap_ok(same("output", sink.out, "mark|6d61726b|ma    |m") && same("errors", sink.err, ""),
	       "printf %%m and %%M read memory");
	check("printf %m of an unreadable address is an error, not a crash",
	      "rt.printf('%.8m', 16)", "", "ERROR: user string copy fault at 0x10\n");
}

/* ---- integers and strings ---- */

static void test_integers(void)
{
	check("division truncates toward 0, modulo has the dividend's sign",
	      "rt.println(rt.div(7, -2), ' ', rt.mod(-7, 2), ' ', rt.div(-7, 2), ' ', rt.mod(7, -3))",
	      "-3 -1 -3 1\n", "");
	check("longs wrap around",
	      "rt.println((-1 >> 1) + 1 == (1 << 63) and 'wrap' or 'nowrap', ' ', rt.div((1 << 63), -1))",
	      "wrap -9223372036854775808\n", "");
	check("division by 0 is stap's error with the location",
	      "rt.print('out ') local x = rt.div(1, 0, \"operator '/' at t.stp:1:20\") rt.print('not reached')",
	      "out ", "ERROR: division by 0 near operator '/' at t.stp:1:20\n");
	check("modulo by 0 too",
	      "rt.mod(1, 0, \"operator '%' at t.stp:2:5\")", "",
	      "ERROR: division by 0 near operator '%' at t.stp:2:5\n");
	check("shifts: << and arithmetic >>",
	      "rt.println(rt.shr(-16, 2), ' ', rt.shl(1, 63), ' ', rt.shr(256, 4))",
	      "-4 -9223372036854775808 16\n", "");
}

static void test_strings(void)
{
	struct mt_lua_options o = opts();
	o.maxstringlen = 8;
	check_opts("strings are cut at MAXSTRINGLEN - 1 (cat, sprintf, map values)", o,
		   "local m = rt.map{name = 'm', value = 'string'}\n"
		   "m:set(1, 'abcdefghij')\n"
		   "rt.println(rt.cat('abcd', 'efghij'), '|', rt.sprintf('%s', 'abcdefghijkl'), '|', m:get(1), '|', rt.cat('abcdefgh', 'x'))",
		   "abcdefg|abcdefg|abcdefg|abcdefg\n", "");
	check("substr, strlen, isinstr, stringat",
	      "rt.printd(',', rt.substr('hello', 1, 3), rt.substr('hello', 10, 2), rt.substr('hello', 3, 10),"
	      " rt.strlen('hello'), rt.isinstr('hello', 'll'), rt.isinstr('hello', 'z'), rt.stringat('abc', 1))",
	      "ell,,lo,5,1,0,98", "");
	check("stringat out of range is an error",
	      "rt.stringat('abc', 3, \"identifier 'stringat' at t.stp:1:1\")", "",
	      "ERROR: Position out of bounds near identifier 'stringat' at t.stp:1:1\n");
	/* the kernel's simple_strtol: no blanks or '+', digits up to f */
	check("strtol with bases",
	      "rt.printd(' ', rt.strtol('ff', 16), rt.strtol('-0x10', 16), rt.strtol('12abc', 10),"
	      " rt.strtol('777', 8), rt.strtol('  42', 10), rt.strtol('0x1f', 0), rt.strtol('101', 2), rt.strtol('', 10),"
	      " rt.strtol('+5', 10), rt.strtol('z', 36), rt.strtol('10', 100))",
	      "255 -16 12 511 0 31 5 0 0 0 100", "");
	check("str_replace replaces every occurrence",
	      "rt.print(rt.str_replace('a-b--c', '-', '+'), ' ', rt.str_replace('aaa', 'aa', 'b'))",
	      "a+b++c ba", "");
	check("tokenize keeps state and skips empty tokens",
	      "local t = rt.tokenize(',a,,b;c', ',;')\n"
	      "while t ~= '' do rt.print('[', t, ']') t = rt.tokenize('', ',;') end",
	      "[a][b][c]", "");
	check("text_str and text_strn escape non-printable bytes",
	      "rt.println(rt.text_str('a\\tb\"\\1\\n\\\\'))\n"
	      "rt.println(rt.text_strn('abcdef', 5, 1), ' ', rt.text_strn('abc', 0, 1), ' ', rt.text_strn('abcdef', 3, 0))",
	      "a\\tb\\\"\\001\\n\\\\\n\"\"... \"abc\" abc\n", "");
	check("strcmp compares bytes",
	      "rt.printd(' ', rt.strcmp('a', 'b'), rt.strcmp('b', 'a'), rt.strcmp('ab', 'ab'), rt.strcmp('ab', 'abc'), rt.strcmp('\\200', 'a'))",
	      "-1 1 0 -1 1", "");
	check("regmatch and matched",
	      "rt.println(rt.regmatch('foo123', '^([a-z]+)([0-9]+)$'), ' ', rt.matched(2), ' ', rt.matched(1),"
	      " ' ', rt.regmatch('foo', '[0-9]'), ' ', rt.matched(0))",
	      "1 123 foo 0 foo123\n", "");
	check("tostr of a long",
	      "rt.print(rt.tostr(-12), rt.tostr('s'))", "-12s", "");
}

/* ---- arrays ---- */

static void test_maps(void)
{
	check("unsorted foreach is insertion order; delete + set moves to the end",
	      "local a = rt.map{name = 'a'}\n"
	      "a:set(30, 1) a:set(10, 2) a:set(20, 3) a:delete(30) a:set(30, 4) a:add(10, 5)\n"
	      "for k, v in a:each() do rt.printf('%d=%d ', k, v) end",
	      "10=7 20=3 30=4 ", "");
	check("missing entries read as 0 and \"\"; exists; size",
	      "local a, s = rt.map{name = 'a'}, rt.map{name = 's', value = 'string'}\n"
	      "a:set(1, 0)\n"
	      "rt.printd(',', a:get(5), '[' .. s:get('x') .. ']', tostring(a:exists(1)), tostring(a:exists(5)), a:size(), s:size())",
	      "0,[],true,false,1,0", "");
	check("sorted foreach on the value, ascending and descending, with limit",
	      "local a = rt.map{name = 'a', keys = {'string'}}\n"
	      "a:set('x', 3) a:set('y', 1) a:set('z', 2) a:set('w', 3)\n"
	      "for k, v in a:each(0, 1) do rt.print(k, v, ' ') end rt.println()\n"
	      "for k, v in a:each(0, -1) do rt.print(k, v, ' ') end rt.println()\n"
	      "for k, v in a:each(0, -1, 2) do rt.print(k, v, ' ') end rt.println()\n"
	      "for k, v in a:each(nil, nil, 0) do rt.print(k, v, ' ') end rt.println()",
	      "y1 z2 x3 w3 \nx3 w3 z2 y1 \nx3 w3 \n\n", "");
	check("sorted foreach on a key column of a two-key array",
	      "local a = rt.map{name = 'a', keys = {'long', 'string'}}\n"
	      "a:set(a:key(2, 'b'), 1) a:set(a:key(10, 'a'), 2) a:set(a:key(-1, 'c'), 3)\n"
	      "for k1, k2, v in a:each(1, 1) do rt.printf('%d,%s=%d ', k1, k2, v) end rt.println()\n"
	      "for k1, k2, v in a:each(2, -1) do rt.printf('%d,%s=%d ', k1, k2, v) end rt.println()\n"
	      "rt.println(a:get(a:key(10, 'a')), ' ', tostring(a:exists(a:key(10, 'b'))))",
	      "-1,c=3 2,b=1 10,a=2 \n-1,c=3 2,b=1 10,a=2 \n2 false\n", "");
	check("string keys sort by bytes, not by locale",
	      "local a = rt.map{name = 'a', keys = {'string'}}\n"
	      "a:set('b', 1) a:set('B', 1) a:set('a', 1) a:set('_', 1)\n"
	      "for k in a:each(1, 1) do rt.print(k) end",
	      "B_ab", "");
	check("foreach iterates a snapshot: the body may change the array",
	      "local a = rt.map{name = 'a'}\n"
	      "for i = 1, 4 do a:set(i, i * 10) end\n"
	      "for k, v in a:each() do rt.print(k, ':', v, ' ') a:delete(k + 1) a:set(k + 100, 0) end\n"
	      "rt.println() rt.print(a:size())",
	      "1:10 2:20 3:30 4:40 \n5", "");
	check("wildcard delete a[*, k]",
	      "local a = rt.map{name = 'a', keys = {'long', 'string'}}\n"
	      "a:set(a:key(1, 'x'), 1) a:set(a:key(1, 'y'), 2) a:set(a:key(2, 'x'), 3) a:set(a:key(3, 'z'), 4)\n"
	      "a:delete_match(rt.ANY, 'x')\n"
	      "for k1, k2, v in a:each() do rt.printf('[%d,%s]=%d ', k1, k2, v) end\n"
	      "a:delete_match(3, rt.ANY) rt.print(a:size()) a:clear() rt.print(a:size())",
	      "[1,y]=2 [3,z]=4 10", "");
	struct mt_lua_options o = opts();
	o.maxmapentries = 3;
	check_opts("MAXMAPENTRIES overflow", o,
		   "local a = rt.map{name = 'a'}\n"
		   "for i = 1, 3 do a:set(i, i) end a:set(1, 9)\n"
		   "rt.print('full ') a:set(4, 4, \"identifier 'a' at t.stp:4:3\")",
		   "full ", "ERROR: Array overflow, check MAXMAPENTRIES near identifier 'a' at t.stp:4:3\n");
	check("global a[2] overflow names the size limit",
	      "local a = rt.map{name = 'a', size = 2}\n"
	      "a:add(1, 1) a:add(2, 1) a:add(3, 1, \"identifier 'a' at t.stp:2:3\")",
	      "", "ERROR: Array overflow, check size limit (2) near identifier 'a' at t.stp:2:3\n");
	check("global a[3]% wraps: the oldest entry is replaced",
	      "local a = rt.map{name = 'a', size = 3, wrap = true}\n"
	      "for i = 1, 5 do a:set(i, i * i) end\n"
	      "for k, v in a:each() do rt.print(k, '=', v, ' ') end",
	      "3=9 4=16 5=25 ", "");
	check("rt.map needs key types for several columns (translator error)",
	      "local ok, e = pcall(rt.map, {name = 'a', arity = 2}) rt.print(tostring(ok), ' ', tostring(e):match('keys'))",
	      "false keys", "");
}

/* ---- statistics ---- */

static void test_stats(void)
{
	/* @variance: stap's integer Welford algorithm (a running mean truncated
	 * at every step, then the total variance formula), not the true 4.57:
	 * 13, as stap's runtime computes it (its stat-common.c and stat.c). */
	check("@count @sum @min @max @avg @variance",
	      "local s = rt.stat()\n"
	      "for _, v in ipairs{2, 4, 4, 4, 5, 5, 7, 9} do s:push(v) end\n"
	      "rt.printd(' ', s:count(), s:sum(), s:min(), s:max(), s:avg(), s:variance())",
	      "8 40 2 9 5 13", "");
	/* stap(1), STATISTICS: 1..5 gives 12, and 2 with a bit shift of 1 */
	check("@variance(s, SHIFT): stap's examples",
	      "local s, t = rt.stat(), rt.stat{shift = 1}\n"
	      "for v = 1, 5 do s:push(v) t:push(v) end\n"
	      "rt.printd(' ', s:variance(), t:variance())",
	      "12 2", "");
	/* The running delta is an int in stap's runtime: a step of 2^32 is 0. */
	check("@variance: the running delta wraps at 32 bits as in stap",
	      "local s = rt.stat()\n"
	      "s:push(0) s:push(1 << 32) s:push(0)\n"
	      "rt.printd(' ', s:variance(), s:avg())",
	      "3074457344186602837 1431655765", "");
	check("@avg truncates toward 0; @variance of one sample is 0",
	      "local s, t = rt.stat(), rt.stat()\n"
	      "s:push(-3) s:push(-4) t:push(17)\n"
	      "rt.printd(' ', s:avg(), s:min(), s:max(), t:variance(), t:avg())",
	      "-3 -4 -3 0 17", "");
	check("@avg of an empty aggregate is an error; @count is 0",
	      "local s = rt.stat() rt.print(s:count(), ' ') rt.print(s:avg(\"identifier 's' at t.stp:3:9\"))",
	      "0 ", "ERROR: empty aggregate near identifier 's' at t.stp:3:9\n");
	check("extractor of a missing array element: empty aggregate (stap 4.8)",
	      "local a = rt.map{name = 'a', keys = {'string'}, value = 'stat'}\n"
	      "a:push('x', 5) rt.print(a:get('x'):sum(), ' ', a:get('y'):count(), ' ')\n"
	      "rt.print(a:get('y'):min(\"identifier 'a' at t.stp:2:8\"))",
	      "5 0 ", "ERROR: empty aggregate near identifier 'a' at t.stp:2:8\n");
	check("aggregates in arrays; foreach sorted on @sum and @count",
	      "local a = rt.map{name = 'a', keys = {'string'}, value = 'stat'}\n"
	      "a:push('p', 100) a:push('q', 1) a:push('q', 2) a:push('q', 3) a:push('r', 50) a:push('r', 1)\n"
	      "for k, st in a:each(0, -1, nil, 'sum') do rt.print(k, st:sum(), ' ') end rt.println()\n"
	      "for k, st in a:each(0, -1) do rt.print(k, st:count(), ' ') end",
	      "p100 r51 q6 \nq3 r2 p1 ", "");
	struct mt_lua_options o = opts();
	o.maxmapentries = 1;
	check_opts("too many aggregate keys: aggregation overflow", o,
		   "local a = rt.map{name = 'a', value = 'stat'}\n"
		   "a:push(1, 1) a:push(1, 2) a:push(2, 1, \"identifier 'a' at t.stp:5:1\")",
		   "", "ERROR: aggregation overflow near identifier 'a' at t.stp:5:1\n");
}

/* The chart of the langref's @hist_linear example: 1650 values in the 0
 * bucket, 8 in 200, 1 in 1400, of @hist_linear(reads, 0, 10240, 200). */
static const char langref_linear[] =
	"value |-------------------------------------------------- count\n"
	"    0 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1650\n"
	"  200 |                                                      8\n"
	"  400 |                                                      0\n"
	"  600 |                                                      0\n"
	"      ~\n"
	" 1000 |                                                      0\n"
	" 1200 |                                                      0\n"
	" 1400 |                                                      1\n"
	" 1600 |                                                      0\n"
	" 1800 |                                                      0\n"
	"\n";

static const char small_log[] =
	"value |-------------------------------------------------- count\n"
	"    0 |                                                   0\n"
	"    1 |@                                                  1\n"
	"    2 |@@                                                 2\n"
	"    4 |@                                                  1\n"
	"    8 |@@@                                                3\n"
	"   16 |                                                   0\n"
	"   32 |                                                   0\n"
	"   64 |@                                                  1\n"
	"  128 |                                                   0\n"
	"  256 |                                                   0\n"
	"\n";

static const char under_over[] =
	"value |-------------------------------------------------- count\n"
	"  <10 |@@                                                 2\n"
	"   10 |@                                                  1\n"
	"   20 |                                                   0\n"
	"   30 |                                                   0\n"
	"   40 |@@                                                 2\n"
	"  >40 |@                                                  1\n"
	"\n";

static const char elision0[] =
	"value |-------------------------------------------------- count\n"
	"      ~\n"
	"   -8 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 100\n"
	"   -4 |@@@@@                                               10\n"
	"      ~\n"
	"    4 |@                                                    2\n"
	"\n";

static void test_hist(void)
{
	struct mt_lua_options o = opts();
	o.maxaction = -1;
	check_opts("@hist_linear chart as in the language reference", o,
		   "local s = rt.stat{hist = {'linear', 0, 10240, 200}}\n"
		   "for i = 1, 1650 do s:push(i % 200) end\n"
		   "for i = 1, 8 do s:push(250) end s:push(1450)\n"
		   "rt.print(s:hist())",
		   langref_linear, "");
	check("@hist_log chart: powers of two, 2 empty rows kept around the data",
	      "local s = rt.stat{hist = {'log'}}\n"
	      "for _, v in ipairs{1, 2, 3, 4, 8, 9, 15, 100} do s:push(v) end\n"
	      "rt.print(s:hist())",
	      small_log, "");
	/* (40 - 10) / 10 + 1 = 4 regular buckets: 40 has its own row */
	check("@hist_linear underflow and overflow rows",
	      "local s = rt.stat{hist = {'linear', 10, 40, 10}}\n"
	      "for _, v in ipairs{-5, 9, 10, 40, 41, 1000} do s:push(v) end\n"
	      "rt.print(s:hist())",
	      under_over, "");
	o = opts();
	o.hist_elision = MT_LUA_HIST_ELISION_ZERO;
	check_opts("HIST_ELISION=0: empty rows become ~; counts scaled to 50", o,
		   "local s = rt.stat{hist = {'log'}}\n"
		   "for i = 1, 100 do s:push(-8) end for i = 1, 10 do s:push(-5) end s:push(4) s:push(7)\n"
		   "rt.print(s:hist())",
		   elision0, "");
	/* stap's numbering: linear 0 underflow, 1..N, N+1 overflow; log 0..127
	 * with 64 for 0 (65: 1, 67: 4..7, 63: -1); foreach visits them all */
	check("histogram bucket indexing and foreach over buckets",
	      "local s = rt.stat{hist = {'linear', 0, 30, 10}}\n"
	      "for _, v in ipairs{-1, 0, 5, 12, 29, 30, 31} do s:push(v) end\n"
	      "rt.print(s:bucket(0), s:bucket(1), s:bucket(2), s:bucket(3), s:bucket(4), ' ')\n"
	      "for i, c in s:buckets() do rt.print(i, ':', c, ' ') end\n"
	      "local l = rt.stat{hist = {'log'}} l:push(5) l:push(6) l:push(1) l:push(-1)\n"
	      "rt.print(l:bucket(67), l:bucket(65), l:bucket(61), ' ')\n"
	      "local n = 0 for i, c in l:buckets() do n = n + 1 if c > 0 then rt.print(i, ':', c, ' ') end end\n"
	      "rt.print(n)",
	      "12112 0:1 1:2 2:1 3:1 4:2 5:0 210 63:1 65:1 67:2 128", "");
	check("one aggregate with a linear and a log histogram",
	      "local s = rt.stat{hists = {{'linear', 0, 4, 2}, {'log'}}}\n"
	      "s:push(1) s:push(3) s:push(3)\n"
	      "rt.print(s:bucket_n(1, 1), s:bucket_n(1, 2), s:bucket_n(2, 65), s:bucket_n(2, 66), ' ', s:bucket(2))\n"
	      "rt.print(s:hist_n(2))",
	      "1212 2"
	      "value |-------------------------------------------------- count\n"
	      "    0 |                                                   0\n"
	      "    1 |@                                                  1\n"
	      "    2 |@@                                                 2\n"
	      "    4 |                                                   0\n"
	      "    8 |                                                   0\n"
	      "\n", "");
	check("histogram index out of range is an error",
	      "local s = rt.stat{hist = {'linear', 0, 30, 10}} s:push(1) s:bucket(6, \"operator '[' at t.stp:1:2\")",
	      "", "ERROR: histogram index out of range near operator '[' at t.stp:1:2\n");
	check("histograms inside an array",
	      "local a = rt.map{name = 'a', keys = {'string'}, value = 'stat', hist = {'linear', 0, 2, 1}}\n"
	      "a:push('x', 0) a:push('x', 1) a:push('x', 1)\n"
	      "rt.print(a:get('x'):hist())",
	      "value |-------------------------------------------------- count\n"
	      "    0 |@                                                  1\n"
	      "    1 |@@                                                 2\n"
	      "    2 |                                                   0\n"
	      "\n", "");
}

/* ---- errors, limits, sessions ---- */

static void test_errors(void)
{
	check("error() is stap's ERROR with its location",
	      "rt.print('a') rt.error('boom', \"identifier 'error' at t.stp:1:1\") rt.print('b')",
	      "a", "ERROR: boom near identifier 'error' at t.stp:1:1\n");
	check("try/catch gets the bare message and continues",
	      "local ok, e = pcall(function() rt.div(1, 0, \"operator '/' at t.stp:1:1\") end)\n"
	      "if not ok then rt.println('caught: ', rt.catch(e)) end\n"
	      "ok, e = pcall(rt.error, 'mine') rt.println('caught: ', rt.catch(e))",
	      "caught: division by 0\ncaught: mine\n", "");
	struct mt_lua_options o = opts();
	o.maxaction = 10;
	check_opts("MAXACTION exceeded stops an endless loop", o,
		   "rt.print('x') while true do end", "x", "ERROR: MAXACTION exceeded\n");
	check_opts("MAXACTION: the line map gives the location; catch cannot stop it", o,
		   "rt.linemap{[5] = \"keyword at t.stp:2:3\"}\n"
		   "local ok, e = pcall(function()\n"
		   "  while true do end\n"
		   "end)\n"
		   "rt.print('caught ', rt.catch(e))",
		   "", "ERROR: MAXACTION exceeded near keyword at t.stp:2:3\n");
	check_opts("MAXACTION allows a short handler", o,
		   "rt.print('ok')", "ok", "");
	check("MAXACTION counted by the script itself (rt.count_actions)",
	      "rt.count_actions(true) local act = rt.MAXACTION\n"
	      "for i = 1, 5000 do act = act - 1 if act < 0 then rt.maxaction(\"keyword at t.stp:7:1\") end end",
	      "", "ERROR: MAXACTION exceeded near keyword at t.stp:7:1\n");
	o = opts();
	o.maxmemory = 4 << 20;
	o.maxaction = -1;
	check_opts("maxmemory: a growing script fails with out of memory, not the process", o,
		   "local t = {} for i = 1, 10000000 do t[i] = i end",
		   "", "ERROR: out of memory\n");
	check("MAXNESTING exceeded in a recursion",
	      "local function f(n) rt.nest(\"identifier 'f' at t.stp:1:10\") if n > 0 then f(n - 1) end rt.unnest() end\n"
	      "f(5) rt.print('five ') f(20)",
	      "five ", "ERROR: MAXNESTING exceeded near identifier 'f' at t.stp:1:10\n");
	check("a Lua error (translator bug) is an ERROR too, with the line map",
	      "rt.linemap{[4] = \"identifier 'x' at t.stp:9:9\"}\n"
	      "local x = nil; x.y = 1",
	      "", "ERROR: t.lua:4: attempt to index a nil value (local 'x') near identifier 'x' at t.stp:9:9\n");
	check("warn goes to the error stream, log is flushed at once",
	      "rt.warn('careful') rt.log('line')",
	      "line\n", "WARNING: careful\n");
	check("scripts cannot reach io/os/load without -g",
	      "rt.print(type(io), type(os), type(load), type(dofile), ' ', tostring(pcall(require, 'os')))",
	      "nilnilnilnil false", "");
}

static void test_session(void)
{
	struct mt_lua_options o = opts();
	char err[256];
	memset(&sink, 0, sizeof sink);
	struct mt_lua *mt = mt_lua_new(&o);
	const char *chunk =
		"local rt = require 'mtrt'\n"
		"local n = 0\n"
		"rt.probe('hit', function(d) n = n + 1 rt.print(rt.div(10, d)) end)\n"
		"rt.probe('bye', function() rt.exit() rt.print(' bye') end)\n"
		"rt.probe('end', function() rt.print(' end', n) end, {always = true})\n";
	tap_ok(mt && mt_lua_load(mt, chunk, strlen(chunk), "=s.lua", err, sizeof err) == 0,
	       "a chunk registering three handlers loads");
	if (!mt)
		return;
	lua_State *L = mt_lua_state(mt);
	int top0 = lua_gettop(L);
	int hit = mt_lua_handler(mt, "hit"), bye = mt_lua_handler(mt, "bye"), end = mt_lua_handler(mt, "end");
	tap_ok(hit == 0 && bye == 1 && end == 2 && mt_lua_handler(mt, "nope") == -1
	       && mt_lua_handler_count(mt) == 3 && strcmp(mt_lua_handler_name(mt, 1), "bye") == 0,
	       "handlers are found by name");
	lua_pushinteger(L, 5);
	int r1 = mt_lua_run(mt, hit, 1);
	lua_pushinteger(L, 0);
	int r2 = mt_lua_run(mt, hit, 1);
	tap_ok(r1 == MT_LUA_OK && r2 == MT_LUA_ERROR && mt_lua_errors(mt) == 1
	       && mt_lua_stopping(mt) == MT_LUA_STOP_ERRORS && lua_gettop(L) == top0,
	       "MAXERRORS=0: the first error stops the session; the stack is balanced");
	lua_pushinteger(L, 1);
	int r3 = mt_lua_run(mt, hit, 1);
	int r4 = mt_lua_run(mt, end, 0);
	mt_lua_summary(mt);
	tap_ok(r3 == MT_LUA_SKIP && r4 == MT_LUA_OK && lua_gettop(L) == top0
	       && same("output", sink.out, "2 end2")
	       && same("errors", sink.err, "ERROR: division by 0\nWARNING: Number of errors: 1, skipped probes: 0\n"),
	       "after the stop only always-handlers run; summary warning");
	mt_lua_free(mt);

	o.maxerrors = 2;
	o.maxskipped = 2;
	memset(&sink, 0, sizeof sink);
	mt = mt_lua_new(&o);
	mt_lua_load(mt, chunk, strlen(chunk), "=s.lua", err, sizeof err);
	L = mt_lua_state(mt);
	int stops[3];
	for (int i = 0; i < 3; i++) {
		lua_pushinteger(L, 0);
		mt_lua_run(mt, hit, 1);
		stops[i] = mt_lua_stopping(mt);
	}
	tap_ok(stops[0] == 0 && stops[1] == 0 && stops[2] == MT_LUA_STOP_ERRORS,
	       "MAXERRORS=2: the third error stops the session");
	mt_lua_free(mt);

	memset(&sink, 0, sizeof sink);
	mt = mt_lua_new(&o);
	mt_lua_load(mt, chunk, strlen(chunk), "=s.lua", err, sizeof err);
	mt_lua_run(mt, bye, 0);
	int after_exit = mt_lua_stopping(mt);
	lua_pushinteger(mt_lua_state(mt), 1);
	int skipped = mt_lua_run(mt, hit, 1);
	mt_lua_skipped(mt);
	mt_lua_skipped(mt);
	int before = mt_lua_stopping(mt);
	mt_lua_skipped(mt);
	tap_ok(after_exit == MT_LUA_STOP_EXIT && skipped == MT_LUA_SKIP && before == MT_LUA_STOP_EXIT
	       && same("output", sink.out, " bye")
	       && same("errors", sink.err, "ERROR: Skipped too many probes, check MAXSKIPPED or try again with stap -t for more details.\n"),
	       "exit() lets the handler finish and stops the session; MAXSKIPPED");
	mt_lua_free(mt);

	memset(&sink, 0, sizeof sink);
	mt = mt_lua_new(&o);
	tap_ok(mt_lua_load(mt, "x = = 1", 7, "=bad.lua", err, sizeof err) == -1
	       && strstr(err, "bad.lua:1:") != NULL,
	       "a chunk that does not compile is refused with its position (%s)", err);
	tap_ok(mt_lua_load(mt, "require('mtrt').probe('a', print) require('mtrt').probe('a', print)", 67,
			   "=twice.lua", err, sizeof err) == -1 && strstr(err, "registered twice") != NULL,
	       "registering a handler name twice is refused (%s)", err);
	mt_lua_free(mt);
}

static int64_t fake_pid(void *ctx) { return 4242; }

static void test_context(void)
{
	char body[512], want[256], comm[17] = "";
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	snprintf(body, sizeof body, "rt.printd(' ', rt.pid(), rt.tid(), rt.ppid(), rt.uid(), rt.euid(), rt.gid(), rt.execname())");
	snprintf(want, sizeof want, "%d %d %d %d %d %d %s", getpid(), gettid(), getppid(), getuid(), geteuid(), getgid(), comm);
	check("context functions describe the calling thread", body, want, "");

	struct mt_lua_host host = { .pid = fake_pid };
	struct mt_lua_options o = opts();
	o.host = &host;
	snprintf(want, sizeof want, "4242 %d", gettid());
	check_opts("a host hook overrides pid()", o, "rt.print(rt.pid(), ' ', rt.tid())", want, "");

	check("ctime is stap's format, UTC",
	      "rt.println(rt.ctime(0)) rt.println(rt.ctime(1234567890)) rt.println(rt.ctime(-1))",
	      "Thu Jan  1 00:00:00 1970\nFri Feb 13 23:31:30 2009\nWed Dec 31 23:59:59 1969\n", "");
	check("clocks: seconds, ms, us and ns agree; monotonic clock and cycles advance",
	      "local s, ms, us, ns = rt.gettimeofday_s(), rt.gettimeofday_ms(), rt.gettimeofday_us(), rt.gettimeofday_ns()\n"
	      "local a = rt.local_clock_ns() local c = rt.get_cycles() local b = rt.local_clock_ns()\n"
	      "rt.print(ms // 1000 - s <= 1 and us // 1000 - ms <= 1000 and ns // 1000 - us <= 1000000 and s > 1600000000 and 'ok' or 'bad',"
	      " ' ', b >= a and c > 0 and 'ok' or 'bad', ' ', rt.cpu() >= 0 and 'ok' or 'bad')",
	      "ok ok ok", "");
}

int main(void)
{
	tap_plan(79);
	test_printf();
	test_memory();
	test_integers();
	test_strings();
	test_maps();
	test_stats();
	test_hist();
	test_errors();
	test_session();
	test_context();
	if (tap_n != 79)
		tap_diag("planned 79 tests, ran %d", tap_n);
	return tap_done();
}
