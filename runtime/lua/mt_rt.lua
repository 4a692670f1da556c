-- mt_rt.lua - the Lua half of the "mtrt" module: stap's associative
-- arrays, statistics and histogram charts.  Compiled into libmtlua; runs
-- once per state with the module table (already holding the C functions).
--
-- Maps keep their entries in Lua tables, with a doubly linked list of keys
-- for stap's insertion order:
--
--   vals[k] = value          k: the key itself (arity 1) or the composite
--   nxt[k], prv[k]           key "k1\0k2\0..." made by m:key(...)
--   head ... tail            oldest ... newest
--
-- A composite key is decoded back into typed columns only when iterating,
-- so the hot path (a[k] += 1) costs one string concatenation at most.

local rt = ...
local strcmp, raise = rt.strcmp, rt.error
local tonumber, tostring, setmetatable, type = tonumber, tostring, setmetatable, type
local concat, sort, unpack = table.concat, table.sort, table.unpack
local srep, sfind, ssub = string.rep, string.find, string.sub

-- guru mode's store to a kernel function probe's registers: marktap.ko's
-- (mt_lua_lib.c); anywhere else, stap's kind of error
rt.kernel_store = rt.kernel_store or function(_, _, where)
  raise("a kernel function's registers can only be written in kernel handlers", where)
end

-- a system call's arguments, from the registers saved at its entry:
-- marktap.ko's (mt_lua_lib.c); recorded events carry the number only
rt.syscall_arg = rt.syscall_arg or function()
  raise("system call arguments are read by handlers in marktap.ko only: "
        .. "kernel_arch_syscall_entry events carry the call number, not its arguments")
end

-- guru mode's store to a system call's argument, before the call reads
-- it: marktap.ko's (mt_lua_lib.c)
rt.syscall_store = rt.syscall_store or function(_, _, where)
  raise("a system call's arguments can only be written by handlers in marktap.ko", where)
end

-- a hit's kernel stack: marktap.ko saves it for its handlers (mt_kstack.c);
-- a perf sample's (timer.profile) is its callchain, which marktap keeps
-- for the sample's handler (rt.sample_kbacktrace, translator/run.c)
rt.kbacktrace = rt.kbacktrace or function()
  local s = rt.sample_kbacktrace and rt.sample_kbacktrace()
  if s then return s end
  raise("backtrace: kernel stacks are saved for handlers in marktap.ko and perf samples "
        .. "(timer.profile) only; recorded events and traced processes have none")
end
-- a perf sample's user stack, from its callchain; a traced process's
-- host gives its own
rt.ubacktrace = rt.ubacktrace or function()
  return rt.sample_ubacktrace and rt.sample_ubacktrace() or ""
end

-- $p->a[i], @cast(p, "T")->a[i] with i no number (translator/btf.c):
-- the bytes the address moves, i elements of size bytes; an index past
-- a fixed-size array's count elements stops the handler (stap reads on,
-- whatever lies there), a pointer's or a flexible array's (count 0) is
-- unbounded.  The read itself stays kernel_read's, which never faults.
function rt.kernel_index(i, size, count, where)
  if count > 0 and (i < 0 or i >= count) then
    raise("kernel array index " .. i .. " is out of bounds: the array has " .. count .. " elements", where)
  end
  return i * size
end

-- A char pointer in a pretty-printed kernel value ($p$, $$parms$): its
-- string quoted as string_quoted does, or its address where it cannot be
-- read (NULL, a user pointer, no right to kernel memory)
function rt.pretty_kstring(addr)
  if addr ~= 0 and rt.kernel_string then
    local ok, s = pcall(rt.kernel_string, addr, nil, "pretty printing")
    if ok then return rt.text_strn(s, 0, 1) end
    rt.catch(s)   -- what must end the handler (MAXACTION, fatal) goes on
  end
  return string.format("0x%x", addr)
end

-- stap's floating point (tapsets/floatingpoint.stp): mt_lua_fp.c's, on C
-- doubles; marktap.ko's Lua has integers alone
for _, name in ipairs { "fp_add", "fp_sub", "fp_mul", "fp_div", "fp_rem", "fp_sqrt", "fp_cmp", "long_to_fp",
                        "fp32_to_fp64", "fp_to_long", "fp_to_string", "string_to_fp" } do
  rt[name] = rt[name] or function()
    raise(name .. ": floating point runs in user space only (marktap.ko's Lua has integers alone)")
  end
end

-- guru mode's stores into the traced process's memory (stap's set_user_*):
-- mt_lua_ctx.c's user_write, in the handlers that run in that process;
-- marktap's own handlers (those given rt.system) and marktap.ko's have
-- no process to write to
local user_write = rt.user_write
function rt.user_store(addr, size, v, what)
  if not user_write or rt.system then
    raise("set_user_" .. what .. ": only handlers that run in the traced process can write its memory")
  end
  return user_write(addr, size, v, what)
end

-- $value .= s in a procfs read probe with .maxsize(max): its file's
-- buffer bounds it (stap's), not MAXSTRINGLEN (translator/gen_expr.c)
function rt.procfs_cat(a, b, max)
  local s = a .. b
  if #s > max then s = s:sub(1, max) end
  return s
end

-- stap's *_string_utf16 and *_string_utf32: the UTF-8 of the string of
-- size-byte units (2 or 4) at addr, up to its 0 unit or as many whole
-- characters as MAXSTRINGLEN - 1 bytes hold.  read(a, size) gives the
-- unit at a, nil when it cannot be read; space names the memory in the
-- errors, which are stap's: "user string copy fault at 0xADDR", and
-- "invalid UTF-16 character U+D800 at 0xADDR" for a unit that is no
-- character (a surrogate not in a pair, past U+10FFFF).  Integers only:
-- marktap.ko runs it too.
function rt.wide_string(read, addr, size, space)
  local kind = size == 2 and "UTF-16" or "UTF-32"
  local out, room = {}, rt.MAXSTRINGLEN - 1
  while room > 0 do
    local c = read(addr, size)
    if not c then
      raise(string.format("%s string copy fault at 0x%x [man error::fault]", space, addr))
    end
    if c == 0 then break end
    if size == 2 and c >= 0xD800 and c <= 0xDBFF then   -- a pair's high half
      local low = read(addr + 2, 2)
      if not low then
        raise(string.format("%s string copy fault at 0x%x [man error::fault]", space, addr + 2))
      end
      if low >= 0xDC00 and low <= 0xDFFF then
        c = 0x10000 + ((c & 0x3FF) << 10) + (low & 0x3FF)
        addr = addr + 2
      end
    end
    if (c >= 0xD800 and c <= 0xDFFF) or c > 0x10FFFF then
      raise(string.format("invalid %s character U+%X at 0x%x", kind, c, addr))
    end
    local ch
    if c < 0x80 then
      ch = string.char(c)
    elseif c < 0x800 then
      ch = string.char(0xC0 | (c >> 6), 0x80 | (c & 0x3F))
    elseif c < 0x10000 then
      ch = string.char(0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F))
    else
      ch = string.char(0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F), 0x80 | ((c >> 6) & 0x3F),
                       0x80 | (c & 0x3F))
    end
    if #ch > room then break end
    out[#out + 1] = ch
    room = room - #ch
    addr = addr + size
  end
  return concat(out)
end

local SEP = "\0"
local ANY = setmetatable({}, { __name = "mtrt.ANY", __tostring = function() return "*" end })
rt.ANY = ANY

-- ---- integers as SystemTap's runtime computes them ------------------------
--
-- Everything below is integer arithmetic: the same code runs on a Lua
-- whose numbers are all integers (marktap.ko).  No '/', no math library.

-- C's division of longs: truncates toward 0; a zero divisor gives 0, as
-- stap's runtime divides inside statistics (_stp_div64 without an error).
local function cdiv(a, b)
  if b == 0 then return 0 end
  if b == -1 then return -a end   -- -mininteger wraps, as in C
  local q = a // b
  if q < 0 and q * b ~= a then q = q + 1 end
  return q
end

-- x >> k on a signed long (the sign fills in), with the count masked to
-- 6 bits as the x86-64 shift instruction masks it.
local function sar(x, k)
  k = k & 63
  if x >= 0 then return x >> k end
  return ~(~x >> k)
end

-- The low 32 bits of x read as a signed int.
local function int32(x)
  return ((x + 0x80000000) & 0xffffffff) - 0x80000000
end

-- Characters of v printed with %d.
local function digits(v)
  return #tostring(v)
end

-- ---- histograms ---------------------------------------------------------
--
-- Buckets are numbered as stap numbers them (@hist_log(s)[i], foreach):
--   linear lo, hi, step: 0 underflow (v < lo), 1 .. nb regular (bucket i
--     starts at lo + (i-1)*step; nb = (hi - lo) / step + 1, so a value
--     equal to hi has its own row), nb + 1 overflow;
--   log: 0 .. 127; 64 counts 0, 64 + n counts [2^(n-1), 2^n), 64 - n the
--     negative values whose magnitude is in that range.

local LOG_BUCKETS, LOG_ZERO = 128, 64
local MAX_BUCKETS = 128   -- stap's STP_MAX_BUCKETS, underflow and overflow included

local function bitlen(u)   -- u: a non-zero value read as unsigned
  local n = 0
  while u ~= 0 do
    u = u >> 1
    n = n + 1
  end
  return n
end

local function log_index(v)
  if v == 0 then return LOG_ZERO end
  if v > 0 then return LOG_ZERO + bitlen(v) end
  return LOG_ZERO - bitlen(-v)   -- -mininteger wraps to itself: bit length 64
end

-- The value a log bucket's row is labelled with.
local function log_low(i)
  if i == LOG_ZERO then return 0 end
  if i > LOG_ZERO then return 1 << (i - LOG_ZERO - 1) end
  return -(1 << (LOG_ZERO - 1 - i))   -- bucket 0: mininteger
end

local function new_hist(spec)
  if spec == nil then return nil end
  if spec[1] == "log" then
    return { kind = "log", first = 0, last = LOG_BUCKETS - 1, index = log_index }
  end
  if spec[1] ~= "linear" then
    error("rt: unknown histogram kind '" .. tostring(spec[1]) .. "'", 3)
  end
  local lo, hi, step = spec[2], spec[3], spec[4]
  if type(lo) ~= "number" or type(hi) ~= "number" or type(step) ~= "number" or step <= 0 then
    error("rt: @hist_linear needs integers lo, hi and step > 0", 3)
  end
  local nb = cdiv(hi - lo, step) + 1
  if nb < 1 or nb > MAX_BUCKETS - 2 then
    error("rt: @hist_linear: the number of buckets must be between 1 and " .. (MAX_BUCKETS - 2), 3)
  end
  local h = { kind = "linear", lo = lo, hi = hi, step = step, nb = nb, first = 0, last = nb + 1 }
  h.index = function(v)
    local d = v - lo   -- wraps as stap's does
    if d < 0 then return 0 end
    d = d // step + 1
    if d > nb then return nb + 1 end
    return d
  end
  return h
end

-- o.hist (one spec) and/or o.hists (a list of specs) -> list of histograms.
local function new_hists(o)
  if o == nil then return nil end
  local list = {}
  if o.hist then list[1] = new_hist(o.hist) end
  for _, spec in ipairs(o.hists or {}) do list[#list + 1] = new_hist(spec) end
  if #list == 0 then return nil end
  return list
end

local BAR = 50   -- stap's HIST_WIDTH

-- The rows stap's chart spans: the non-empty buckets and up to two empty
-- ones on each side (a log chart reaches below 0 only for negative
-- values); a linear chart's underflow and overflow rows only when they
-- count something.  Returns nil for an empty chart.
local function chart_span(h, b)
  local low, high, most = nil, 0, 0
  for i = h.first, h.last do
    local c = b[i] or 0
    if c > 0 then
      low = low or i
      high = i
      if c > most then most = c end
    end
  end
  if not low then return nil end
  for _ = 1, 2 do
    if low > 0 and (h.kind ~= "log" or low ~= LOG_ZERO) then low = low - 1 end
    if high < h.last then high = high + 1 end
  end
  local under, over = 0, 0
  if h.kind == "linear" then
    if low == 0 and (b[0] or 0) == 0 then low = 1 end
    if high == h.last and (b[high] or 0) == 0 then high = high - 1 end
    if low == 0 then under = 1 end
    if high == h.last then over = 1 end
  end
  return low, high, most, under, over
end

-- Width of the value column, as stap computes it (for a linear chart from
-- lo and from the value one step past the last row's start).
local function value_width(h, low, high, under, over)
  local w
  if h.kind == "linear" then
    w = digits(h.lo) + under
    local o = digits(h.lo + h.step * high) + over
    if o > w then w = o end
  else
    w = digits(log_low(high))
    if digits(log_low(low)) > w then w = digits(log_low(low)) end
  end
  if w < 5 then w = 5 end   -- "value"
  return w
end

local function row_label(h, i)
  if h.kind == "log" then return "", log_low(i) end
  if i == 0 then return "<", h.lo end
  if i == h.last then return ">", h.lo + (i - 2) * h.step end
  return "", h.lo + (i - 1) * h.step
end

-- Is row i elided: every bucket within `elision` rows of it (inside the
-- span) empty?  A negative elision keeps every row.
local function elided(b, i, low, high, elision, nbuckets)
  if elision < 0 then return false end
  if elision > nbuckets then elision = nbuckets end
  local s, e = i - elision, i + elision
  if s < low then s = low end
  if e > high then e = high end
  for k = s, e do
    if (b[k] or 0) ~= 0 then return false end
  end
  return true
end

local function chart(h, b, elision)
  local low, high, most, under, over = chart_span(h, b)
  if not low then return "" end
  local scale = 1
  if most > BAR then
    scale = most // BAR
    if most % BAR ~= 0 then scale = scale + 1 end
  end
  local cw = digits(most)
  local vw = value_width(h, low, high, under, over)
  local out = { srep(" ", vw - 5) .. "value |" .. srep("-", BAR) .. " count\n" }
  local eliding = false
  for i = low, high do
    if elided(b, i, low, high, elision, h.last + 1) then
      eliding = true
    else
      if eliding then
        out[#out + 1] = srep(" ", vw) .. " ~\n"
        eliding = false
      end
      local prefix, v = row_label(h, i)
      local c = b[i] or 0
      local bar = c // scale
      local n = tostring(c)
      local pad = vw - digits(v) - #prefix
      out[#out + 1] = srep(" ", pad) .. prefix .. tostring(v) .. " |" .. srep("@", bar)
          .. srep(" ", BAR - bar + 1 + cw - #n) .. n .. "\n"
    end
  end
  out[#out + 1] = "\n"
  return concat(out)
end

-- ---- statistics ---------------------------------------------------------
--
-- @count @sum @min @max as they read; @avg is sum / count in C's division.
-- @variance is stap's integer algorithm, not a formula on doubles: each
-- CPU of stap keeps a Welford running mean and M2 of the values shifted
-- left by the aggregate's bit shift (@variance(s, SHIFT)); reading
-- combines the CPUs' parts with the total variance formula
--
--   A  = (sum << shift) / count
--   S1 = sum over parts of n_i * (mean_i - A)^2
--   S2 = sum over parts of (n_i - 1) * variance_i      (variance_i = M2_i / (n_i - 1))
--   @variance = ((S1 + S2) / (count - 1)) >> (2 * shift)
--
-- with every step truncated as C truncates it (the running delta is an
-- int in stap's runtime: 32 bits).  Here a part is what one state gathered
-- (w*: this state's running Welford) and what was merged in from others
-- (p1 = sum of n_i * mean_i, p2 = sum of n_i * mean_i^2, pv = sum of
-- (n_i - 1) * variance_i: S1 expands into them exactly, modulo 2^64 as C
-- computes it).

local Stat = {}
Stat.__index = Stat

-- hs: the histograms (nil or a list); bs[n]: bucket counts of hs[n].
local function new_stat(hs, shift)
  local bs
  if hs then
    bs = {}
    for n = 1, #hs do bs[n] = {} end
  end
  return setmetatable({ n = 0, total = 0, lo = 0, hi = 0, shift = shift or 0,
                        wn = 0, wavg = 0, wm2 = 0, p1 = 0, p2 = 0, pv = 0,
                        hs = hs, bs = bs }, Stat)
end

local function check_shift(shift)
  if shift ~= nil and (type(shift) ~= "number" or shift < 0 or shift > 62) then
    error("rt: the bit shift of @variance must be 0 .. 62", 3)
  end
  return shift or 0
end

function rt.stat(o)
  return new_stat(new_hists(o), check_shift(o and o.shift))
end

function Stat:push(v)
  local n = self.n + 1
  self.n = n
  self.total = self.total + v
  if n == 1 then
    self.lo, self.hi = v, v
  else
    if v < self.lo then self.lo = v end
    if v > self.hi then self.hi = v end
  end
  local x, wn = v << self.shift, self.wn + 1
  self.wn = wn
  if wn == 1 then
    self.wavg, self.wm2 = x, 0
  else
    local d = int32(x - self.wavg)
    local avg = self.wavg + cdiv(d, wn)
    self.wavg = avg
    self.wm2 = self.wm2 + d * (x - avg)
  end
  local hs = self.hs
  if hs then
    local bs = self.bs
    for h = 1, #hs do
      local b, i = bs[h], hs[h].index(v)
      b[i] = (b[i] or 0) + 1
    end
  end
end

local function check(self, loc)
  if self.n == 0 then raise("empty aggregate", loc) end
end

function Stat:count() return self.n end
function Stat:sum() return self.total end
function Stat:min(loc) check(self, loc) return self.lo end
function Stat:max(loc) check(self, loc) return self.hi end

function Stat:avg(loc)
  check(self, loc)
  return cdiv(self.total, self.n)
end

-- This state's running part as (n, mean, variance) of the formula above.
local function own_part(self)
  local wn = self.wn
  local var = 0
  if wn >= 2 then var = cdiv(self.wm2, wn - 1) end
  return wn, self.wavg, var
end

function Stat:variance(loc)
  check(self, loc)
  local n, shift = self.n, self.shift
  local wn, wavg, wvar = own_part(self)
  local p1 = self.p1 + wn * wavg
  local p2 = self.p2 + wn * wavg * wavg
  local pv = self.pv + (wn > 0 and (wn - 1) * wvar or 0)
  local a = cdiv(self.total << shift, n)
  local s1 = p2 - 2 * a * p1 + a * a * n
  return sar(cdiv(s1 + pv, n - 1), 2 * shift)
end

local function hist_of(self, n, loc)
  local h = self.hs and self.hs[n]
  if not h then raise("no histogram declared for this aggregate", loc) end
  return h, self.bs[n]
end

-- The n-th declared histogram (hists = {...}); hist/bucket/buckets use the first.
function Stat:hist_n(n, loc)
  check(self, loc)
  local h, b = hist_of(self, n, loc)
  return chart(h, b, rt.HIST_ELISION)
end

function Stat:bucket_n(n, i, loc)
  check(self, loc)
  local h, b = hist_of(self, n, loc)
  if type(i) ~= "number" or i < h.first or i > h.last then
    raise("histogram index out of range", loc)
  end
  return b[i] or 0
end

function Stat:hist(loc) return self:hist_n(1, loc) end
function Stat:bucket(i, loc) return self:bucket_n(1, i, loc) end
function Stat:buckets() return self:buckets_n(1) end

-- Every bucket in order, empty ones too (stap's foreach over a histogram).
function Stat:buckets_n(n)
  local h, b = self.hs and self.hs[n], self.bs and self.bs[n]
  if not h then return function() return nil end end
  local i, e = h.first - 1, h.last
  return function()
    i = i + 1
    if i > e then return nil end
    return i, b[i] or 0
  end
end

function Stat:clear()
  self.n, self.total, self.lo, self.hi = 0, 0, 0, 0
  self.wn, self.wavg, self.wm2, self.p1, self.p2, self.pv = 0, 0, 0, 0, 0, 0
  if self.bs then
    for n = 1, #self.bs do self.bs[n] = {} end
  end
end

-- ---- associative arrays -------------------------------------------------

local Map = {}
Map.__index = Map

local keyfns = {
  [1] = function(_, a) return a end,
  [2] = function(_, a, b) return a .. SEP .. b end,
  [3] = function(_, a, b, c) return a .. SEP .. b .. SEP .. c end,
  [4] = function(_, a, b, c, d) return a .. SEP .. b .. SEP .. c .. SEP .. d end,
}
local function generic_key(_, ...) return concat({ ... }, SEP) end

function rt.map(o)
  local keys = o.keys
  local arity = o.arity or (keys and #keys) or 1
  if arity > 1 and (type(keys) ~= "table" or #keys ~= arity) then
    error("rt.map: keys = {\"long\"|\"string\", ...} is needed for arity " .. arity, 2)
  end
  local value = o.value or "long"
  if value ~= "long" and value ~= "string" and value ~= "stat" then
    error("rt.map: value must be \"long\", \"string\" or \"stat\"", 2)
  end
  local m = setmetatable({
    name = o.name or "?", arity = arity, keytypes = keys, value = value,
    limit = o.size or rt.MAXMAPENTRIES, sized = o.size ~= nil, wrap = o.wrap and true or false,
    hists = new_hists(o), shift = check_shift(o.shift), dflt = value == "string" and "" or 0,
    vals = {}, nxt = {}, prv = {}, head = nil, tail = nil, n = 0,
  }, Map)
  m.key = keyfns[arity] or generic_key
  -- the hot methods as own fields: a[k]++ finds add in one lookup
  m.add, m.get, m.set, m.push, m.exists = Map.add, Map.get, Map.set, Map.push, Map.exists
  if value == "stat" then
    m.missing = new_stat(m.hists, m.shift)
    m.missing.missing = true
    -- a:get(k) of a missing key is shared and read-only: a <<< goes through a:push
    m.missing.push = function() error("rt: push into a missing element; use a:push(k, v)", 2) end
  end
  return m
end

local function unlink(m, k)
  local gone = m.gone   -- keys deleted since the sync base (several states)
  if gone then gone[k] = true end
  local nxt, prv = m.nxt, m.prv
  local p, n = prv[k], nxt[k]
  if p == nil then m.head = n else nxt[p] = n end
  if n == nil then m.tail = p else prv[n] = p end
  nxt[k], prv[k] = nil, nil
  m.vals[k] = nil
  m.n = m.n - 1
end

local function overflow(m, loc)
  if m.value == "stat" then raise("aggregation overflow", loc) end
  if m.sized then raise("Array overflow, check size limit (" .. m.limit .. ")", loc) end
  raise("Array overflow, check MAXMAPENTRIES", loc)
end

-- Makes room for and links a new key (its value is stored by the caller).
local function link(m, k, loc)
  if m.n >= m.limit then
    if m.wrap and m.head ~= nil then unlink(m, m.head) else overflow(m, loc) end
  end
  m.n = m.n + 1
  local t = m.tail
  if t == nil then m.head = k else m.nxt[t] = k; m.prv[k] = t end
  m.tail = k
end

function Map:get(k)
  local v = self.vals[k]
  if v == nil then
    if self.value == "stat" then return self.missing end
    return self.dflt
  end
  return v
end

function Map:set(k, v, loc)
  local vals = self.vals
  if vals[k] == nil then link(self, k, loc) end
  if self.value == "string" then v = rt.trunc(v) end
  vals[k] = v
  return v
end

function Map:add(k, d, loc)
  local vals = self.vals
  local v = vals[k]
  if v == nil then
    link(self, k, loc)
    v = 0
  end
  v = v + d
  vals[k] = v
  return v
end

function Map:push(k, v, loc)
  local vals = self.vals
  local s = vals[k]
  if s == nil then
    link(self, k, loc)
    s = new_stat(self.hists, self.shift)
    vals[k] = s
  end
  s:push(v)
end

function Map:exists(k) return self.vals[k] ~= nil end

function Map:delete(k)
  if self.vals[k] ~= nil then unlink(self, k) end
end

function Map:clear()
  local gone = self.gone
  if gone then
    for k in pairs(self.vals) do gone[k] = true end
  end
  self.vals, self.nxt, self.prv = {}, {}, {}
  self.head, self.tail, self.n = nil, nil, 0
end

function Map:size() return self.n end

-- Composite key -> array of typed columns.
local function decode(m, k)
  if m.arity == 1 then return { k } end
  local cols, pos, types = {}, 1, m.keytypes
  for c = 1, m.arity do
    local stop = sfind(k, SEP, pos, true)
    local s = ssub(k, pos, (stop or 0) - 1)
    if c == m.arity then s = ssub(k, pos) end
    if types[c] == "long" then cols[c] = tonumber(s) else cols[c] = s end
    if stop then pos = stop + 1 end
  end
  return cols
end

-- Does key k match pat, a value or ANY per column (a slice: a[*, 2])?
local function matches(m, k, pat)
  local cols = decode(m, k)
  for c = 1, m.arity do
    if pat[c] ~= ANY and pat[c] ~= cols[c] then return false end
  end
  return true
end

function Map:delete_match(...)
  local pat = { ... }
  local k = self.head
  while k ~= nil do
    local next_k = self.nxt[k]
    if matches(self, k, pat) then unlink(self, k) end
    k = next_k
  end
end

-- [*, 2] in a
function Map:exists_match(...)
  local pat = { ... }
  local k = self.head
  while k ~= nil do
    if matches(self, k, pat) then return true end
    k = self.nxt[k]
  end
  return false
end

local statops = {
  count = function(s) return s.n end, sum = function(s) return s.total end,
  min = function(s) return s.lo end, max = function(s) return s.hi end,
  avg = function(s) return Stat.avg(s) end,
}

-- foreach: a snapshot of the entries (of a slice if pat, as in
-- delete_match), sorted if asked, then limited.
function Map:each(col, dir, limit, statop, pat)
  local ks, vs, n = {}, {}, 0
  local k, nxt, vals = self.head, self.nxt, self.vals
  while k ~= nil do
    if pat == nil or matches(self, k, pat) then
      n = n + 1
      ks[n], vs[n] = k, vals[k]
    end
    k = nxt[k]
  end
  local order = {}
  for i = 1, n do order[i] = i end
  if col ~= nil then
    local sk = {}
    if col == 0 then
      if self.value == "stat" then
        local f = statops[statop or "count"] or error("rt: unknown sort aggregate " .. tostring(statop), 2)
        for i = 1, n do sk[i] = f(vs[i]) end
      else
        for i = 1, n do sk[i] = vs[i] end
      end
    else
      for i = 1, n do sk[i] = decode(self, ks[i])[col] end
    end
    local down = dir ~= nil and dir < 0
    sort(order, function(i, j)
      local a, b = sk[i], sk[j]
      if a == b then return i < j end   -- ties keep insertion order
      local less
      if type(a) == "string" then less = strcmp(a, b) < 0 else less = a < b end
      if down then return not less end
      return less
    end)
  end
  if limit ~= nil and limit < n then
    if limit < 0 then n = 0 else n = limit end
  end
  local arity, i = self.arity, 0
  if arity == 1 then
    return function()
      i = i + 1
      if i > n then return nil end
      local j = order[i]
      return ks[j], vs[j]
    end
  end
  return function()
    i = i + 1
    if i > n then return nil end
    local j = order[i]
    local cols = decode(self, ks[j])
    cols[arity + 1] = vs[j]
    return unpack(cols, 1, arity + 1)
  end
end

-- ---- several states: globals by deltas (API.md, "Several states") -------
--
-- marktap's state runs begin/timer/end probes, each traced process's state
-- runs the marker handlers.  rt.globals() (emitted by the translator) gives
-- the runtime every global; a base copy records the values both sides
-- agreed on at the last exchange.  Three kinds of buffers:
--
--   "A" (DELTA|RESET_STATS, a process -> marktap): what changed here since
--       the base: long differences, new strings, deleted keys, and the
--       statistics gathered since the last take (then emptied).  Applied by
--       adding.
--   "P" (DELTA, marktap -> the processes): the new values of everything
--       that changed in marktap since its last take, its handlers' writes
--       and what it applied from processes alike.  Applied as "the value
--       plus what this side gathered since its base", so a process never
--       loses its own hits, never counts them twice, and sees the totals.
--   "F" (FULL, marktap -> a joining process): every value, set.
--
-- Applying moves the base with the value, so what was applied is never
-- sent back as a change.  A buffer is decoded and checked whole before
-- anything is applied: a corrupt one changes nothing.

local G                          -- { names, get, set, sig }
local base                       -- per global: number, string, map copy; false for stats
local dirty = {}                 -- "A" records applied since the last "P" take
local spack, sunpack, sbyte = string.pack, string.unpack, string.byte
-- s =~ "RE" where the translator made the pattern an automaton
-- (translator/regex.c): cls maps each byte (and BEGIN, END: 257, 258)
-- to its class, nx[state * k + class + 1] is the next state, acc the
-- accepting ones; state 0 starts.  True at the first accepting state.
rt.re = {}
function rt.dfa_match(s, d)
  local cls, nx, k, acc = d.cls, d.nx, d.k, d.acc
  if acc[0] then return true end
  local st = nx[sbyte(cls, 257) + 1]
  if acc[st] then return true end
  for i = 1, #s do
    st = nx[st * k + sbyte(cls, sbyte(s, i) + 1) + 1]
    if acc[st] then return true end
  end
  return acc[nx[st * k + sbyte(cls, 258) + 1]] == true
end

-- math.type where the math library exists (not in marktap.ko's Lua, whose
-- numbers are all integers)
local mtype = math and math.type or function(x) if type(x) == "number" then return "integer" end end
local MAGIC = "MTS3"

-- FNV-1a of the names: a buffer of another script is refused.
local function signature(names)
  local s, h = concat(names, "\0"), 2166136261
  for i = 1, #s do h = ((h ~ sbyte(s, i)) * 16777619) & 0xffffffff end
  return h
end

function rt.globals(names, get, set)
  G = { names = names, get = get, set = set, sig = signature(names) }
  base, dirty = nil, {}
end

local function kind(v)
  local m = getmetatable(v)
  if m == Map then
    if v.value == "stat" then return "mstat" end
    return v.value == "string" and "mstr" or "mlong"
  end
  if m == Stat then return "stat" end
  if mtype(v) == "integer" then return "long" end
  if type(v) == "string" then return "str" end
  return nil
end

local function snap(v)
  local m = getmetatable(v)
  if m == Map then
    if v.value == "stat" then return false end
    v.gone = {}
    local c = {}
    for k, x in pairs(v.vals) do c[k] = x end
    return c
  elseif m == Stat then
    return false
  end
  return v
end

local function mark()
  if not G then return end
  local vals, b = G.get(), {}
  base = nil   -- a mark stopped halfway (a time bound) leaves none, not half
  for i = 1, #G.names do b[i] = snap(vals[i]) end
  base = b
end
rt._sync_mark = mark

-- ---- encoding: MAGIC, mode byte, signature (u32), then records:
--   op (1 byte) and global number (u32), then the op's operands; keys and
--   values are tagged (1: long, 3: string), statistics are fixed fields.
--   N long | S string | K key long | T key string | D key (delete) |
--   F count (key value)... (a whole map) | M key stat | X stat

-- A statistic travels as count, sum, min, max and its variance parts
-- (p1, p2, pv of the statistics section, this state's running part
-- included): the receiver adds them to its own.
local function parts(s)
  local wn, wavg, wvar = own_part(s)
  local pv = s.pv
  if wn > 0 then pv = pv + (wn - 1) * wvar end
  return s.p1 + wn * wavg, s.p2 + wn * wavg * wavg, pv
end

local function put_stat(out, n, s)
  local bs = s.bs
  local p1, p2, pv = parts(s)
  n = n + 1
  out[n] = spack("<jjjjjjjI4", s.n, s.total, s.lo, s.hi, p1, p2, pv, bs and #bs or 0)
  if bs then
    for h = 1, #bs do
      local cnt = 0
      for _ in pairs(bs[h]) do cnt = cnt + 1 end
      n = n + 1
      out[n] = spack("<I4", cnt)
      for i, c in pairs(bs[h]) do
        n = n + 1
        out[n] = spack("<jj", i, c)
      end
    end
  end
  return n
end

local function take(mode)   -- "F", "P" or "A" (see above)
  local head = MAGIC .. mode .. spack("<I4", G and G.sig or 0)
  if not G then return mode == "F" and head or "" end
  if not base then mark() end
  local vals = G.get()
  local out, n = {}, 0
  local function rec(op, i) n = n + 1; out[n] = spack("<c1I4", op, i) end
  local function put(x)
    n = n + 1
    if mtype(x) == "integer" then out[n] = spack("<Bj", 1, x) else out[n] = spack("<Bs4", 3, x) end
  end
  for i = 1, #G.names do
    local v, b, dt = vals[i], base[i], dirty[i]
    local kd = kind(v)
    if kd == "long" then
      if mode == "F" then rec("N", i); put(v)
      elseif mode == "A" then
        if v ~= b then rec("N", i); put(v - b) end
      elseif v ~= b or dt then rec("N", i); put(v) end
    elseif kd == "str" then
      if mode == "F" or v ~= b or (mode == "P" and dt) then rec("S", i); put(v) end
    elseif kd == "mlong" or kd == "mstr" then
      local vv, nxt, k = v.vals, v.nxt, v.head
      if mode == "F" then
        rec("F", i); put(v.n)
        while k ~= nil do put(k); put(vv[k]); k = nxt[k] end
      else
        local op, diff = kd == "mlong" and "K" or "T", kd == "mlong" and mode == "A"
        if mode ~= "P" then dt = nil end
        local gone = v.gone or {}
        while k ~= nil do   -- insertion order: new keys keep it on the other side
          local x, o = vv[k], b[k]
          if o ~= nil and gone[k] then
            -- deleted and made again: at the end of the order, from 0
            rec("D", i); put(k)
            o = nil
          end
          if x ~= o or (dt and dt[k]) then
            rec(op, i); put(k)
            if diff then put(x - (o or 0)) else put(x) end
          end
          k = nxt[k]
        end
        for key in pairs(b) do
          if vv[key] == nil then rec("D", i); put(key) end
        end
        if dt then
          for key in pairs(dt) do
            if vv[key] == nil and b[key] == nil then rec("D", i); put(key) end
          end
        end
      end
    elseif kd == "mstat" then
      if mode == "A" then
        local vv, k = v.vals, v.head
        while k ~= nil do
          local s = vv[k]
          if s.n > 0 then rec("M", i); put(k); n = put_stat(out, n, s) end
          k = v.nxt[k]
        end
      end
    elseif kd == "stat" then
      if mode == "A" and v.n > 0 then rec("X", i); n = put_stat(out, n, v) end
    end
  end
  if mode == "F" then return head .. concat(out) end
  local buf = n == 0 and "" or head .. concat(out)
  out = nil
  -- the buffer is made: from here on the base moves with it, and a host
  -- that may stop a run (marktap.ko's time bound) hears that stopping
  -- now would lose the changes (rt._sync_commit)
  if rt._sync_commit then rt._sync_commit() end
  if mode == "A" then
    for i = 1, #G.names do
      local k = kind(vals[i])
      if k == "stat" or k == "mstat" then vals[i]:clear() end
    end
  else
    dirty = {}
  end
  mark()
  return buf
end
rt._sync_take = take

-- ---- decoding: the whole buffer is checked before anything changes ----

local BAD = {}   -- error marker: { BAD, message }
local function bad(msg) error({ BAD, msg }, 0) end

local function decode(buf)
  local len = #buf
  if len < 9 or ssub(buf, 1, 4) ~= MAGIC then bad("not a globals buffer") end
  local mode = ssub(buf, 5, 5)
  if mode ~= "F" and mode ~= "P" and mode ~= "A" then bad("unknown kind of globals buffer") end
  if sunpack("<I4", buf, 6) ~= G.sig then bad("globals of another script") end
  local vals, nglob, pos = G.get(), #G.names, 10
  local function val()
    local tag = sbyte(buf, pos)
    local x
    if tag == 1 then x, pos = sunpack("<j", buf, pos + 1)
    elseif tag == 3 then x, pos = sunpack("<s4", buf, pos + 1)
    else bad("corrupt globals buffer") end
    return x
  end
  local function long()
    local x = val()
    if mtype(x) ~= "integer" then bad("corrupt globals buffer: long expected") end
    return x
  end
  local function str()
    local x = val()
    if type(x) ~= "string" then bad("corrupt globals buffer: string expected") end
    return x
  end
  local function key(m)
    local k, t = val(), m.keytypes
    if m.arity > 1 then
      if type(k) ~= "string" then bad("corrupt globals buffer: bad key") end
      local seps = select(2, k:gsub(SEP, SEP))
      if seps ~= m.arity - 1 then bad("corrupt globals buffer: bad key") end
    elseif t and (t[1] == "long") ~= (mtype(k) == "integer") then
      bad("corrupt globals buffer: bad key")
    end
    return k
  end
  local function stat(hs)
    local o = {}
    local nh
    o.n, o.total, o.lo, o.hi, o.p1, o.p2, o.pv, nh, pos = sunpack("<jjjjjjjI4", buf, pos)
    if o.n < 1 or o.lo > o.hi then bad("corrupt globals buffer: bad statistic") end
    if nh ~= (hs and #hs or 0) then bad("corrupt globals buffer: histograms differ") end
    if nh > 0 then
      o.bs = {}
      for h = 1, nh do
        local cnt, b, hh = nil, {}, hs[h]
        cnt, pos = sunpack("<I4", buf, pos)
        if cnt * 16 > len - pos + 1 then bad("truncated globals buffer") end
        for _ = 1, cnt do
          local i, c
          i, c, pos = sunpack("<jj", buf, pos)
          if i < hh.first or i > hh.last or c < 1 or b[i] then bad("corrupt globals buffer: bad bucket") end
          b[i] = c
        end
        o.bs[h] = b
      end
    end
    return o
  end
  local recs = {}
  while pos <= len do
    local op, i
    op, i, pos = sunpack("<c1I4", buf, pos)
    if i < 1 or i > nglob then bad("corrupt globals buffer: no global " .. i) end
    local v = vals[i]
    local kd = kind(v)
    local r = { op, i }
    if op == "N" and kd == "long" then
      r[3] = long()
    elseif op == "S" and kd == "str" then
      r[3] = str()
    elseif (op == "K" and kd == "mlong" or op == "T" and kd == "mstr") and mode ~= "F" then
      r[3] = key(v)
      r[4] = op == "K" and long() or str()
    elseif op == "D" and (kd == "mlong" or kd == "mstr") and mode ~= "F" then
      r[3] = key(v)
    elseif op == "F" and (kd == "mlong" or kd == "mstr") and mode == "F" then
      local cnt, kv = long(), {}
      if cnt < 0 or cnt * 10 > len - pos + 1 then bad("truncated globals buffer") end
      for j = 1, cnt do
        kv[2 * j - 1] = key(v)
        kv[2 * j] = kd == "mlong" and long() or str()
      end
      r[3] = kv
    elseif op == "M" and kd == "mstat" and mode == "A" then
      r[3] = key(v)
      r[4] = stat(v.hists)
    elseif op == "X" and kd == "stat" and mode == "A" then
      r[3] = stat(v.hs)
    else
      bad("corrupt globals buffer: record '" .. op .. "' for global " .. G.names[i])
    end
    recs[#recs + 1] = r
  end
  return mode, recs
end

local function merge_stat(s, o)
  if s.n == 0 then
    s.lo, s.hi = o.lo, o.hi
  else
    if o.lo < s.lo then s.lo = o.lo end
    if o.hi > s.hi then s.hi = o.hi end
  end
  -- o is one more part of the total variance formula (statistics section)
  s.p1, s.p2, s.pv = s.p1 + o.p1, s.p2 + o.p2, s.pv + o.pv
  s.n, s.total = s.n + o.n, s.total + o.total
  if s.bs and o.bs then
    for h = 1, #s.bs do
      local b = s.bs[h]
      for i, c in pairs(o.bs[h]) do b[i] = (b[i] or 0) + c end
    end
  end
end

local function touch(i, k)
  local t = dirty[i]
  if k == nil then dirty[i] = true; return end
  if t == nil then t = {}; dirty[i] = t end
  t[k] = true
end

-- Where each global array is first stored into (generated code's
-- rt.stored_at): a merge past MAXMAPENTRIES is reported there.
local stored_at = {}
function rt.stored_at(t) stored_at = t end

local function apply(buf)
  if type(buf) ~= "string" then bad("not a globals buffer") end
  if not G then return end
  local ok, mode, recs = pcall(decode, buf)
  if not ok then
    if type(mode) == "table" and mode[1] == BAD then error("globals buffer: " .. mode[2], 0) end
    error("globals buffer: truncated", 0)
  end
  if not base then mark() end
  local vals = G.get()
  local first_err
  local function guarded(f, ...)
    local ok2, e = pcall(f, ...)
    if not ok2 and first_err == nil then first_err = e end
    return ok2
  end
  local add, over = mode == "A", mode == "P"
  for _, r in ipairs(recs) do
    local op, i = r[1], r[2]
    local v, b = vals[i], base[i]
    if op == "N" then
      local x = r[3]
      if add then vals[i] = v + x; base[i] = b + x; touch(i)
      elseif over then vals[i] = x + (v - b); base[i] = x
      else vals[i] = x; base[i] = x end
    elseif op == "S" then
      local x = rt.trunc(r[3])
      -- a process's own later write wins over marktap's
      if not (over and v ~= b) then vals[i] = x end
      base[i] = x
      if add then touch(i) end
    elseif op == "K" then
      local k, x = r[3], r[4]
      local cur, old = v.vals[k], b[k]
      if add then
        if guarded(v.add, v, k, x, stored_at[i]) then b[k] = (old or 0) + x; touch(i, k) end
      else   -- marktap's value, plus what this side gathered since its base
        local new = x + ((cur or 0) - (old or 0))
        if cur ~= nil then v.vals[k] = new; b[k] = x
        elseif old ~= nil and new == 0 then b[k] = x    -- deleted here, stays so
        elseif guarded(v.set, v, k, new, stored_at[i]) then b[k] = x end
      end
    elseif op == "T" then
      local k, x = r[3], rt.trunc(r[4])
      local cur, old = v.vals[k], b[k]
      if over and cur ~= old then b[k] = x       -- written or deleted here since
      elseif guarded(v.set, v, k, x, stored_at[i]) then
        b[k] = x
        if add then touch(i, k) end
      end
    elseif op == "D" then
      -- remove what both sides knew; keep what this side added since
      local k = r[3]
      local cur, old = v.vals[k], b[k]
      if cur ~= nil then
        if v.value == "long" then
          local pending = cur - (old or 0)
          if pending ~= 0 then v.vals[k] = pending else v:delete(k) end
        elseif cur == old then
          v:delete(k)
        end
      end
      if v.gone then v.gone[k] = nil end   -- the base knows it
      b[k] = nil
      if add then touch(i, k) end
    elseif op == "F" then
      local kv, nb = r[3], {}
      v:clear()
      for j = 1, #kv, 2 do
        local k = kv[j]
        if guarded(v.set, v, k, kv[j + 1], stored_at[i]) then nb[k] = v.vals[k] end
      end
      base[i] = nb
    elseif op == "M" then
      local k, o = r[3], r[4]
      local s = v.vals[k]
      if s == nil and guarded(link, v, k, stored_at[i]) then
        s = new_stat(v.hists, v.shift)
        v.vals[k] = s
      end
      if s then merge_stat(s, o) end
    elseif op == "X" then
      merge_stat(v, r[3])
    end
  end
  G.set(vals)
  if first_err ~= nil then error(first_err, 0) end
end
rt._sync_apply = apply

-- ---- native handlers (API.md, "Native handlers") ----
--
-- A marker handler that only adds to long globals has a plan too
-- (translator/native.c); the host runs it without Lua and folds what it
-- added into the globals with _native_fold before each exchange.

local natives, native_where = {}, {}
rt._natives = natives

function rt.native(name, plan, where)
  natives[name] = plan
  for gi, w in pairs(where) do
    if native_where[gi] == nil then native_where[gi] = w end
  end
end

-- Statistics of one period, from the host's fields.  Native plans are made
-- only for statistics no @variance reads (translator/native.c): the period
-- brings no variance parts.
local function native_stat(n, sum, lo, hi)
  return { n = n, total = sum, lo = lo, hi = hi, p1 = 0, p2 = 0, pv = 0 }
end

-- r: records, n integers: counters (global, number of keys, amount,
-- keys...), statistics (-global, number of keys, count, sum, min, max,
-- three fields this runtime does not read, keys...); a
-- string key is an index into S
function rt._native_fold(r, n, S)
  if not G then return end
  local vals = G.get()
  local i, first_err = 1, nil
  while i <= n do
    local gi, nk = r[i], r[i + 1]
    local at = gi < 0 and i + 9 or i + 3   -- the keys
    if gi < 0 then gi = -gi end
    local v = vals[gi]
    local k = nil
    if nk > 0 then
      local kt = v.keytypes
      local ks = { unpack(r, at, at + nk - 1) }
      for j = 1, nk do
        if kt and kt[j] == "string" then ks[j] = S[ks[j] + 1] or "" end
      end
      k = ks[1]
      if nk > 1 then k = v:key(unpack(ks, 1, nk)) end
    end
    if at == i + 9 then
      local o = native_stat(r[i + 2], r[i + 3], r[i + 4], r[i + 5])
      if nk == 0 then
        merge_stat(v, o)
      else
        local s = v.vals[k]
        if s == nil then
          local ok, e = pcall(link, v, k, native_where[gi])
          if ok then
            s = new_stat(v.hists, v.shift)
            v.vals[k] = s
          elseif first_err == nil then
            first_err = e
          end
        end
        if s then merge_stat(s, o) end
      end
    elseif nk == 0 then
      vals[gi] = v + r[i + 2]
    else
      local ok, e = pcall(v.add, v, k, r[i + 2], native_where[gi])
      if not ok and first_err == nil then first_err = e end
    end
    i = at + nk
  end
  G.set(vals)
  if first_err ~= nil then error(first_err, 0) end
end
