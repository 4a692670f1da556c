#!/usr/bin/python3
"""ctxwalk.py DIR CTXBYTES - walk the events of a marktap user trace by hand.

An independent check of the compact layout (runtime/core/mt_event.h):
each event is its header (4 bytes, or 11 when the id byte is 255), the
tid, CTXBYTES of --context fields, and the payload, whose fields come
from the "marktap format" comments of the metadata (%d 4 bytes, %lu 8, %s
a NUL-terminated string).  Prints "events N extended E" when every
packet's events end exactly at its content_size, else what went wrong.
"""
import os
import re
import struct
import sys

trace, ctx = sys.argv[1], int(sys.argv[2])
meta = open(os.path.join(trace, "metadata"), encoding="utf-8", errors="replace").read()
fields = {}
for fmt, eid in re.findall(r'marktap format: "([^"]*)" \*/\nevent \{\n[^}]*?id = (\d+);', meta):
    fields[int(eid)] = re.findall(r"%(lu|d|s)", fmt)
events = extended = 0
for name in sorted(os.listdir(trace)):
    if not name.startswith("channel0_"):
        continue
    data = open(os.path.join(trace, name), "rb").read()
    off = 0
    while off < len(data):
        content, size = struct.unpack_from("<QQ", data, off + 48)
        pos, end = off + 84, off + content // 8
        while pos < end:
            if data[pos] == 255:
                eid = struct.unpack_from("<H", data, pos + 1)[0]
                pos += 11
                extended += 1
            else:
                eid = data[pos]
                pos += 4
            pos += 4 + ctx
            if eid not in fields:
                sys.exit("%s: unknown id %d at %d" % (name, eid, pos))
            for f in fields[eid]:
                pos = data.index(b"\0", pos) + 1 if f == "s" else pos + (8 if f == "lu" else 4)
            events += 1
        if pos != end:
            sys.exit("%s: packet at %d: events end at %d, content at %d" % (name, off, pos, end))
        off += size // 8
print("events %d extended %d" % (events, extended))
