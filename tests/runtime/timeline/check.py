#!/usr/bin/python3
"""check.py - read what `marktrace timeline` and `marktrace export` wrote,
for timeline.t and timeline-guest.t (Python's standard library only).

  check.py html FILE.html      the embedded data: one line per row
                               "SECTION|LABEL|STATES|TICKS" (states drawn, events ticked),
                               "name I NAME" and "colour NAME #rrggbb" per marker
  check.py svg FILE.svg        parse as XML; "LABEL|COLOURS" per row text
  check.py png FILE.png X0 MINH NAME=#rrggbb...   pixels of each colour
                               right of x = X0, and the number of bands
                               (runs of at least MINH pixel rows) holding any
  check.py chrome FILE.json    validate trace-event JSON; print
                               "tracks N", "overlaps N", then counts per
                               (thread name, phase, name)
  check.py slices FILE.json    the X slices: "TRACK|NAME|TS|DUR" sorted, TRACK
                               being the thread name (metadata) of the track
  check.py hostile FILE.json FILE.html FILE.svg NAME STRING...
                               the thread name and the strings as each file
                               holds them, compared with what they should be
"""
import os
import json
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib


def html(path):
    text = open(path, encoding="utf-8").read()
    # the data block must end at its own </script>: a name from the trace
    # holding "</script>" would end it early and break the JSON
    m = re.search(r'<script type="application/json" id="data">\n(.*?)\n</script>', text, re.S)
    if not m:
        sys.exit("no data block")
    data = json.loads(m.group(1))
    print("scripts %d" % text.count("</script>"))
    print("span %d" % data["span"])
    for sec in data["sections"]:
        for r in sec["rows"]:
            states = sorted({data["states"][s] for s in r["p"][1::3] if s})
            ticks = sum(r["k"][1::3])
            print("%s|%s|%s|%d" % ("cpu" if sec["cpu"] else "thread", r["label"], ",".join(states), ticks))
    for i, n in enumerate(data["names"]):
        print("name %d %s" % (i, n))
    for n, c in zip(data["names"], data["ncolors"]):
        print("colour %s %s" % (n, c))


def svg(path):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    fills = {}
    for el in root.iter(ns + "rect"):
        fills[el.get("fill")] = fills.get(el.get("fill"), 0) + 1
    for el in root.iter(ns + "text"):
        print("text|%s" % el.text)
    for f in sorted(fills):
        print("fill|%s|%d" % (f, fills[f]))


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                sys.exit("PNG kind not handled: depth %d colour type %d interlace %d" % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def png(path, x0, minh, wanted):
    w, h, bpp, rows = png_pixels(path)
    colours = {}
    for spec in wanted:
        name, hexa = spec.split("=")
        colours[bytes.fromhex(hexa.lstrip("#"))] = name
    count = {name: 0 for name in colours.values()}
    band_rows = []
    for y, line in enumerate(rows):
        hits = 0
        for x in range(x0 * bpp, w * bpp, bpp):
            name = colours.get(bytes(line[x:x + 3]))
            if name:
                count[name] += 1
                hits += 1
        band_rows.append(hits >= 1)
    # a band: a run of picture rows holding those colours, as tall as a
    # timeline row (16 pixels, ticks 8) and not the legend's 12-pixel boxes
    bands, run = 0, 0
    for y in range(h + 1):
        if y < h and band_rows[y]:
            run += 1
            continue
        bands += run >= minh
        run = 0
    print("size %dx%d" % (w, h))
    for name in sorted(count):
        print("colour %s %d" % (name, count[name]))
    print("bands %d" % bands)


def chrome(path):
    doc = json.load(open(path, encoding="utf-8"))
    events = doc["traceEvents"]
    names, tracks = {}, {}
    for e in events:
        for key in ("ph", "pid", "tid"):
            if key not in e:
                sys.exit("event without %s: %r" % (key, e))
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    counts, overlaps = {}, 0
    for e in events:
        if e["ph"] == "X":
            if e["dur"] < 0:
                sys.exit("negative dur: %r" % e)
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        if e["ph"] in ("X", "i"):
            who = names.get((e["pid"], e["tid"]), "?")
            key = (who, e["ph"], re.sub(r" \d+$", " N", e["name"]) if e["ph"] == "X" else e["name"])
            counts[key] = counts.get(key, 0) + 1
    for slices in tracks.values():
        slices.sort()
        for (a0, a1), (b0, b1) in zip(slices, slices[1:]):
            if b0 < a1 - 0.0015:
                overlaps += 1
    print("tracks %d" % len(tracks))
    print("overlaps %d" % overlaps)
    for key in sorted(counts):
        print("%s|%s|%s|%d" % (key + (counts[key],)))


def slices(path):
    d = json.load(open(path, encoding="utf-8"))
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    rows = sorted((names.get((e["pid"], e["tid"]), "?"), e["ts"], e["name"], e["dur"])
                  for e in d["traceEvents"] if e["ph"] == "X")
    for r in rows:
        print("%s|%s|%.3f|%.3f" % (r[0], r[2], r[1], r[3]))


def lead_len(c):
    return 1 if c < 0x80 else 2 if 0xc2 <= c <= 0xdf else 3 if 0xe0 <= c <= 0xef else 4 if 0xf0 <= c <= 0xf4 else 0


def readable(raw, xml):
    """What marktrace should make of bytes raw: valid UTF-8 kept, an invalid
    byte as the text \\xHH; in XML also control characters as \\xHH."""
    out, i = "", 0
    while i < len(raw):
        n = lead_len(raw[i])
        try:
            ch = raw[i:i + n].decode("utf-8") if n else None
        except UnicodeDecodeError:
            ch = None
        if ch is None or len(ch) != 1 or (xml and (ord(ch) < 0x20 or ord(ch) == 0x7f or ord(ch) in (0xfffe, 0xffff))):
            out += "\\x%02x" % raw[i]
            i += 1
        else:
            out += ch
            i += n
    return out


def hostile(json_path, html_path, svg_path, name, strings):
    name = os.fsencode(name)[:15]     # a task's comm holds 15 bytes
    doc = json.load(open(json_path, encoding="utf-8"))
    got = [e["args"]["s"] for e in doc["traceEvents"] if e["name"] == "hostile"]
    want = [readable(os.fsencode(s), False) for s in strings]
    print("json strings %s" % ("same" if got == want else "differ: %r != %r" % (got, want)))
    names = [e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
    print("json name %s" % ("same" if names == [readable(name, False)] else "differ: %r" % names))
    text = open(html_path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="data">\n(.*?)\n</script>', text, re.S)
    labels = [r["label"] for sec in json.loads(m.group(1))["sections"] for r in sec["rows"]]
    ok = len(labels) == 1 and labels[0].startswith(readable(name, False) + " [")
    print("html label %s" % ("same" if ok else "differ: %r" % labels))
    print("html scripts %d" % text.count("</script>"))
    root = ET.parse(svg_path).getroot()
    texts = [el.text for el in root.iter("{http://www.w3.org/2000/svg}text")]
    ok = any(t and t.startswith(readable(name, True) + " [") for t in texts)
    print("svg label %s" % ("same" if ok else "differ: %r" % texts))


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    if what == "html":
        html(path)
    elif what == "svg":
        svg(path)
    elif what == "png":
        png(path, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
    elif what == "chrome":
        chrome(path)
    elif what == "slices":
        slices(path)
    elif what == "hostile":
        hostile(path, sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:])
    else:
        sys.exit("check.py: unknown " + what)
