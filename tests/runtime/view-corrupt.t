#!/bin/sh
# Damaged traces: a clear error naming the file and the byte, exit 1, never
# a crash; the events before the damage are still printed.
. "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib/tap.sh"
. "$top_srcdir/tests/runtime/view/lib.sh"
plan 57

gen "$TMP/good" < "$VIEWDIR/basic.trace"
# Stream 1 of basic.trace: packet 1 at byte 0 (157 bytes: noargs@84,
# fs_open@118), packet 2 at 157 (fs_open@241, its string at 279), packet 3 at 281.
fresh() { rm -rf "$TMP/c" && cp -r "$TMP/good" "$TMP/c"; }

# damaged DESCRIPTION ERROR-REGEX LINES-BEFORE: view must fail
# with exit 1 and that message, after printing exactly LINES-BEFORE lines.
damaged() {
	"$MT" view --no-delta "$TMP/c" > "$TMP/out" 2> "$TMP/err"
	_rc=$?
	is "$_rc" 1 "$1: exit 1"
	like "$(cat "$TMP/err")" "$2" "$1: message"
	is "$(wc -l < "$TMP/out" | tr -d ' ')" "$3" "$1: $3 events before the damage"
}

fresh; put_bytes "$TMP/c/channel0_1" 157 '\001\002\003\004'
damaged "bad magic" "^marktrace: $TMP/c/channel0_1: byte 157: bad packet magic 0x04030201" 4

fresh; truncate -s 260 "$TMP/c/channel0_1"
damaged "truncated file" "channel0_1: byte 157: packet_size 124 bytes runs past the end of the file \\(103 bytes left\\)" 4

fresh; truncate -s 200 "$TMP/c/channel0_1"
damaged "truncated packet header" "channel0_1: byte 157: truncated packet: 43 bytes left" 4

fresh; put_u64 "$TMP/c/channel0_1" 48 $((158 * 8))
damaged "content_size > packet_size" "channel0_1: byte 0: content_size 1264 bits is larger than packet_size 1256 bits" 0

fresh; put_u64 "$TMP/c/channel0_1" 48 $((147 * 8))
damaged "event past content_size" "channel0_1: byte 118: event runs past the packet content: 29 bytes left" 2

fresh; put_u64 "$TMP/c/channel0_1" 48 $((154 * 8))
damaged "field past content_size" "channel0_1: byte 152: field 'fd' of event 'fs_open' runs past the packet content \\(2 bytes left, it takes 4\\)" 2

fresh; put_bytes "$TMP/c/channel0_1" 84 '\377\000'
damaged "unknown event id" "channel0_1: byte 84: unknown event id 255" 1

fresh; put_bytes "$TMP/c/channel0_1" 280 'y'
damaged "string without NUL" "channel0_1: byte 279: string field 'filename' of event 'fs_open' has no NUL" 6

fresh; put_u64 "$TMP/c/channel0_0" 48 0; put_u64 "$TMP/c/channel0_0" 56 0
damaged "zero packet size" "channel0_0: byte 0: content_size 0 bytes is smaller than the packet header" 0

fresh; printf 'CTF!garbage' > "$TMP/c/channel0_0"
damaged "tiny stream file" "channel0_0: byte 0: truncated packet: 11 bytes left" 0

fresh; sed '0,/name = "fs_open";/s//name = "fs_open"/' "$TMP/good/metadata" > "$TMP/c/metadata"
damaged "metadata syntax" "^marktrace: $TMP/c/metadata:[0-9]+:[0-9]+: expected ';', saw 'id'$" 0

fresh; sed 's/string _filename;/enum : floating_point { exp_dig = 8; mant_dig = 24; } { A, B } _filename;/' "$TMP/good/metadata" > "$TMP/c/metadata"
damaged "metadata enum of strings" "metadata:[0-9]+:[0-9]+: an enum's container is an integer" 0

fresh; sed 's/uint32_t cpu_id;/uint128_t cpu_id;/' "$TMP/good/metadata" > "$TMP/c/metadata"
damaged "metadata unknown type" "metadata:[0-9]+:[0-9]+: unknown type 'uint128_t'" 0

fresh; : > "$TMP/c/metadata"
damaged "empty metadata" "metadata:[0-9]+:[0-9]+: no stream block" 0

fresh; printf '\127\035\321\165rest' > "$TMP/c/metadata"
damaged "packetized metadata cut short" "metadata: byte 0: truncated metadata packet header \\(8 bytes left\\)" 0

fresh; printf '/* CTF 1.8 */\ntrace { major = 1; minor = 8; byte_order = le; /* unterminated' > "$TMP/c/metadata"
damaged "unterminated comment" "metadata:2:[0-9]+: unterminated comment" 0

rm -rf "$TMP/c"
damaged "missing directory" "^marktrace: $TMP/c: No such file or directory$" 0
mkdir -p "$TMP/c/a/b"; : > "$TMP/c/a/b/channel0_0"
damaged "no metadata" "^marktrace: $TMP/c: no CTF trace in it" 0

fresh; put_bytes "$TMP/c/channel0_1" 157 '\001\002\003\004'
"$MT" stats "$TMP/c" > "$TMP/out" 2> "$TMP/err"
is "$?" 1 "stats of a damaged trace: exit 1"
like "$(cat "$TMP/err")" "channel0_1: byte 157: bad packet magic" "stats of a damaged trace: message"

# Random damage must never crash: flip bytes all over both stream files.
fresh
crashes=0 i=0
size0=$(wc -c < "$TMP/good/channel0_0") size1=$(wc -c < "$TMP/good/channel0_1")
while [ $i -lt 200 ]; do
	cp "$TMP/good/channel0_0" "$TMP/c/channel0_0"
	cp "$TMP/good/channel0_1" "$TMP/c/channel0_1"
	put_bytes "$TMP/c/channel0_0" $((i * 7 % size0)) "\\$(printf %03o $((i * 37 % 256)))"
	put_bytes "$TMP/c/channel0_1" $((i * 13 % size1)) "\\$(printf %03o $((i * 91 % 256)))"
	"$MT" view "$TMP/c" > /dev/null 2>&1
	rc=$?
	[ $rc -le 1 ] || { crashes=$((crashes + 1)); diag "flip $i: exit $rc"; }
	i=$((i + 1))
done
is "$crashes" 0 "200 byte flips: exit 0 or 1, no crash"
done_testing
