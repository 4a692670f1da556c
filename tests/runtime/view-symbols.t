#!/bin/sh
# marktrace view names the function of a #p address: from the
# marktap_statedump:bin_info events libmarktap writes when it records a
# marker with a pointer field, and the objects' files on disk.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
B=$top_builddir
MT=$B/runtime/marktrace/marktrace
# the viewer under test (view-asan.t runs this again with a sanitizer build)
MTV=${MARKTRACE:-$MT}
LIBMT=$B/runtime/.libs/libmarktap.so
CC=${CC:-cc}
[ -x "$MT" ] && [ -f "$LIBMT" ] || skip_all "build first (make check)"
W=$(mktemp -d "${TMPDIR:-/tmp}/mt-vsym.XXXXXX") || exit 1
trap '[ -n "$KEEP" ] || rm -rf "$W"' EXIT
CFLAGS="-g -O0 -fPIC -I$top_srcdir/runtime/include -Wl,--build-id"
LDMT="-L$B/runtime/.libs -lmarktap -Wl,-rpath,$B/runtime/.libs"

# a library linked at start, one loaded later with dlopen, and a PIE program
cat > "$W/libsym.c" <<'EOF'
int libfunc(int x) { return x * 3 + 1; }
EOF
cat > "$W/libdl.c" <<'EOF'
#include <marktap/marker.h>
int dlfunc(int x) { return x - 1; }
void dl_run(void)
{
	trace_mark(dl_ip, "ip #p%lu", (unsigned long)&dlfunc + 2);
}
EOF
cat > "$W/prog.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <marktap/marker.h>
int libfunc(int);
__attribute__((noinline)) int compute(int x) { return x * 2 + 5; }
static void hit(int i)
{
	trace_mark(sym_ip, "i %d ip #p%lu lib_ip #p%lu data %lx", i,
		   (unsigned long)&compute + 4, (unsigned long)&libfunc + 8,
		   (unsigned long)&compute + 4);
}
int main(int argc, char **argv)
{
	int i, s = 0;
	pid_t child;

	for (i = 0; i < 3; i++) {
		s += compute(i) + libfunc(i);
		hit(i);
	}
	child = fork();
	if (child == 0) {
		hit(100);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	if (argc > 2) {         /* the same pid, a new image (another base) */
		execl("/proc/self/exe", "prog", (char *)NULL);
		return 1;
	}
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		void (*run)(void) = h ? (void (*)(void))dlsym(h, "dl_run") : NULL;
		if (!run) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		run();
	}
	printf("%d\n", s);
	return 0;
}
EOF
$CC $CFLAGS -shared -o "$W/libsym.so" "$W/libsym.c" > "$W/cc.log" 2>&1 &&
$CC $CFLAGS -shared -o "$W/libdl.so" "$W/libdl.c" $LDMT >> "$W/cc.log" 2>&1 &&
$CC $CFLAGS -fPIE -pie -o "$W/prog" "$W/prog.c" -L"$W" -lsym -Wl,-rpath,"$W" $LDMT -ldl >> "$W/cc.log" 2>&1 ||
	{ cat "$W/cc.log" >&2; skip_all "$CC cannot build the test program"; }
plan 32

"$MT" record -q -o "$W/t" -- "$W/prog" "$W/libdl.so" > "$W/prog.out"
ok $? "record the program"
"$MTV" view --statedump --no-delta "$W/t" > "$W/v" 2> "$W/v.err"
ok $? "view exits 0"
like "$(grep "bin_info: .*path=\"$W/prog\"" "$W/v" | head -1)" \
	'baddr=0x[0-9a-f]+ memsz=[1-9][0-9]* path="[^"]*/prog" build_id="[0-9a-f]{40}"$' \
	"a bin_info event for the program: base, size, path, 20-byte build id"
like "$(grep 'sym_ip: i=0 ' "$W/v")" 'ip=0x[0-9a-f]+ <compute\+0x4> lib_ip=0x[0-9a-f]+ <libfunc\+0x8> data=0x[0-9a-f]+$' \
	"#p fields named: the program's function and the library's"
is "$(grep -c 'sym_ip: .*<compute+0x4> lib_ip=0x[0-9a-f]* <libfunc+0x8>' "$W/v")" "4" \
	"every hit, the forked child's too"
ppid=$(sed -n 's/.*prog\[\([0-9]*\)\/.*sym_ip: i=0 .*/\1/p' "$W/v")
cpid=$(sed -n 's/.*prog\[\([0-9]*\)\/.*sym_ip: i=100 .*/\1/p' "$W/v")
ok $([ -n "$cpid" ] && [ "$cpid" != "$ppid" ] && grep -q "prog\[$cpid/.*bin_info:" "$W/v"; echo $?) \
	"the child (another pid) has bin_info events of its own"
like "$(grep 'dl_ip:' "$W/v")" 'ip=0x[0-9a-f]+ <dlfunc\+0x2>$' "a dlopen'ed object's function is named"
is "$(grep 'sym_ip: i=1 ' "$W/v" | sed 's/.* data=//')" \
   "$(grep 'sym_ip: i=1 ' "$W/v" | sed 's/.* ip=\(0x[0-9a-f]*\) .*/\1/')" \
   "a %lx field of the same value stays bare (only #p fields are addresses)"
"$MTV" view --statedump --no-delta --no-symbols "$W/t" > "$W/ns"
is "$(grep -c '<' "$W/ns")" "0" "--no-symbols: bare addresses"
is "$(sed 's/ <[a-z_]*+0x[0-9a-f]*>//g' "$W/v")" "$(cat "$W/ns")" "... and otherwise the same text"

# exec: the process describes its new image (after a statedump:start)
"$MT" record -q -o "$W/x" -- "$W/prog" "$W/libdl.so" exec > /dev/null
ok $? "record a program that execs itself"
"$MTV" view --statedump --no-delta "$W/x" > "$W/xv"
is "$(grep -c 'sym_ip: .*<compute+0x4> lib_ip=0x[0-9a-f]* <libfunc+0x8>' "$W/xv")" "8" \
	"every hit named, before and after exec"
xpid=$(sed -n 's/.*\[\([0-9]*\)\/.*sym_ip: i=0 .*/\1/p' "$W/xv" | head -1)
is "$(grep -c "\[$xpid/.*statedump:start" "$W/xv")" "2" \
	"the process started its list of objects twice (start, exec)"

"$MTV" view --help | grep -q -- --no-symbols
ok $? "--help lists --no-symbols"

if [ -n "$BABELTRACE2" ] && command -v "$BABELTRACE2" > /dev/null; then
	"$BABELTRACE2" "$W/t" > "$W/bt" 2> "$W/bt.err"
	ok $? "babeltrace2 reads the trace with its bin_info events"
	is "$(grep -c 'marktap_statedump:bin_info:.*baddr = 0x.*memsz = [0-9]*, path = "/' "$W/bt")" \
	   "$(grep -c 'marktap_statedump:bin_info:' "$W/v")" "... every one, with its fields"
else
	ok 0 "# SKIP babeltrace2 not installed"
	ok 0 "# SKIP babeltrace2 not installed"
fi

# The program's file is gone: its addresses bare, the library's still named.
mv "$W/prog" "$W/prog.moved"
"$MTV" view --statedump --no-delta "$W/t" > "$W/gone"
ok $? "view with the program's file gone exits 0"
like "$(grep 'sym_ip: i=0 ' "$W/gone")" ' ip=0x[0-9a-f]+ lib_ip=0x[0-9a-f]+ <libfunc\+0x8>' \
	"its address is bare, the library's is still named"

# Another file at the library's path (another build id): not trusted.
echo 'int libfunc(int x) { return x * 5; } int other(void) { return 2; }' > "$W/libsym.c"
$CC $CFLAGS -shared -o "$W/libsym.so" "$W/libsym.c"
"$MTV" view --statedump --no-delta "$W/t" > "$W/rebuilt"
ok $? "view with the library rebuilt exits 0"
like "$(grep 'sym_ip: i=0 ' "$W/rebuilt")" ' lib_ip=0x[0-9a-f]+ data=' \
	"a file whose build id differs from the recorded one leaves the address bare"

# A stripped program: its functions from its separate debug file, found by
# build id under --debug-dir (Debian's -dbgsym layout).
if command -v objcopy > /dev/null && command -v strip > /dev/null && command -v readelf > /dev/null; then
	bid=$(readelf -n "$W/prog.moved" | awk '/Build ID/ { print $3 }')
	mkdir -p "$W/dbg/.build-id/$(echo "$bid" | cut -c1-2)" "$W/nodbg"
	objcopy --only-keep-debug "$W/prog.moved" "$W/dbg/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"
	strip -s -o "$W/prog" "$W/prog.moved"
	is "$(readelf -n "$W/prog" | awk '/Build ID/ { print $3 }')" "$bid" "the stripped program keeps its build id"
	like "$("$MTV" view --statedump --no-delta --debug-dir "$W/nodbg" "$W/t" | grep 'sym_ip: i=0 ')" ' ip=0x[0-9a-f]+ lib_ip=' \
		"stripped, no debug file: its address is bare"
	like "$("$MTV" view --statedump --no-delta --debug-dir "$W/dbg" "$W/t" | grep 'sym_ip: i=0 ')" ' ip=0x[0-9a-f]+ <compute\+0x4> lib_ip=' \
		"... named from the debug file under --debug-dir"
	rm -f "$W/prog"
else
	ok 0 "# SKIP no binutils"
	ok 0 "# SKIP no binutils"
	ok 0 "# SKIP no binutils"
fi

# C++: the function as its source names it (as usymname() shows it)
CXX=${CXX:-c++}
cat > "$W/cxx.cc" <<'EOF'
#include <marktap/marker.h>
namespace ns { __attribute__((noinline)) int sum(int a, int b) { return a + b; } }
int main() { trace_mark(cxx_ip, "ip #p%lu", (unsigned long)(void *)&ns::sum + 4); return ns::sum(1, 2) - 3; }
EOF
if $CXX -g -O0 -fPIE -pie -I"$top_srcdir/runtime/include" -o "$W/cxx" "$W/cxx.cc" $LDMT > "$W/cxx.log" 2>&1; then
	"$MT" record -q -o "$W/cx" -- "$W/cxx" > /dev/null
	like "$("$MTV" view --statedump --no-delta "$W/cx" | grep 'cxx_ip:')" 'ip=0x[0-9a-f]+ <ns::sum\(int, int\)\+0x4>$' \
		"a C++ function is shown demangled"
else
	ok 0 "# SKIP $CXX cannot build a C++ program"
fi

# A trace is untrusted: objects named by it that are a FIFO, a device or not
# ELF are not read (no hang), and a comment calling a string field #p is
# not believed.
GEN=$B/tests/runtime/view/gentrace
mkfifo "$W/fifo"
coff=$(nm "$W/prog.moved" | awk '$3 == "compute" { print $1 }')
sbase=0x400000000
{ echo "trace ."
  echo "marker 0 marktap_statedump:bin_info baddr #p%lu memsz %lu path %s build_id %s"
  echo "marker 1 fs_open fd %d filename %s"
  echo "marker 2 hit ip #p%lu"
  echo "stream 0"; echo "packet"
  echo "ev 1000 marktap_statedump:bin_info 7 7 x 0x1000 65536 \"$W/fifo\" \"\""
  echo "ev 1100 marktap_statedump:bin_info 7 7 x 0x100000 65536 \"/dev/zero\" \"\""
  echo "ev 1200 marktap_statedump:bin_info 7 7 x 0x200000 65536 \"$W/prog.c\" \"\""
  echo "ev 1300 marktap_statedump:bin_info 7 7 x $sbase 65536 \"$W/prog.moved\" \"\""
  echo "ev 2000 fs_open 7 7 x 3 \"/etc/passwd\""
  echo "ev 2500 hit 7 7 x $(printf '0x%x' $((sbase + 0x$coff + 4)))"
  echo "ev 3000 hit 7 7 x 0x1010"
  echo "ev 3001 hit 7 7 x 0x100010"
  echo "ev 3002 hit 7 7 x 0x200010"
} | "$GEN" "$W/h"
ok $? "a hostile trace is generated"
sed -i 's/marktap format: "fd %d filename %s"/marktap format: "fd %d filename #p%lu"/' "$W/h/metadata"
timeout 60 "$MTV" view --statedump --no-delta "$W/h" > "$W/hv" 2> "$W/hv.err"
ok $? "view of it exits 0 (a FIFO, /dev/zero and a text file as objects)"
is "$(grep -c 'hit: ip=0x[0-9a-f]*$' "$W/hv")" "3" "their addresses stay bare"
like "$(grep 'hit:' "$W/hv" | head -1)" '<compute\+0x4>$' "an object of a generated trace is read (no build id: the path is trusted)"
like "$(grep 'fs_open:' "$W/hv")" 'filename="/etc/passwd"$' "a string field the comment calls #p is shown as a string"

# Another user's trace names only files anyone may read: else it would have
# us show the functions of a file only we may read.
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
	chmod 600 "$W/prog.moved"
	chown nobody "$W/h/metadata"
	"$MTV" view --statedump --no-delta "$W/h" > "$W/hf"
	ok $? "view of another user's trace exits 0"
	is "$(grep -c 'hit: ip=0x[0-9a-f]*$' "$W/hf")" "4" "... a file only we may read is not read for it"
	chmod 644 "$W/prog.moved"
	like "$("$MTV" view --statedump --no-delta "$W/h" | grep 'hit:' | head -1)" '<compute\+0x4>$' \
		"... a file anyone may read is"
else
	ok 0 "# SKIP not root (another user's trace)"
	ok 0 "# SKIP not root"
	ok 0 "# SKIP not root"
fi
done_testing
