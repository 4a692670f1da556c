#!/usr/bin/python3
"""canon.py bt|mt < TEXT: one comparable line per event of babeltrace2's
text (bt) or `marktrace view --no-delta` (mt) output:
    TIME NAME cpu=C pid=P tid=T procname='x' {field: value, ...}
Values, not their spelling: numbers as numbers (hex and decimal alike),
floats to 6 significant digits, strings unescaped, arrays as lists, enums as
(label, value), structures as dicts, variants as ('variant', value).  Used by tests/runtime/lttng-read.t."""
import re
import sys


class Parser:
    def __init__(self, s, pos=0):
        self.s, self.i = s, pos

    def peek(self, t):
        return self.s.startswith(t, self.i)

    def eat(self, t):
        if not self.peek(t):
            raise ValueError("expected %r at %r" % (t, self.s[self.i:self.i + 30]))
        self.i += len(t)

    def string(self):
        self.eat('"')
        out = []
        while self.s[self.i] != '"':
            c = self.s[self.i]
            if c == '\\':
                n = self.s[self.i + 1]
                if n == 'x':
                    out.append(chr(int(self.s[self.i + 2:self.i + 4], 16)))
                    self.i += 4
                    continue
                out.append({'n': '\n', 't': '\t'}.get(n, n))
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        self.i += 1
        return ''.join(out)

    def bare(self):
        m = re.compile(r'[^ ,\]})]+').match(self.s, self.i)
        self.i = m.end()
        tok = m.group(0)
        if re.fullmatch(r'-?(0[xX][0-9a-fA-F]+|\d+)', tok):
            return int(tok, 0)
        if re.fullmatch(r'-?(\d+\.?\d*([eE][-+]?\d+)?|inf|nan)', tok):
            return '%.6g' % float(tok)
        return tok

    def struct(self):
        self.eat('{ ')
        d = {}
        if self.peek('}'):
            self.eat('}')
            return d
        if not re.compile(r'[^ =]+ = ').match(self.s, self.i):
            v = self.value()            # a variant: { VALUE }
            self.eat(' }')
            return ('variant', v)
        self.i -= 1
        while not self.peek(' }'):
            self.eat(' ' if not d else ', ')
            k = re.compile(r'[^ =]+').match(self.s, self.i).group(0)
            self.i += len(k)
            self.eat(' = ')
            d[k] = self.value()
        self.eat(' }')
        return d

    def value(self):
        if self.peek('"'):
            return self.string()
        if self.peek('[ ]'):
            self.eat('[ ]')
            return []
        if self.peek('[ '):
            self.eat('[')
            out = []
            while not self.peek(' ]'):
                self.eat(' ' if not out else ', ')
                self.eat('[%d] = ' % len(out))
                out.append(self.value())
            self.eat(' ]')
            return out
        if self.peek('( '):
            self.eat('( ')
            label = self.string() if self.peek('"') else (self.eat('<unknown>') or None)
            self.eat(' : container = ')
            v = self.bare()
            self.eat(' )')
            return ('enum', label, v)
        if self.peek('{'):
            return self.struct()
        return self.bare()


TAKEN = ('pid', 'vpid', 'tid', 'vtid', 'procname')


def emit(time, name, cpu, ctx, fields, other=None):
    pid = ctx.get('pid', ctx.get('vpid', -1))
    tid = ctx.get('tid', ctx.get('vtid', -1))
    if other is None:   # babeltrace2's event context: the rest of it
        other = {k: v for k, v in ctx.items() if k not in TAKEN}
    print('%s %s cpu=%s pid=%s tid=%s procname=%r %r%s' %
          (time, name, cpu, pid, tid, ctx.get('procname', ''), fields,
           ' ctx=%r' % other if other else ''))


BT = re.compile(r'^\[(\S+)\] (?:\(\S+\) )?\S+ (\S+): (.*)$')
MT = re.compile(r'^\[(\S+)\] (?:\(\S+\) )?cpu(\d+) (.*?)\[(\d+|\?)/(\d+|\?)\] (\S+?)(?:: (.*))?$')


def main():
    mode = sys.argv[1]
    for line in sys.stdin:
        line = line.rstrip('\n')
        if mode == 'bt':
            m = BT.match(line)
            if not m:
                continue
            p = Parser(m.group(3))
            scopes = [p.struct()]
            while p.peek(', '):
                p.eat(', ')
                scopes.append(p.struct())
            # { packet context }, { event context }, { payload }
            cpu = scopes[0].get('cpu_id', -1)
            ctx = scopes[1] if len(scopes) == 3 else {}
            emit(m.group(1), m.group(2), cpu, ctx, scopes[-1])
        else:
            m = MT.match(line)
            if not m or m.group(6) == 'lost':
                continue
            fields, other = {}, {}
            p = Parser(m.group(7) or '')
            into = fields
            while p.i < len(p.s):
                if p.peek('{ctx '):     # the other context fields: {ctx k=v ...}
                    p.eat('{ctx ')
                    into = other
                if p.peek('}') and into is other:
                    p.eat('}')
                    continue
                k = re.compile(r'[^=]+').match(p.s, p.i).group(0)
                p.i += len(k) + 1
                into[k] = p.value()
                if p.peek(' '):
                    p.eat(' ')
            # '?': the trace does not say (babeltrace2's reading: absent)
            ctx = {'pid': int(m.group(4).replace('?', '-1')), 'tid': int(m.group(5).replace('?', '-1'))}
            if m.group(3):
                ctx['procname'] = m.group(3)
            emit(m.group(1), m.group(6), m.group(2), ctx, fields, other)


main()
