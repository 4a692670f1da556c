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

-- hs: the histograms (nil or a list); bs[n]: bucket counts of hs[n].
local function new_stat(hs)
  local bs
  if hs then
    bs = {}
    for n = 1, #hs do bs[n] = {} end
  end
  return setmetatable({ n = 0, total = 0, lo = 0, hi = 0, mean = 0.0, m2 = 0.0,
                        hs = hs, bs = bs }, Stat)
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
  -- Welford's running variance, so large samples cannot overflow a sum of squares.
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
  if self.n < 2 then return 0 end
  local v = self.m2 / (self.n - 1)
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
-- the runtime every global; a base copy records what the other side knows.
-- A delta holds, per global: long differences, changed strings, deleted
-- map keys, and statistics accumulated since the last take.  Applying a
-- delta updates the base too, so it is never sent back.

local G                          -- { names, get, set }
local base                       -- per global: see snap()
local spack, sunpack = string.pack, string.unpack
local mtype = math.type

function rt.globals(names, get, set)
  G = { names = names, get = get, set = set }
  base = nil
end

local function is_map(v) return getmetatable(v) == Map end
local function is_stat(v) return getmetatable(v) == Stat end

-- The base of one global: number/string, a copy of a map's values
-- (long/string maps), the key set (stat maps), the count (stats).
local function snap(v)
  if is_map(v) then
    local c = {}
    if v.value == "stat" then
      for k in pairs(v.vals) do c[k] = true end
    else
      for k, x in pairs(v.vals) do c[k] = x end
    end
    return c
  elseif is_stat(v) then
    return v.n
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

-- encoding: a list of tagged values
local function put(out, x)
  local t = mtype(x)
  if t == "integer" then out[#out + 1] = spack("<Bj", 1, x)
  elseif t == "float" then out[#out + 1] = spack("<Bd", 2, x)
  else out[#out + 1] = spack("<Bs4", 3, x) end
end

local function put_stat(out, s)
  put(out, s.n); put(out, s.total); put(out, s.lo); put(out, s.hi)
  put(out, s.mean + 0.0); put(out, s.m2 + 0.0)
  local bs = s.bs
  put(out, bs and #bs or 0)
  if bs then
    for n = 1, #bs do
      local cnt = 0
      for _ in pairs(bs[n]) do cnt = cnt + 1 end
      put(out, cnt)
      for i, c in pairs(bs[n]) do put(out, i); put(out, c) end
    end
  end
end

-- Record ops: N global d set | S global str | K map key d | T map key str |
-- D map key (delete) | M map key stat | X global stat |
-- F global (full map follows: count, key, value...)
local function take(mode)
  if not G then return "MTS1" .. mode end
  local full, reset = mode == "F", mode == "R"
  local vals = G.get()
  if not base then mark() end
  local out = { "MTS1" .. (full and "F" or "D") }
  for i = 1, #G.names do
    local v, b = vals[i], base[i]
    if is_map(v) then
      if v.value == "stat" then
        -- a process holds only what it accumulated since the last pull, so
        -- marktap's deletes and clears of statistics concern none of it
        if not full then
          if reset then
            for k, s in pairs(v.vals) do
              if s.n > 0 then put(out, "M"); put(out, i); put(out, k); put_stat(out, s) end
            end
          end
        end
      elseif full then
        put(out, "F"); put(out, i); put(out, v.n)
        local k = v.head
        while k ~= nil do put(out, k); put(out, v.vals[k]); k = v.nxt[k] end
      else
        local long = v.value == "long"
        for k, x in pairs(v.vals) do
          local o = b[k]
          if o == nil or x ~= o then
            if long then put(out, "K"); put(out, i); put(out, k); put(out, x - (o or 0))
            else put(out, "T"); put(out, i); put(out, k); put(out, x) end
          end
        end
        for k in pairs(b) do
          if v.vals[k] == nil then put(out, "D"); put(out, i); put(out, k) end
        end
      end
    elseif is_stat(v) then
      if reset and v.n > 0 then put(out, "X"); put(out, i); put_stat(out, v) end
    elseif mtype(v) == "integer" then
      if full then put(out, "N"); put(out, i); put(out, v); put(out, 1)
      elseif v ~= b then put(out, "N"); put(out, i); put(out, v - b); put(out, 0) end
    elseif full or v ~= b then
      put(out, "S"); put(out, i); put(out, v)
    end
  end
  if reset then
    for i = 1, #G.names do
      local v = vals[i]
      if is_stat(v) then v:clear()
      elseif is_map(v) and v.value == "stat" then v:clear() end
    end
  end
  mark()
  return concat(out)
end
rt._sync_take = take

local function merge_stat(s, o)
  if o.n == 0 then return end
  if s.n == 0 then
    s.lo, s.hi = o.lo, o.hi
  else
    if o.lo < s.lo then s.lo = o.lo end
    if o.hi > s.hi then s.hi = o.hi end
  end
  local n = s.n + o.n
  local d = o.mean - s.mean
  s.mean = s.mean + d * o.n / n
  s.m2 = s.m2 + o.m2 + d * d * s.n * o.n / n
  s.n, s.total = n, s.total + o.total
  if s.bs and o.bs then
    for h = 1, math.min(#s.bs, #o.bs) do
      local b = s.bs[h]
      for i, c in pairs(o.bs[h]) do b[i] = (b[i] or 0) + c end
    end
  end
end

local function apply(buf)
  if type(buf) ~= "string" or #buf < 5 or ssub(buf, 1, 4) ~= "MTS1" then
    error("corrupt globals buffer", 0)
  end
  local full = ssub(buf, 5, 5) == "F"
  local pos, len = 6, #buf
  local function get()
    if pos > len then error("truncated globals buffer", 0) end
    local tag = sunpack("<B", buf, pos)
    local x
    if tag == 1 then x, pos = sunpack("<j", buf, pos + 1)
    elseif tag == 2 then x, pos = sunpack("<d", buf, pos + 1)
    elseif tag == 3 then x, pos = sunpack("<s4", buf, pos + 1)
    else error("corrupt globals buffer", 0) end
    return x
  end
  local function get_stat()
    local o = { n = get(), total = get(), lo = get(), hi = get(), mean = get(), m2 = get() }
    local nh = get()
    if nh > 0 then
      o.bs = {}
      for h = 1, nh do
        local b, cnt = {}, get()
        for _ = 1, cnt do local i = get(); b[i] = get() end
        o.bs[h] = b
      end
    end
    return o
  end
  if not G then return end
  if not base then mark() end
  local vals = G.get()
  local nglob = #G.names
  local first_err
  local function glob()
    local i = get()
    if mtype(i) ~= "integer" or i < 1 or i > nglob then error("corrupt globals buffer", 0) end
    return i
  end
  local function guarded(f, ...)
    local ok, e = pcall(f, ...)
    if not ok and first_err == nil then first_err = e end
  end
  while pos <= len do
    local op = get()
    if op == "N" then
      local i, x, set = glob(), get(), get()
      if set == 1 then vals[i] = x; base[i] = x
      else vals[i] = vals[i] + x; base[i] = base[i] + x end
    elseif op == "S" then
      local i, x = glob(), get()
      vals[i] = x; base[i] = x
    elseif op == "F" then
      local i, n = glob(), get()
      local m = vals[i]
      m:clear()
      local b = {}
      for _ = 1, n do
        local k, x = get(), get()
        guarded(m.set, m, k, x)
        b[k] = x
      end
      base[i] = b
    elseif op == "K" then
      local i, k, d = glob(), get(), get()
      local m = vals[i]
      guarded(m.add, m, k, d)
      base[i][k] = (base[i][k] or 0) + d
    elseif op == "T" then
      local i, k, x = glob(), get(), get()
      local m = vals[i]
      guarded(m.set, m, k, x)
      base[i][k] = x
    elseif op == "D" then
      local i, k = glob(), get()
      vals[i]:delete(k)
      base[i][k] = nil
    elseif op == "M" then
      local i, k, o = glob(), get(), get_stat()
      local m = vals[i]
      local s = m.vals[k]
      if s == nil then
        guarded(function()
          link(m, k)
          s = new_stat(m.hists)
          m.vals[k] = s
        end)
      end
      if s then merge_stat(s, o); base[i][k] = true end
    elseif op == "X" then
      local i, o = glob(), get_stat()
      merge_stat(vals[i], o)
      base[i] = vals[i].n
    else
      error("corrupt globals buffer", 0)
    end
  end
  G.set(vals)
  if first_err ~= nil then error(first_err, 0) end
end
rt._sync_apply = apply
