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

local SEP = "\0"
local ANY = setmetatable({}, { __name = "mtrt.ANY", __tostring = function() return "*" end })
rt.ANY = ANY

-- ---- histograms ---------------------------------------------------------

local LOG_MIN, LOG_MAX = -64, 64

-- Bucket of v in a log histogram: 0 for 0, the bit length of |v| for
-- positive values, its negation for negative ones.
local function bitlen(u)   -- u: a non-zero value read as unsigned
  local n = 0
  while u ~= 0 do
    u = u >> 1
    n = n + 1
  end
  return n
end

local function log_index(v)
  if v == 0 then return 0 end
  if v > 0 then return bitlen(v) end
  return -bitlen(-v)   -- -mininteger wraps to itself: bit length 64
end

local function log_low(i)
  if i == 0 then return 0 end
  if i > 0 then return 1 << (i - 1) end
  return -(1 << (-i - 1))
end

local function new_hist(spec)
  if spec == nil then return nil end
  if spec[1] == "log" then
    return { kind = "log", first = LOG_MIN, last = LOG_MAX, index = log_index }
  end
  if spec[1] ~= "linear" then
    error("rt: unknown histogram kind '" .. tostring(spec[1]) .. "'", 3)
  end
  local lo, hi, step = spec[2], spec[3], spec[4]
  if math.type(lo) ~= "integer" or math.type(hi) ~= "integer" or math.type(step) ~= "integer"
      or step <= 0 or hi <= lo then
    error("rt: @hist_linear needs integers lo < hi and step > 0", 3)
  end
  local nb = (hi - lo) // step
  if (hi - lo) % step ~= 0 then nb = nb + 1 end
  local h = { kind = "linear", lo = lo, hi = hi, step = step, nb = nb, first = 0, last = nb + 1 }
  h.index = function(v)
    if v < lo then return 0 end
    if v >= hi then return nb + 1 end   -- also keeps v - lo from wrapping
    return (v - lo) // step + 1
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

local function label(h, i)
  if h.kind == "log" then return tostring(log_low(i)) end
  if i == 0 then return "<" .. h.lo end
  if i == h.nb + 1 then return ">" .. h.hi end
  return tostring(h.lo + (i - 1) * h.step)
end

local BAR = 50

-- The rows a chart shows: bucket indexes, or false for a "~" line.
local function chart_rows(h, b, elision)
  local first, last
  for i = h.first, h.last do
    if (b[i] or 0) > 0 then
      first = first or i
      last = i
    end
  end
  local rows = {}
  if not first then return rows end
  local s, e
  if elision < 0 then
    if h.kind == "linear" then s, e = 1, h.nb else s, e = first, last end
    if first < s then s = first end
    if last > e then e = last end
  else
    s, e = first - elision, last + elision
    if s < h.first then s = h.first end
    if e > h.last then e = h.last end
  end
  -- A log chart of only positive (negative) values does not reach into
  -- the other sign's buckets.
  if h.kind == "log" then
    if first >= 0 and s < 0 then s = 0 end
    if last <= 0 and e > 0 then e = 0 end
  end
  local i = s
  while i <= e do
    local c = b[i] or 0
    local underover = h.kind == "linear" and (i == 0 or i == h.nb + 1)
    if c == 0 and elision >= 0 and i > first and i < last then
      -- a run of empty buckets between two non-empty ones
      local j = i
      while (b[j] or 0) == 0 do j = j + 1 end
      local run = j - i
      if run > 2 * elision then
        for k = i, i + elision - 1 do rows[#rows + 1] = k end
        rows[#rows + 1] = false
        for k = j - elision, j - 1 do rows[#rows + 1] = k end
      else
        for k = i, j - 1 do rows[#rows + 1] = k end
      end
      i = j
    else
      if c > 0 or not underover then rows[#rows + 1] = i end
      i = i + 1
    end
  end
  return rows
end

local function chart(h, b, elision)
  local rows = chart_rows(h, b, elision)
  local lw, cw, max = 5, 1, 0
  for _, i in ipairs(rows) do
    if i then
      local c = b[i] or 0
      if #label(h, i) > lw then lw = #label(h, i) end
      if #tostring(c) > cw then cw = #tostring(c) end
      if c > max then max = c end
    end
  end
  local out = { srep(" ", lw - 5) .. "value |" .. srep("-", BAR) .. " count\n" }
  for _, i in ipairs(rows) do
    if i then
      local c = b[i] or 0
      local l, n = label(h, i), tostring(c)
      local bar = c
      if max > BAR then bar = c * BAR // max end
      out[#out + 1] = srep(" ", lw - #l) .. l .. " |" .. srep("@", bar) .. srep(" ", BAR - bar)
          .. " " .. srep(" ", cw - #n) .. n .. "\n"
    else
      out[#out + 1] = "~\n"
    end
  end
  out[#out + 1] = "\n"
  return concat(out)
end

-- ---- statistics ---------------------------------------------------------

local Stat = {}
Stat.__index = Stat
local SQMAX = 3037000499   -- the largest long whose square is a long

-- hs: the histograms (nil or a list); bs[n]: bucket counts of hs[n].
local function new_stat(hs)
  local bs
  if hs then
    bs = {}
    for n = 1, #hs do bs[n] = {} end
  end
  return setmetatable({ n = 0, total = 0, lo = 0, hi = 0, mean = 0.0, m2 = 0.0,
                        q = 0, qok = true, hs = hs, bs = bs }, Stat)
end

function rt.stat(o)
  return new_stat(new_hists(o))
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
  -- The exact sum of squares while it fits in a long (then the variance is
  -- exact, and so is a merge of statistics gathered in several states);
  -- Welford's running variance in doubles for larger samples.
  if self.qok then
    local q = self.q + v * v
    if v > SQMAX or v < -SQMAX or q < 0 then self.qok = false else self.q = q end
  end
  local d = v - self.mean
  self.mean = self.mean + d / n
  self.m2 = self.m2 + d * (v - self.mean)
  local hs = self.hs
  if hs then
    local bs = self.bs
    for n = 1, #hs do
      local b, i = bs[n], hs[n].index(v)
      b[i] = (b[i] or 0) + 1
    end
  end
end

local function check(self, loc)
  if self.n == 0 then
    raise(self.missing and "aggregate element not found" or "empty aggregate", loc)
  end
end

function Stat:count() return self.n end
function Stat:sum(loc) check(self, loc) return self.total end
function Stat:min(loc) check(self, loc) return self.lo end
function Stat:max(loc) check(self, loc) return self.hi end

function Stat:avg(loc)
  check(self, loc)
  local s, n = self.total, self.n
  local q = s // n
  if s % n ~= 0 and s < 0 then q = q + 1 end   -- C division truncates toward 0
  return q
end

function Stat:variance(loc)
  check(self, loc)
  local n = self.n
  if n < 2 then return 0 end
  -- (n*Q - S*S) / (n*(n-1)) in longs when they cannot overflow
  local q, t = self.q, self.total
  if self.qok and n <= SQMAX and q <= math.maxinteger // n and t <= SQMAX and t >= -SQMAX then
    return (n * q - t * t) // (n * (n - 1))
  end
  local v = self.m2 / (n - 1)
  if v >= 2^63 then return math.maxinteger end
  return math.tointeger(v >= 0 and math.floor(v) or math.ceil(v)) or 0
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
  local h, b = hist_of(self, n, loc)
  if math.type(i) ~= "integer" or i < h.first or i > h.last then
    raise("histogram index out of range", loc)
  end
  return b[i] or 0
end

function Stat:hist(loc) return self:hist_n(1, loc) end
function Stat:bucket(i, loc) return self:bucket_n(1, i, loc) end
function Stat:buckets() return self:buckets_n(1) end

-- All buckets of a linear histogram; the non-empty span of a log one.
function Stat:buckets_n(n)
  local h, b = self.hs and self.hs[n], self.bs and self.bs[n]
  if not h then return function() return nil end end
  local s, e = h.first, h.last
  if h.kind == "log" then
    s, e = nil, nil
    for i = h.first, h.last do
      if (b[i] or 0) > 0 then s = s or i; e = i end
    end
    if not s then return function() return nil end end
  end
  local i = s - 1
  return function()
    i = i + 1
    if i > e then return nil end
    return i, b[i] or 0
  end
end

function Stat:clear()
  self.n, self.total, self.lo, self.hi, self.mean, self.m2 = 0, 0, 0, 0, 0.0, 0.0
  self.q, self.qok = 0, true
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
    hists = new_hists(o), dflt = value == "string" and "" or 0,
    vals = {}, nxt = {}, prv = {}, head = nil, tail = nil, n = 0,
  }, Map)
  m.key = keyfns[arity] or generic_key
  -- the hot methods as own fields: a[k]++ finds add in one lookup
  m.add, m.get, m.set, m.push, m.exists = Map.add, Map.get, Map.set, Map.push, Map.exists
  if value == "stat" then
    m.missing = new_stat(m.hists)
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
    s = new_stat(self.hists)
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

function Map:delete_match(...)
  local pat = { ... }
  local k = self.head
  while k ~= nil do
    local next_k = self.nxt[k]
    local cols, hit = decode(self, k), true
    for c = 1, self.arity do
      if pat[c] ~= ANY and pat[c] ~= cols[c] then hit = false; break end
    end
    if hit then unlink(self, k) end
    k = next_k
  end
end

local statops = {
  count = function(s) return s.n end, sum = function(s) return s.total end,
  min = function(s) return s.lo end, max = function(s) return s.hi end,
  avg = function(s) return Stat.avg(s) end,
}

-- foreach: a snapshot of the entries, sorted if asked, then limited.
function Map:each(col, dir, limit, statop)
  local ks, vs, n = {}, {}, 0
  local k, nxt, vals = self.head, self.nxt, self.vals
  while k ~= nil do
    n = n + 1
    ks[n], vs[n] = k, vals[k]
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
local mtype = math.type
local MAGIC = "MTS2"

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
  local vals = G.get()
  base = {}
  for i = 1, #G.names do base[i] = snap(vals[i]) end
end
rt._sync_mark = mark

-- ---- encoding: MAGIC, mode byte, signature (u32), then records:
--   op (1 byte) and global number (u32), then the op's operands; keys and
--   values are tagged (1: long, 3: string), statistics are fixed fields.
--   N long | S string | K key long | T key string | D key (delete) |
--   F count (key value)... (a whole map) | M key stat | X stat

local function put_stat(out, n, s)
  local bs = s.bs
  n = n + 1
  out[n] = spack("<jjjjddjBI4", s.n, s.total, s.lo, s.hi, s.mean + 0.0, s.m2 + 0.0,
                 s.q, s.qok and 1 or 0, bs and #bs or 0)
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
  if mode == "A" then
    for i = 1, #G.names do
      local k = kind(vals[i])
      if k == "stat" or k == "mstat" then vals[i]:clear() end
    end
  else
    dirty = {}
  end
  mark()
  if n == 0 then return "" end
  return head .. concat(out)
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
    local nh, qok
    o.n, o.total, o.lo, o.hi, o.mean, o.m2, o.q, qok, nh, pos = sunpack("<jjjjddjBI4", buf, pos)
    o.qok = qok == 1
    if o.n < 1 or o.lo > o.hi or o.mean ~= o.mean or o.m2 ~= o.m2 or o.q < 0 or qok > 1
        or o.mean == math.huge or o.mean == -math.huge or o.m2 == math.huge then
      bad("corrupt globals buffer: bad statistic")
    end
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
  -- Chan et al.: mean and M2 of the union of two samples
  local n = s.n + o.n
  local d = o.mean - s.mean
  s.mean = s.mean + d * o.n / n
  s.m2 = s.m2 + o.m2 + d * d * s.n * o.n / n
  s.n, s.total = n, s.total + o.total
  local q = s.q + o.q
  if s.qok and o.qok and q >= 0 then s.q = q else s.qok = false end
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
        if guarded(v.add, v, k, x) then b[k] = (old or 0) + x; touch(i, k) end
      else   -- marktap's value, plus what this side gathered since its base
        local new = x + ((cur or 0) - (old or 0))
        if cur ~= nil then v.vals[k] = new; b[k] = x
        elseif old ~= nil and new == 0 then b[k] = x    -- deleted here, stays so
        elseif guarded(v.set, v, k, new) then b[k] = x end
      end
    elseif op == "T" then
      local k, x = r[3], rt.trunc(r[4])
      local cur, old = v.vals[k], b[k]
      if over and cur ~= old then b[k] = x       -- written or deleted here since
      elseif guarded(v.set, v, k, x) then
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
        if guarded(v.set, v, k, kv[j + 1]) then nb[k] = v.vals[k] end
      end
      base[i] = nb
    elseif op == "M" then
      local k, o = r[3], r[4]
      local s = v.vals[k]
      if s == nil and guarded(link, v, k) then
        s = new_stat(v.hists)
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

-- Statistics of one period, from the host's fields.
local function native_stat(n, sum, lo, hi, q, qok, sqbits)
  local mean = sum / n
  local sq = qok == 1 and q or sunpack("<d", spack("<j", sqbits))
  local m2 = sq - sum * mean
  if m2 < 0 or m2 ~= m2 then m2 = 0.0 end
  return { n = n, total = sum, lo = lo, hi = hi, mean = mean, m2 = m2 + 0.0,
           q = q, qok = qok == 1 }
end

-- r: records, n integers: counters (global, number of keys, amount,
-- keys...), statistics (-global, number of keys, count, sum, min, max,
-- sum of squares, 1 if that is exact, its double's bits, keys...); a
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
      local o = native_stat(r[i + 2], r[i + 3], r[i + 4], r[i + 5], r[i + 6], r[i + 7], r[i + 8])
      if nk == 0 then
        merge_stat(v, o)
      else
        local s = v.vals[k]
        if s == nil then
          local ok, e = pcall(link, v, k, native_where[gi])
          if ok then
            s = new_stat(v.hists)
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
