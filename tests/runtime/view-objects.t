#!/bin/sh
# marktrace view reads the object files a trace names (bin_info events) to
# name #p addresses; the trace is its maker's.  A name that is a device
# (/dev/ptmx: its open allocates a terminal; a watchdog's arms it), a FIFO
# (an open waits for a writer) or a link to a device is never opened, not
# even to look; a link to a regular file is followed (libraries are
# links); an ELF file whose symbol table claims 2^32 entries (a sparse
# file: no disk) is refused without allocating for them (view aborted,
# status 134, nothing printed).  Each time: the events printed, a warning,
# status 0.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
CC=${CC:-cc}
command -v python3 > /dev/null || skip_all "python3 needed to write the crafted ELF file"
[ -e /dev/ptmx ] || skip_all "no /dev/ptmx"

# Every open(2) of the viewer not made with O_PATH, logged (an O_PATH open
# runs no driver's open and waits for no FIFO writer).
cat > "$TMP/opens.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void note(const char *path, int flags)
{
	const char *log = getenv("OPENS_LOG");
	char line[4200];
	int fd, n;
	if (!log || (flags & O_PATH))
		return;
	n = snprintf(line, sizeof(line), "%s\n", path);
	fd = ((int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open"))(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
	if (fd >= 0) { write(fd, line, (size_t)n); close(fd); }
}
#define WRAP(name, ...) \
	int name(__VA_ARGS__, int flags, ...) \
	{ \
		va_list ap; mode_t mode; \
		va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); \
		note(path, flags); \
		return CALL; \
	}
#define CALL ((int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open"))(path, flags, mode)
WRAP(open, const char *path)
WRAP(open64, const char *path)
#undef CALL
#define CALL ((int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat"))(dir, path, flags, mode)
WRAP(openat, int dir, const char *path)
WRAP(openat64, int dir, const char *path)
int __open_2(const char *path, int flags) { note(path, flags); return open(path, flags); }
int __open64_2(const char *path, int flags) { note(path, flags); return open(path, flags); }
int __openat_2(int dir, const char *path, int flags) { note(path, flags); return openat(dir, path, flags); }
EOF
$CC -shared -fPIC -o "$TMP/opens.so" "$TMP/opens.c" -ldl > "$TMP/cc.log" 2>&1 ||
	{ cat "$TMP/cc.log" >&2; skip_all "$CC cannot build the open logger"; }

# An object with a function, and a library reached through a link
cat > "$TMP/obj.c" <<'EOF'
int objfunc(int x) { return x * 7; }
EOF
$CC -g -O0 -fPIC -shared -Wl,--build-id -o "$TMP/libobj.so.1.2" "$TMP/obj.c" >> "$TMP/cc.log" 2>&1 ||
	{ cat "$TMP/cc.log" >&2; skip_all "$CC cannot build a shared object"; }
ln -s libobj.so.1.2 "$TMP/libobj.so.1"
off=$(python3 - "$TMP/libobj.so.1.2" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28); shnum, = struct.unpack_from("<H", d, 0x3c)
for i in range(shnum):
    h = shoff + 64 * i
    if struct.unpack_from("<I", d, h + 4)[0] != 2: continue       # SHT_SYMTAB
    off, size, link, _, _, ent = struct.unpack_from("<QQIIQQ", d, h + 24)
    s = shoff + 64 * link; stroff, = struct.unpack_from("<Q", d, s + 24)
    for k in range(size // ent):
        name, info, _, _, value, _ = struct.unpack_from("<IBBHQQ", d, off + ent * k)
        if d[stroff + name:d.index(b"\0", stroff + name)] == b"objfunc": print(value)
EOF
)
bid=$(python3 - "$TMP/libobj.so.1.2" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
i = d.find(b"GNU\0", 0)
while i >= 0:
    namesz, descsz, typ = struct.unpack_from("<III", d, i - 12)
    if namesz == 4 and typ == 3: print(d[i + 4:i + 4 + descsz].hex()); break
    i = d.find(b"GNU\0", i + 1)
EOF
)
[ -n "$off" ] && [ -n "$bid" ] || skip_all "cannot read the test object's symbol or build id"

# The same object, its symbol table claiming 2^32 entries of 24 bytes: the
# file grows (sparsely) to 96 GiB so that the table lies within it.
cp "$TMP/libobj.so.1.2" "$TMP/huge.so"
python3 - "$TMP/huge.so" <<'EOF' || skip_all "cannot write the crafted ELF file"
import os, struct, sys
f = open(sys.argv[1], "r+b"); d = f.read()
shoff, = struct.unpack_from("<Q", d, 0x28); shnum, = struct.unpack_from("<H", d, 0x3c)
for i in range(shnum):
    h = shoff + 64 * i
    if struct.unpack_from("<I", d, h + 4)[0] == 2:
        off, = struct.unpack_from("<Q", d, h + 24)
        f.seek(h + 32); f.write(struct.pack("<Q", (1 << 32) * 24))
        f.truncate(off + (1 << 32) * 24)
EOF

mkfifo "$TMP/fifo"
ln -s /dev/ptmx "$TMP/ptmx-link"
ln -s "$TMP/fifo" "$TMP/fifo-link"

# One object per name, one #p hit inside each
plan 9
{
	echo "trace ."
	echo "marker 0 marktap_statedump:bin_info baddr #p%lu memsz %lu path %s build_id %s"
	echo "marker 1 hit ip #p%lu"
	echo "stream 0"; echo "packet"
	ts=1000 base=1
	for p in /dev/ptmx "$TMP/fifo" "$TMP/ptmx-link" "$TMP/fifo-link" "$TMP/huge.so" "$TMP/libobj.so.1"; do
		id=
		case $p in *.so*) id=$bid ;; esac
		echo "ev $ts marktap_statedump:bin_info 7 7 x $((base << 32)) 1048576 \"$p\" \"$id\""
		ts=$((ts + 1)) base=$((base + 1))
	done
	base=1
	while [ $base -le 6 ]; do
		echo "ev $ts hit 7 7 x $(((base << 32) + off + 4))"
		ts=$((ts + 1)) base=$((base + 1))
	done
} | gen "$TMP/t"
ok $? "a trace whose objects are /dev/ptmx, a FIFO, links to both, a huge ELF and a linked library"

OPENS_LOG=$TMP/opens LD_PRELOAD=$TMP/opens.so timeout 60 "$MT" view --no-delta "$TMP/t" \
	> "$TMP/out" 2> "$TMP/err"
is "$?" "0" "view exits 0 (no abort, no wait on the FIFO)"
is "$(grep -c 'hit: ip=' "$TMP/out")" "6" "every event printed"
is "$(grep -c 'hit: ip=0x[0-9a-f]*$' "$TMP/out")" "5" "the addresses in the objects not read stay bare"
like "$(grep 'hit:' "$TMP/out" | tail -n 1)" '<objfunc\+0x4>$' "a library reached through a link is read"
is "$(grep -c "^$TMP/\(fifo\|ptmx-link\|fifo-link\)\$\|^/dev/ptmx\$" "$TMP/opens")" "0" \
	"no device, FIFO or link to one was opened (only looked at with O_PATH)"
ok $(grep -q "^/proc/self/fd/" "$TMP/opens"; echo $?) "the logger saw the viewer's reopens (it works)"
like "$(grep -c 'a character device; its addresses stay bare' "$TMP/err"):$(grep -c 'a FIFO; its' "$TMP/err")" \
	"^2:2$" "a warning for each device and FIFO, linked or not"
like "$(grep huge.so "$TMP/err")" 'huge.so as an object: its symbol table is too large to read' \
	"a warning for the symbol table of 2^32 entries"
done_testing
