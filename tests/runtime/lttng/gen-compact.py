#!/usr/bin/python3
"""gen-compact.py DIR [--plain]: write a CTF trace in the shape of LTTng's kernel
traces, which lttng-tools cannot record here (no lttng-modules): packetized
metadata split mid-token, the compact event header (a 5-bit id and a 27-bit
timestamp that wraps, or id 31 and an extended 32-bit id with a 64-bit
timestamp), and payload bit fields, a big-endian 12-bit field, a 33-bit
signed field, a 2-bit enum, a structure, a two-dimensional array, a
sequence of structures and a variant.  tests/runtime/lttng-read.t compares
marktrace view's reading with babeltrace2's; --plain writes the metadata as
text (a seed for tests/runtime/view-fuzz.t, whose inputs cannot hold NULs
in metadata)."""
import os
import struct
import sys

UUID = bytes(range(0x10, 0x20))
METADATA = '''/* CTF 1.8 */
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
trace {
	major = 1; minor = 8;
	uuid = "10111213-1415-1617-1819-1a1b1c1d1e1f";
	byte_order = le;
	packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; };
};
env { domain = "kernel"; tracer_name = "lttng-modules"; };
clock { name = "monotonic"; freq = 1000000000; offset = 1700000000000000000; };
typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_monotonic_t;
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;
struct packet_context {
	uint64_clock_monotonic_t timestamp_begin;
	uint64_clock_monotonic_t timestamp_end;
	uint64_t content_size;
	uint64_t packet_size;
	unsigned long events_discarded;
	uint32_t cpu_id;
};
struct event_header_compact {
	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
	variant <id> {
		struct { uint27_clock_monotonic_t timestamp; } compact;
		struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended;
	} v;
} align(8);
stream {
	id = 0;
	event.header := struct event_header_compact;
	packet.context := struct packet_context;
	event.context := struct { integer { size = 32; align = 8; signed = 1; } _tid; };
};
event {
	name = "bits"; id = 0; stream_id = 0;
	fields := struct {
		integer { size = 3; align = 1; signed = false; } _a;
		integer { size = 7; align = 1; signed = true; } _b;
		integer { size = 1; align = 1; signed = false; } _flag;
		integer { size = 12; align = 8; signed = false; byte_order = be; base = 16; } _be12;
		integer { size = 33; align = 8; signed = true; } _s33;
		enum : integer { size = 2; align = 1; signed = false; } { ZERO = 0, ONE, TWO, THREE } _e2;
		struct { uint8_t x; integer { size = 16; align = 8; signed = true; } y; } _pt;
		integer { size = 16; align = 8; signed = false; } _m[2][3];
		uint8_t _nrec;
		struct { uint8_t k; string name; } _recs[_nrec];
		enum : uint8_t { INT, STR } _sel;
		variant <_sel> { integer { size = 32; align = 8; signed = true; } INT; string STR; } _val;
	};
};
event { name = "far"; id = 40; stream_id = 0; fields := struct { uint64_t _n; }; };
'''


class Bits:
    """CTF bit packing: little-endian fields fill each byte from its low bit,
    big-endian ones from its high bit (both start on a byte here)."""

    def __init__(self):
        self.bits = []          # (value, big_endian) per stream bit

    def align(self, a):
        while len(self.bits) % a:
            self.bits.append((0, False))

    def int(self, v, size, align=8, be=False):
        self.align(align)
        v &= (1 << size) - 1
        order = range(size - 1, -1, -1) if be else range(size)
        self.bits += [((v >> i) & 1, be) for i in order]

    def string(self, s):
        for b in s.encode() + b'\0':
            self.int(b, 8)

    def data(self):
        self.align(8)
        out = bytearray(len(self.bits) // 8)
        for n, (bit, be) in enumerate(self.bits):
            out[n // 8] |= bit << (7 - n % 8 if be else n % 8)
        return bytes(out)


def event(w, ev, now, prev):
    """ev: (id, time, tid, fields); the header compact when it can be"""
    eid, t, tid, f = ev
    w.align(8)
    if eid < 31 and t - prev < (1 << 27):
        w.int(eid, 5, 1)
        w.int(t & ((1 << 27) - 1), 27, 1)
    else:
        w.int(31, 5, 1)
        w.int(eid, 32)
        w.int(t, 64)
    w.int(tid, 32)
    if eid == 40:
        w.int(f, 64)
        return
    a, b, flag, be12, s33, e2, pt, m, recs, sel, val = f
    w.int(a, 3, 1)
    w.int(b, 7, 1)
    w.int(flag, 1, 1)
    w.int(be12, 12, 8, be=True)
    w.int(s33, 33, 8)
    w.int(e2, 2, 1)
    w.int(pt[0], 8)
    w.int(pt[1], 16)
    for row in m:
        for v in row:
            w.int(v, 16)
    w.int(len(recs), 8)
    for k, name in recs:
        w.int(k, 8)
        w.string(name)
    w.int(sel, 8)
    if sel == 0:
        w.int(val, 32)
    else:
        w.string(val)


def stream(cpu, events):
    body = Bits()
    prev = events[0][1] - 1
    for ev in events:
        event(body, ev, ev[1], prev)
        prev = ev[1]
    head = Bits()
    head.int(0xC1FC1FC1, 32)
    for b in UUID:
        head.int(b, 8)
    head.int(0, 32)
    hsize = 4 + 16 + 4 + 8 * 5 + 4
    content = (hsize + len(body.data())) * 8
    packet = content + 64 * 8
    for v in (events[0][1] - 1, events[-1][1], content, packet, 0):
        head.int(v, 64)
    head.int(cpu, 32)
    return head.data() + body.data() + bytes(64)


def packetize(text, cut):
    out = b''
    for part in (text[:cut], text[cut:]):
        body = part.encode()
        content = (37 + len(body)) * 8
        size = content + 16 * 8
        out += struct.pack('<I16sIII5B', 0x75D11D57, UUID, 0, content, size, 0, 0, 0, 1, 8)
        out += body + bytes(16)
    return out


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    cut = METADATA.index('event_header_compact {') + 10   # mid-token
    with open(os.path.join(d, 'metadata'), 'wb') as f:
        f.write(METADATA.encode() if '--plain' in sys.argv else packetize(METADATA, cut))
    base = 5 << 27     # the clock's low 27 bits wrap between events
    for cpu in (0, 1):
        evs = []
        t = base - 3000 + cpu
        for i in range(6):
            f = (i % 8, -64 + 25 * i, i & 1, 0xabc - i, -(1 << 32) + 7 * i, i % 4,
                 (200 + i, -30000 + i), [[1, 2, 3 + i], [65535 - i, 0, 7]],
                 [(k, 'r%d' % k) for k in range(i % 3)],
                 i % 2, (-5 - i) if i % 2 == 0 else 'v%d' % i)
            evs.append((0, t, 100 + cpu, f))
            t += 1000
            if i == 3:
                t += 10 ** 10           # far apart: an extended header
                evs.append((40, t, 100 + cpu, 1 << 63 | i))
                t += 10
        with open(os.path.join(d, 'stream_%d' % cpu), 'wb') as f:
            f.write(stream(cpu, evs))


main()
