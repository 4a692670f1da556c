#!/usr/bin/python3
"""lttng-kernel.py DIR: write a small CTF trace under lttng-modules' kernel
event names and fields (sched_switch, sched_waking, syscall_entry_NAME and
syscall_exit_NAME, irq_handler_entry/exit, softirq_raise/entry/exit), with
the pid, tid and procname context lttng-analyses asks for, on two CPUs.
`lttng-kernel.py DIR freq` writes another trace, of durations chosen for
the frequency and period analyses (freq() below), on one CPU, and
`lttng-kernel.py DIR many` one of 3000 distinct durations (many()).
This machine has no lttng-modules to record one.  Times are in
microseconds here, nanoseconds in the trace; lttng-analyses.t knows what
the analyses must make of it."""
import os
import struct
import sys

UUID = bytes(range(0x20, 0x30))
HEAD = '''/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
typealias integer { size = 64; align = 8; signed = true; } := int64_t;
typealias integer { size = 8; align = 8; signed = false; encoding = UTF8; } := char_t;
trace {
	major = 1; minor = 8;
	uuid = "20212223-2425-2627-2829-2a2b2c2d2e2f";
	byte_order = le;
	packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; };
};
env { domain = "kernel"; tracer_name = "lttng-modules"; tracer_major = 2; tracer_minor = 13; };
clock { name = "monotonic"; freq = 1000000000; offset = 1700000000000000000; };
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;
stream {
	id = 0;
	event.header := struct { uint32_t id; uint64_clock_monotonic_t timestamp; };
	packet.context := struct {
		uint64_clock_monotonic_t timestamp_begin;
		uint64_clock_monotonic_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
		uint64_t events_discarded;
		uint32_t cpu_id;
	};
	event.context := struct { int32_t _pid; int32_t _tid; char_t _procname[17]; };
};
'''

# name: [(field, kind)]; kinds: i32 i64 u32 u64 comm (char[16]) str
EVENTS = {
    'sched_switch': [('prev_comm', 'comm'), ('prev_tid', 'i32'), ('prev_prio', 'i32'),
                     ('prev_state', 'i64'), ('next_comm', 'comm'), ('next_tid', 'i32'),
                     ('next_prio', 'i32')],
    'sched_waking': [('comm', 'comm'), ('tid', 'i32'), ('prio', 'i32'), ('target_cpu', 'i32')],
    'syscall_entry_read': [('fd', 'u32'), ('buf', 'u64'), ('count', 'u64')],
    'syscall_exit_read': [('ret', 'i64'), ('buf', 'u64')],
    'syscall_entry_openat': [('dfd', 'i32'), ('filename', 'str'), ('flags', 'i32'), ('mode', 'u32')],
    'syscall_exit_openat': [('ret', 'i64')],
    'irq_handler_entry': [('irq', 'i32'), ('name', 'str')],
    'irq_handler_exit': [('irq', 'i32'), ('ret', 'i32')],
    'softirq_raise': [('vec', 'u32')],
    'softirq_entry': [('vec', 'u32')],
    'softirq_exit': [('vec', 'u32')],
}
TYPES = {'i32': 'int32_t', 'i64': 'int64_t', 'u32': 'uint32_t', 'u64': 'uint64_t',
         'str': 'string'}
PACK = {'i32': '<i', 'i64': '<q', 'u32': '<I', 'u64': '<Q'}
IDS = {name: i for i, name in enumerate(EVENTS)}


def metadata():
    text = HEAD
    for name, fields in EVENTS.items():
        decl = ' '.join('char_t _%s[16];' % f if k == 'comm' else '%s _%s;' % (TYPES[k], f)
                        for f, k in fields)
        text += 'event { name = "%s"; id = %d; stream_id = 0; fields := struct { %s }; };\n' % (
            name, IDS[name], decl)
    return text


def encode(ev):
    """ev: (time_us, name, (pid, tid, procname), {field: value})"""
    t, name, (pid, tid, comm), values = ev
    out = struct.pack('<IQ', IDS[name], t * 1000)
    out += struct.pack('<ii', pid, tid) + comm.encode().ljust(17, b'\0')
    for f, k in EVENTS[name]:
        v = values[f]
        if k == 'comm':
            out += v.encode().ljust(16, b'\0')
        elif k == 'str':
            out += v.encode() + b'\0'
        else:
            out += struct.pack(PACK[k], v)
    return out


def stream(cpu, events):
    """One packet: the header and context, then the events (every type is
    byte-aligned: align = 8 bits, no padding between them)."""
    body = b''.join(encode(ev) for ev in events)
    hsize = 4 + 16 + 4 + 8 * 5 + 4
    content = (hsize + len(body)) * 8
    packet = content + 64 * 8
    head = struct.pack('<I16sI', 0xC1FC1FC1, UUID, 0)
    head += struct.pack('<QQQQQI', events[0][0] * 1000, events[-1][0] * 1000, content, packet, 0, cpu)
    return head + body + bytes(64)


APP = (100, 100, 'app')
WORKER = (100, 200, 'worker')
APP2 = (300, 300, 'app2')


def idle(cpu):
    return (0, 0, 'swapper/%d' % cpu)


def switch(t, ctx, prev, prev_tid, state, nxt, next_tid):
    return (t, 'sched_switch', ctx, {'prev_comm': prev, 'prev_tid': prev_tid, 'prev_prio': 20,
                                     'prev_state': state, 'next_comm': nxt, 'next_tid': next_tid,
                                     'next_prio': 20})


def syscall(t, ctx, name, ret, took, **args):
    entry = dict(args)
    exit = {'ret': ret}
    if name == 'read':
        exit['buf'] = args['buf']
    return [(t, 'syscall_entry_' + name, ctx, entry), (t + took, 'syscall_exit_' + name, ctx, exit)]


CPU0 = [switch(1000, idle(0), 'swapper/0', 0, 0, 'app', 100)] + \
    syscall(2000, APP, 'read', 10, 500, fd=3, buf=0x1000, count=10) + \
    syscall(3000, APP, 'openat', -2, 400, dfd=-100, filename='/nonexistent', flags=0, mode=0) + [
    (4000, 'irq_handler_entry', APP, {'irq': 19, 'name': 'eth0'}),
    (4300, 'irq_handler_exit', APP, {'irq': 19, 'ret': 1}),
    (5000, 'softirq_raise', APP, {'vec': 3}),
    (5100, 'softirq_entry', APP, {'vec': 3}),
    (5600, 'softirq_exit', APP, {'vec': 3}),
    (6000, 'sched_waking', APP, {'comm': 'worker', 'tid': 200, 'prio': 20, 'target_cpu': 0}),
    switch(7000, APP, 'app', 100, 1, 'worker', 200)] + \
    syscall(9000, WORKER, 'read', 0, 800, fd=4, buf=0x2000, count=64) + [
    switch(10000, WORKER, 'worker', 200, 1, 'swapper/0', 0)]

CPU1 = [switch(1500, idle(1), 'swapper/1', 0, 0, 'app2', 300)] + \
    syscall(2200, APP2, 'read', 4, 1000, fd=0, buf=0x3000, count=4) + [
    (4000, 'irq_handler_entry', APP2, {'irq': 19, 'name': 'eth0'}),
    (4200, 'irq_handler_exit', APP2, {'irq': 19, 'ret': 1}),
    switch(8000, APP2, 'app2', 300, 1, 'swapper/1', 0),
    (8500, 'sched_waking', idle(1), {'comm': 'app2', 'tid': 300, 'prio': 20, 'target_cpu': 1}),
    switch(9100, idle(1), 'swapper/1', 0, 0, 'app2', 300),
    switch(9900, APP2, 'app2', 300, 1, 'swapper/1', 0)]


def freq():
    """IRQ 19's handler runs 10, 20, ... 100 us; the TIMER softirq 5 us
    three times; read takes 100, 200 and 300 us, write 50, getpid 7;
    worker waits 100 us for the CPU after its wake-up, app2 300."""
    EVENTS['syscall_entry_write'] = [('fd', 'u32'), ('buf', 'u64'), ('count', 'u64')]
    EVENTS['syscall_exit_write'] = [('ret', 'i64')]
    EVENTS['syscall_entry_getpid'] = []
    EVENTS['syscall_exit_getpid'] = [('ret', 'i64')]
    IDS.update({name: i for i, name in enumerate(EVENTS)})
    events = [switch(1000, idle(0), 'swapper/0', 0, 0, 'app', 100)]
    for i in range(10):
        t = 2000 + 200 * i
        events += [(t, 'irq_handler_entry', APP, {'irq': 19, 'name': 'eth0'}),
                   (t + 10 * (i + 1), 'irq_handler_exit', APP, {'irq': 19, 'ret': 1})]
    for t in (5000, 5100, 5200):
        events += [(t, 'softirq_entry', APP, {'vec': 1}), (t + 5, 'softirq_exit', APP, {'vec': 1})]
    for i, took in enumerate((100, 200, 300)):
        events += syscall(6000 + 1000 * i, APP, 'read', 1, took, fd=3, buf=0x1000, count=1)
    events += syscall(9000, APP, 'write', 1, 50, fd=1, buf=0x1000, count=1)
    events += syscall(9500, APP, 'getpid', 100, 7)
    events += [(10000, 'sched_waking', APP, {'comm': 'worker', 'tid': 200, 'prio': 20, 'target_cpu': 0}),
               switch(10100, APP, 'app', 100, 1, 'worker', 200),
               (10500, 'sched_waking', WORKER, {'comm': 'app2', 'tid': 300, 'prio': 20, 'target_cpu': 0}),
               switch(10800, WORKER, 'worker', 200, 1, 'app2', 300)]
    return [events]


def many():
    """IRQ 19's handler runs 3000 times, for 1, 2 ... 3000 us: more
    distinct durations than a live session's map may hold."""
    events = []
    for i in range(3000):
        t = 1000 + 3001 * i
        events += [(t, 'irq_handler_entry', APP, {'irq': 19, 'name': 'eth0'}),
                   (t + i + 1, 'irq_handler_exit', APP, {'irq': 19, 'ret': 1})]
    return [events]


def main():
    d = sys.argv[1]
    cpus = {'freq': freq, 'many': many}[sys.argv[2]]() if sys.argv[2:] else (CPU0, CPU1)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'metadata'), 'w') as f:
        f.write(metadata())
    for cpu, events in enumerate(cpus):
        with open(os.path.join(d, 'channel0_%d' % cpu), 'wb') as f:
            f.write(stream(cpu, events))


main()
