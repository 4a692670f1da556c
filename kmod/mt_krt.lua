-- mt_krt.lua - the C half of marktap's "mtrt" runtime, for marktap.ko.
--
-- In user space mtrt's C half (runtime/lua/mt_lua*.c) gives translated
-- scripts stap's printf, strings, errors and context; here the same names
-- are written in Lua over the module's own functions (mt_lua_lib.c).  The
-- Lua half, runtime/lua/mt_rt.lua, is built into the module too and runs
-- over this table, so both hosts run the same generated code, integer-only.  Functions that need what the kernel
-- states do not have (regular expressions, other tasks' memory) raise an
-- error naming themselves.
local rt = {}
local format, sub, find, rep, byte, char = string.format, string.sub, string.find, string.rep, string.byte, string.char
local concat, out, type, tostring, error = table.concat, __out, type, tostring, error

rt.MAXMAPENTRIES, rt.MAXSTRINGLEN, rt.MAXACTION, rt.MAXNESTING = 2048, 512, 1000, 10
rt.MAXERRORS, rt.MAXSKIPPED, rt.HIST_ELISION = 0, 100, 2

-- errors: objects as mtrt's C half makes them ("msg near loc")
local Err = { __name = "mtrt.error" }
Err.__tostring = function(e) return e.loc and (e.msg .. " near " .. e.loc) or e.msg end
local function raise(msg, loc, fatal)
  error(setmetatable({ msg = msg, loc = loc, fatal = fatal }, Err), 0)
end
rt.error = function(msg, loc) raise(tostring(msg), loc) end
rt.catch = function(e)
  if getmetatable(e) == Err then
    if e.fatal then error(e, 0) end
    return e.msg
  end
  if type(e) == "string" and find(e, "MAXACTION exceeded", 1, true) then error(e, 0) end
  return tostring(e)
end
rt.maxaction = function(loc) raise("MAXACTION exceeded", loc, true) end
rt.count_actions = function() end
rt.linemap = function() end
-- function-call nesting: a counter of the module's, 0 at each hit
local cnest = __mt_nest
rt.nest = function(loc)
  if cnest(rt.MAXNESTING) then raise("MAXNESTING exceeded", loc) end
end
rt.unnest = __mt_unnest
rt.nesting = __mt_nesting
rt.exit = exit
rt.stopping = function() return false end

-- handlers by name; bound to markers by __mt_bind
-- (opts.params: the handler reads only its first n parameters, mk_name,
-- mk_fmt, a1...; the module pushes no more: __mt_params[marker], false
-- for all)
local handlers, params, own = {}, {}, {}
rt.probe = function(name, fn, opts)
  handlers[name] = fn
  params[name] = type(opts) == "table" and math.type(opts.params) == "integer" and opts.params or false
  own[name] = type(opts) == "table" and opts.own == true
end
-- rt.native: mt_rt.lua's keeps the plans in rt._natives.  A marker bound
-- to one handler with a plan runs it natively (mt_lua_nat.c), unless
-- marktap says no (MARKTAP_NATIVE=0): __mt_nat[marker] the plan or false.
-- A handler with a plan only adds to globals no handler reads, and one
-- marktap found to touch no global (opts.own: gen.c's own_state) shares
-- nothing, so their Lua may run in the state of whatever CPU they hit
-- (__mt_percpu[marker]: all of a marker's handlers such); every other
-- handler runs in one state shared by all CPUs, as stap's globals are one
-- (a thread's entry and exit on two CPUs see each other)
__mt_nat, __mt_percpu, __mt_params = {}, {}, {}
function __mt_bind(marker, name, native)
  local fn = handlers[name]
  if not fn then error("no handler " .. tostring(name), 2) end
  local has_plan = rt._natives and rt._natives[name] and true or false
  local plan = native and has_plan and rt._natives[name] or false
  local percpu = has_plan or own[name]
  if __mt_nat[marker] ~= nil then   -- several handlers: Lua
    plan, percpu = false, percpu and __mt_percpu[marker]
  end
  local n, was = params[name], __mt_params[marker]
  if n and was ~= false and was ~= nil and was > n then n = was end
  if was == false then n = false end
  __mt_params[marker] = n
  __mt_nat[marker] = plan
  __mt_percpu[marker] = percpu
  probe(marker, fn)
end

-- integers as C computes them
rt.div = function(a, b, loc)
  if b == 0 then raise("division by 0", loc) end
  if b == -1 then return -a end
  local q = a // b
  if q < 0 and q * b ~= a then q = q + 1 end
  return q
end
rt.mod = function(a, b, loc)
  if b == 0 then raise("division by 0", loc) end
  if b == -1 then return 0 end
  return a - rt.div(a, b) * b
end
rt.shl = function(a, n) return a << (n & 63) end
rt.shr = function(a, n)
  n = n & 63
  if a >= 0 then return a >> n end
  return ~(~a >> n)
end

-- strings, cut at MAXSTRINGLEN - 1 bytes like stap's char arrays
local function trunc(s)
  local max = rt.MAXSTRINGLEN - 1
  if #s > max then return sub(s, 1, max) end
  return s
end
rt.trunc = trunc
rt.cat = function(a, b) return trunc(a .. b) end
rt.strcmp = function(a, b) if a == b then return 0 elseif a < b then return -1 else return 1 end end
local function udec(v)   -- an unsigned 64-bit decimal
  if v >= 0 then return format("%d", v) end
  local q = (v >> 1) // 5
  return format("%d%d", q, v - q * 10)
end
local function str(v) if type(v) == "string" then return v end return format("%d", v) end
rt.tostr = str
rt.strlen = function(s) return #s end
rt.substr = function(s, start, len)
  if start < 0 or len < 0 or start >= #s then return "" end
  return sub(s, start + 1, start + len)
end
rt.isinstr = function(a, b) return find(a, b, 1, true) and 1 or 0 end
rt.stringat = function(s, i, loc)
  if i < 0 or i >= #s then raise("Position out of range", loc) end
  return byte(s, i + 1)
end
rt.str_replace = function(s, old, new)
  if old == "" then return s end
  local parts, at = {}, 1
  while true do
    local i, j = find(s, old, at, true)
    if not i then break end
    parts[#parts + 1] = sub(s, at, i - 1) .. new
    at = j + 1
  end
  parts[#parts + 1] = sub(s, at)
  return trunc(concat(parts))
end
local function unsupported(name)
  return function() raise(name .. "() is not available in kernel handlers") end
end
for _, name in ipairs { "regmatch", "matched", "ngroups" } do
  rt[name] = unsupported(name)
end

-- strtol(str, base) as user space's (mt_lua_str.c, the kernel's
-- simple_strtol): a '-' but no '+' or blanks, base 0 choosing 0x.. hex,
-- 0.. octal or decimal, an 0x after base 16 skipped, digits 0-9a-f only,
-- up to the first not below the base (taken as unsigned 32-bit), the
-- value wrapping at 64 bits
local function digit(b)
  if b and b >= 48 and b <= 57 then return b - 48 end
  if b and b >= 65 and b <= 70 then return b - 55 end
  if b and b >= 97 and b <= 102 then return b - 87 end
  return nil
end
rt.strtol = function(s, base)
  local i, neg, v = 1, byte(s, 1) == 45, 0
  if neg then i = 2 end
  base = base & 0xffffffff
  local x = byte(s, i + 1)
  local hex = byte(s, i) == 48 and (x == 120 or x == 88)
  if base == 0 then
    if byte(s, i) ~= 48 then base = 10
    elseif hex and digit(byte(s, i + 2)) then base = 16
    else base = 8 end
  end
  if base == 16 and hex then i = i + 2 end
  while true do
    local d = digit(byte(s, i))
    if not d or d >= base then break end
    v = v * base + d
    i = i + 1
  end
  return neg and -v or v
end

-- tokenize(str, delim): the first token of str, then with str "" the
-- next ones of the string given last (this state's); runs of delimiters
-- are skipped, tokens never empty
local tok_str, tok_pos = nil, 1
rt.tokenize = function(s, delim)
  if #s > 0 then tok_str, tok_pos = s, 1 end
  if not tok_str then return "" end
  local n = #tok_str
  local function is_delim(i) return find(delim, sub(tok_str, i, i), 1, true) ~= nil end
  while tok_pos <= n and is_delim(tok_pos) do tok_pos = tok_pos + 1 end
  local start = tok_pos
  while tok_pos <= n and not is_delim(tok_pos) do tok_pos = tok_pos + 1 end
  local t = sub(tok_str, start, tok_pos - 1)
  if tok_pos <= n then tok_pos = tok_pos + 1 end
  return t
end

-- ctime(secs): "Thu Jan  1 00:00:00 1970", UTC, as user space's (years
-- 0 to 9999, else "<invalid time>"); the civil date of a day count by
-- 400-year eras
local wdays = { "Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed" }
local months = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" }
rt.ctime = function(secs)
  local days, t = secs // 86400, secs % 86400
  local z = days + 719468                     -- days since 0000-03-01
  local era = z // 146097
  local doe = z - era * 146097                -- day of the era, 0..146096
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
  local mp = (5 * doy + 2) // 153             -- March = 0
  local d = doy - (153 * mp + 2) // 5 + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400 + (m <= 2 and 1 or 0)
  if y < 0 or y > 9999 then return "<invalid time>" end
  return format("%s %s %2d %02d:%02d:%02d %d", wdays[days % 7 + 1], months[m], d,
                t // 3600, t // 60 % 60, t % 60, y)
end

-- stap's text_str family (string_quoted, kernel_string_quoted...), as
-- runtime/lua/mt_lua_str.c's text_str: a UTF-8 sequence of RFC 3629 is
-- one character (\uXXXX, \UXXXXXXXX), C's escapes, \ooo for any other
-- unprintable byte; at most outlen bytes (0: MAXSTRINGLEN - 1) of at
-- most inlen read; quoted, a string cut short ends '"...', an escape the
-- cut would split left out whole
local escapes = { [7] = "\\a", [8] = "\\b", [12] = "\\f", [10] = "\\n", [13] = "\\r",
                  [9] = "\\t", [11] = "\\v", [34] = "\\\"", [92] = "\\\\" }
local function utf8_at(s, i, avail)   -- the character at i: code point, bytes
  local b = byte(s, i)
  local len, c
  if b & 0xE0 == 0xC0 then len, c = 2, b & 0x1F
  elseif b & 0xF0 == 0xE0 then len, c = 3, b & 0x0F
  elseif b & 0xF8 == 0xF0 then len, c = 4, b & 0x07
  else return b, 1 end
  if len > avail then return b, 1 end
  for k = 1, len - 1 do
    local x = byte(s, i + k)
    if x & 0xC0 ~= 0x80 then return b, 1 end
    c = c << 6 | (x & 0x3F)
  end
  if c < 0x80 or (len == 3 and c < 0x800) or (len == 4 and c < 0x10000) or
     (c >= 0xD800 and c <= 0xDFFF) or c > 0x10FFFF then return b, 1 end
  return c, len
end
local function escape(c, wide)
  if wide then return format(c <= 0xFFFF and "\\u%04X" or "\\U%08X", c) end
  local e = escapes[c]
  if e then return e end
  if c >= 32 and c < 127 then return char(c) end
  return format("\\%d%d%d", (c >> 6) & 3, (c >> 3) & 7, c & 7)
end
local function text_str(s, inlen, outlen, quoted, buffer)
  local max = rt.MAXSTRINGLEN - 1
  if inlen <= 0 or inlen > max then inlen = max end
  if outlen <= 0 or outlen > max then outlen = max end
  local out, n, esc, esc_len, cut = {}, 0, nil, 0, false
  if quoted then outlen = (outlen < 5 and 5 or outlen) - 2; out[1] = '"'; n = 1 end
  local avail, i = #s < inlen and #s or inlen, 1
  while i <= avail do
    local c, len = utf8_at(s, i, avail - i + 1)
    if c == 0 and not buffer then break end
    if outlen <= 0 then cut = true; break end
    local e = escape(c, len > 1)
    local k = #e
    if k > 1 and not esc and outlen - 3 < k then esc, esc_len = n, k end
    if outlen < k then cut = i - 1 + len < inlen; break end
    out[#out + 1] = e
    n, outlen, i = n + k, outlen - k, i + len
  end
  local r = concat(out)
  if quoted and cut then
    local e = n - 3 + outlen
    if esc and esc < e and e < esc + esc_len then e = esc end
    r = sub(r, 1, e) .. '"...'
  elseif quoted then
    r = r .. '"'
  end
  return trunc(r)
end
rt.text_str = function(s) return text_str(s, 0, 0, false) end
rt.text_strn = function(s, len, quoted) return text_str(s, 0, len or 0, (quoted or 0) ~= 0) end
-- the bytes of a buffer, NULs escaped too (stap's kernel_buffer_quoted)
rt.text_buf = function(s, outlen) return text_str(s, #s, outlen or 0, true, true) end

-- stap's printf conversions.  A bare one ("%d") is string.format's; one
-- with flags, width or precision is laid out here the way user space's
-- runtime/lua/mt_lua_fmt.c does (widths and precisions up to 4096, C's
-- flags on every conversion), so that a handler prints what the same
-- printf prints in a begin probe: Lua's format takes two digits at most
-- and refuses flags C ignores.
local MAX_FIELD = 4096
local function spaces(n) return n > 0 and rep(" ", n) or "" end
local function has(flags, c) return find(flags, c, 1, true) ~= nil end
local function integer(flags, width, given_prec, conv, v)
  local signed = conv == "d" or conv == "i"
  local neg = signed and v < 0
  local digits, prefix, prec = nil, "", given_prec
  if conv == "p" then digits, prefix, prec = format("%x", v), "0x", 16
  elseif conv == "x" or conv == "X" or conv == "o" then digits = format("%" .. conv, v)
  elseif neg then digits = udec(-v)   -- -minint is minint: udec reads it unsigned
  else digits = udec(v) end
  if v == 0 and prec == 0 then digits = "" end
  local zeros = prec > #digits and prec - #digits or 0
  if has(flags, "#") then
    if (conv == "x" or conv == "X") and v ~= 0 then prefix = conv == "X" and "0X" or "0x"
    elseif conv == "o" and zeros == 0 and byte(digits, 1) ~= 48 then zeros = 1 end
  end
  local sign = neg and "-" or signed and (has(flags, "+") and "+" or has(flags, " ") and " ") or ""
  local left = has(flags, "-")
  local fill = width - (#sign + #prefix + zeros + #digits)
  if fill > 0 and not left and given_prec < 0 and has(flags, "0") then
    zeros, fill = zeros + fill, 0   -- zeros between the sign or prefix and the digits
  end
  local body = sign .. prefix .. rep("0", zeros) .. digits
  if left then return body .. spaces(fill) end
  return spaces(fill) .. body
end
-- flags, width and precision of a conversion's spec ("-08.3"), or nil
local function parse_spec(spec)
  local flags, w, dot, p = spec:match("^([-+ #0]*)(%d*)(%.?)(%-?%d*)$")
  if not flags then return nil end
  local width = w ~= "" and (tonumber(w) or MAX_FIELD) or -1
  local prec = dot == "." and (p == "" and 0 or tonumber(p) or MAX_FIELD) or -1
  if width > MAX_FIELD then width = MAX_FIELD end
  if prec > MAX_FIELD then prec = MAX_FIELD elseif prec < 0 then prec = -1 end
  return flags, width, prec
end
local function field(flags, width, prec, conv, v)
  if conv == "s" or conv == "c" then
    if conv == "c" then v = char(v & 255)
    elseif prec >= 0 and prec < #v then v = sub(v, 1, prec) end
    if has(flags, "-") then return v .. spaces(width - #v) end
    return spaces(width - #v) .. v
  end
  return integer(flags, width, prec, conv, v)
end
local function bare(conv, v)
  if conv == "d" or conv == "i" or conv == "x" or conv == "X" or conv == "o" then return format("%" .. conv, v)
  elseif conv == "u" then return udec(v)
  elseif conv == "s" then return v
  elseif conv == "c" then return char(v & 255)
  end
  return format("0x%016x", v)   -- p
end
-- A format, compiled once: its literal pieces as strings, its
-- conversions as { conv, spec, stars, flags, width, prec } (the last three
-- known when the spec has no "*"); false when it is bad (the run that
-- reaches the bad conversion raises, after the arguments before it are
-- checked, as before).  A handler's printf parsed its format at every
-- hit; stap's formats are literals, so the few a script has are kept.
local formats, nformats = {}, 0
local function compile(f)
  local prog, at = {}, 1
  while true do
    local i = find(f, "%", at, true)
    if not i then break end
    if i > at then prog[#prog + 1] = sub(f, at, i - 1) end
    if sub(f, i + 1, i + 1) == "%" then
      prog[#prog + 1] = "%"
      at = i + 2
    else
      local s, e, spec, conv = find(f, "^([-+ #0]*[%d*]*%.?[%d*]*)([a-zA-Z])", i + 1)
      if not s then prog[#prog + 1] = false; return prog end
      local _, stars = spec:gsub("%*", "")
      local c = { conv, spec, stars }
      if stars == 0 and spec ~= "" then
        c[4], c[5], c[6] = parse_spec(spec)
        if not c[4] then prog[#prog + 1] = false; return prog end
      elseif stars > 0 then
        -- "*" for the width, the precision or both: their digits kept
        -- (c[7], c[8]: a number, "*", or -1 for none)
        local fl, w, dot, pr = spec:match("^([-+ #0]*)(%*?%d*)(%.?)(%*?%d*)$")
        if fl and (dot == "." or pr == "") and (w == "*" or not find(w, "*", 1, true)) and
           (pr == "*" or not find(pr, "*", 1, true)) then
          c[4] = fl
          c[7] = w == "*" and "*" or w ~= "" and (tonumber(w) or MAX_FIELD) or -1
          c[8] = pr == "*" and "*" or dot == "." and (pr == "" and 0 or tonumber(pr) or MAX_FIELD) or -1
        end
      end
      prog[#prog + 1] = c
      at = e + 1
    end
  end
  if at <= #f then prog[#prog + 1] = sub(f, at) end
  return prog
end
local function sprintf(f, ...)
  local prog = formats[f]
  if not prog then
    prog = compile(f)
    if nformats < 256 then formats[f], nformats = prog, nformats + 1 end
  end
  local args, n, parts = { ... }, 0, {}
  for k = 1, #prog do
    local c = prog[k]
    if type(c) == "string" then
      parts[k] = c
    elseif not c then
      raise("printf: bad format")
    else
      local conv, spec, flags, width, prec = c[1], c[2], c[4], c[5], c[6]
      if c[3] > 0 and flags then   -- "*": the width or precision is an argument
        width, prec = c[7], c[8]
        if width == "*" then
          n = n + 1
          width = args[n]
          if type(width) ~= "number" then raise("printf: bad format") end
          if width < 0 then flags, width = flags .. "-", -width end
        end
        if prec == "*" then
          n = n + 1
          prec = args[n]
          if type(prec) ~= "number" then raise("printf: bad format") end
          if prec < 0 then prec = -1 end
        end
        if width > MAX_FIELD then width = MAX_FIELD end
        if prec > MAX_FIELD then prec = MAX_FIELD end
      elseif c[3] > 0 then   -- other shapes, as written
        spec = spec:gsub("%*", function() n = n + 1; return tostring(args[n]) end)
      end
      n = n + 1
      if n > #args then raise("printf: too few arguments") end
      local v = args[n]
      if conv == "s" then v = str(v)
      elseif not find("diuxXopc", conv, 1, true) then
        raise("printf: conversion %" .. conv .. " is not available in kernel handlers")
      end
      if spec == "" then
        parts[k] = bare(conv, v)
      elseif flags then
        parts[k] = field(flags, width, prec, conv, v)
      else
        local flags, width, prec = parse_spec(spec)
        if not flags then raise("printf: bad format") end
        parts[k] = field(flags, width, prec, conv, v)
      end
    end
  end
  return concat(parts)
end
local function joined(delim, ...)
  local t = { ... }
  for i = 1, #t do t[i] = str(t[i]) end
  return concat(t, delim)
end
rt.sprintf = function(f, ...) return trunc(sprintf(f, ...)) end
rt.printf = function(f, ...) out(sprintf(f, ...)) end
rt.sprint = function(...) return trunc(joined("", ...)) end
rt.sprintln = function(...) return trunc(joined("", ...) .. "\n") end
rt.sprintd = function(d, ...) return trunc(joined(d, ...)) end
rt.sprintdln = function(d, ...) return trunc(joined(d, ...) .. "\n") end
rt.print = function(...) out(joined("", ...)) end
rt.println = function(...) out(joined("", ...) .. "\n") end
rt.printd = function(d, ...) out(joined(d, ...)) end
rt.printdln = function(d, ...) out(joined(d, ...) .. "\n") end
rt.log = function(s) if sub(s, -1) ~= "\n" then s = s .. "\n" end out(s) end
rt.warn = function(s) out("WARNING: " .. s .. "\n") end
rt.flush = function() end

-- context: the module's functions
for _, name in ipairs { "pid", "tid", "ppid", "uid", "euid", "gid", "egid", "cpu", "execname",
                        "gettimeofday_s", "gettimeofday_ms", "gettimeofday_us", "gettimeofday_ns",
                        "local_clock_ns", "get_cycles", "hz", "user_string", "user_read", "user_bytes", "kernel_string", "kernel_read", "kernel_store",
                        "syscall_arg", "syscall_store", "printk", "kbacktrace", "ksym",
                        "task_stat", "task_state", "task_cputime", "task_statm", "task_cmdline",
                        "task_files", "task_rlimit",
                        "pid2execname",
                        "task_execname", "task_tgid", "task_addr", "task_ids", "addr_to_node" } do
  rt[name] = _ENV[name]
end
-- stap's target(): the -c command's or -x process's pid, which marktap
-- sends once it knows it (__mt_target), before any handler is armed
local target_pid = 0
rt.target = function() return target_pid end
function __mt_target(cpu, s) target_pid = tonumber(s) or 0 end

-- marktap's part: its limits, then mt_rt.lua (built into the module from
-- the same tree as marktap) over this table when the chunk requires it
function __mt_limits(t) for k, v in pairs(t) do rt[k] = v end end
local loaded
function require(name)
  if name ~= "mtrt" then error("module '" .. tostring(name) .. "' not found", 2) end
  if not loaded then __mt_load_rt()(rt); loaded = rt end
  return loaded
end
-- globals by deltas (mt_rt.lua, "Several states"): marktap's values at
-- the start, this state's changes to marktap, marktap's changes back.
-- Either way a buffer may be larger than one call carries (4 MiB):
-- marktap sends all but the last piece to __mt_put, and takes this
-- state's changes in pieces of at most n bytes, each marked M (more
-- follow: call again) or E (the last).
rt._sync_commit = __mt_commit   -- a pull that stops past here is an error (mt_lua_lib.c)
local inbox, outbox, outat = {}, nil, 1
function __mt_put(cpu, piece) inbox[#inbox + 1] = piece end
local function received(buf)
  buf = buf or ""
  if #inbox == 0 then return buf end
  inbox[#inbox + 1] = buf
  buf = concat(inbox)
  inbox = {}
  return buf
end
function __mt_full(cpu, buf)
  buf = received(buf)
  if #buf > 0 then rt._sync_apply(buf) end
  rt._sync_mark()
end
function __mt_take(cpu, n)
  n = tonumber(n) or (1 << 20)
  if not outbox then outbox, outat = rt._sync_take("A"), 1 end
  local piece = sub(outbox, outat, outat + n - 2)
  outat = outat + #piece
  if outat > #outbox then outbox = nil return "E" .. piece end
  return "M" .. piece
end
-- the native plans' adds of this CPU (mt_lua_nat.c), before any call
function __mt_nat_fold(r, n, S) rt._native_fold(r, n, S) end
function __mt_apply(cpu, buf) rt._sync_apply(received(buf)) end
