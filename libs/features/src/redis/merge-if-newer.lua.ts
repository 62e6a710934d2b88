/** Error reply prefixes of MERGE_IF_NEWER for a key no update can ever be merged into. */
export const MERGE_REFUSED = { wrongType: 'RANKER_WRONGTYPE', badRow: 'RANKER_BADROW' } as const;

/**
 * Merges fields into the stored row unless it is as new or newer (`_ts`), atomically on the key's
 * own node (one key: Cluster-safe). Returns 1 if written, 0 if stale.
 *
 * KEYS[1] the row's key; ARGV[1] the update's timestamp as JSON number text; then pairs of
 * (JSON.stringify(name), JSON.stringify(value)), all produced by Node.
 *
 * The stored row is never decoded and re-encoded (cjson would round every number to 14 digits):
 * it is scanned as text into members (raw name token, raw value text), validating JSON grammar as
 * strictly as JSON.parse and skipping nested values with an explicit stack (any depth, no
 * recursion). Untouched members are written back byte for byte in their order, named ones get
 * Node's value text in place, new ones and `_ts` (if absent) are appended; since JSON.parse keeps
 * the last of duplicate names, the result reads as exactly "stored row, then the update".
 * Names are compared decoded (escapes resolved; a lone surrogate escape becomes its 3-byte
 * WTF-8 form, which no valid UTF-8 contains), so `"\u0061"` and `"a"` are the same field.
 * A key of another type or a row that is not a JSON object answers an error reply starting with
 * RANKER_WRONGTYPE / RANKER_BADROW: the caller dead-letters the update, retrying cannot help.
 */
export const MERGE_IF_NEWER_LUA = `
local BADROW = '${MERGE_REFUSED.badRow} '
local ESC = { ['"'] = '"', ['\\\\'] = '\\\\', ['/'] = '/', b = '\\b', f = '\\f', n = '\\n', r = '\\r', t = '\\t' }

local function ws(s, i)
  return string.find(s, '[^ \\t\\n\\r]', i) or (#s + 1)
end

-- index after the string token starting at i (a quote), or nil
local function scan_string(s, i)
  local j = i + 1
  while true do
    local k = string.find(s, '[%z\\1-\\31"\\\\]', j)
    if not k then return nil end
    local c = string.byte(s, k)
    if c == 34 then return k + 1 end
    if c ~= 92 then return nil end
    local e = string.sub(s, k + 1, k + 1)
    if e == 'u' then
      if not string.find(s, '^%x%x%x%x', k + 2) then return nil end
      j = k + 6
    elseif e ~= '' and ESC[e] then
      j = k + 2
    else
      return nil
    end
  end
end

-- index after the number token starting at i (JSON grammar), or nil
local function scan_number(s, i)
  local j = i
  if string.byte(s, j) == 45 then j = j + 1 end
  local c = string.byte(s, j)
  if c == 48 then
    j = j + 1
  elseif c and c >= 49 and c <= 57 then
    local _, e = string.find(s, '^%d*', j + 1)
    j = e + 1
  else
    return nil
  end
  if string.byte(s, j) == 46 then
    local _, e = string.find(s, '^%d+', j + 1)
    if not e then return nil end
    j = e + 1
  end
  c = string.byte(s, j)
  if c == 101 or c == 69 then
    j = j + 1
    c = string.byte(s, j)
    if c == 43 or c == 45 then j = j + 1 end
    local _, e = string.find(s, '^%d+', j)
    if not e then return nil end
    j = e + 1
  end
  return j
end

local function scan_scalar(s, i)
  local c = string.byte(s, i)
  if c == 34 then return scan_string(s, i) end
  if c == 45 or (c and c >= 48 and c <= 57) then return scan_number(s, i) end
  for _, word in ipairs({ 'true', 'false', 'null' }) do
    if string.sub(s, i, i + #word - 1) == word then return i + #word end
  end
  return nil
end

-- index after '"name" :' starting at i (a quote expected), or nil
local function scan_name(s, i)
  if string.byte(s, i) ~= 34 then return nil end
  local j = scan_string(s, i)
  if not j then return nil end
  j = ws(s, j)
  if string.byte(s, j) ~= 58 then return nil end
  return ws(s, j + 1)
end

-- index after the value starting at i; nested objects and arrays by an explicit stack
local function skip_value(s, i)
  local closers, depth = {}, 0
  while true do
    -- i: the first byte of a value
    local c = string.byte(s, i)
    local complete = true
    if c == 123 or c == 91 then
      depth = depth + 1
      closers[depth] = c + 2
      i = ws(s, i + 1)
      if string.byte(s, i) == closers[depth] then
        depth = depth - 1
        i = i + 1
      else
        complete = false
        if c == 123 then
          i = scan_name(s, i)
          if not i then return nil end
        end
      end
    else
      i = scan_scalar(s, i)
      if not i then return nil end
    end
    if complete then
      -- close containers until the next element (after a comma) or the end of the value
      local more = false
      while depth > 0 and not more do
        i = ws(s, i)
        c = string.byte(s, i)
        if c == closers[depth] then
          depth = depth - 1
          i = i + 1
        elseif c == 44 then
          i = ws(s, i + 1)
          if closers[depth] == 125 then
            i = scan_name(s, i)
            if not i then return nil end
          end
          more = true
        else
          return nil
        end
      end
      if not more then return i end
    end
  end
end

local function utf8(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 0x40), 0x80 + cp % 0x40) end
  if cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 0x1000), 0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
  end
  return string.char(0xF0 + math.floor(cp / 0x40000), 0x80 + math.floor(cp / 0x1000) % 0x40,
    0x80 + math.floor(cp / 0x40) % 0x40, 0x80 + cp % 0x40)
end

-- the text of a valid string token (quotes included), escapes resolved
local function decode_name(tok)
  if not string.find(tok, '\\\\', 1, true) then return string.sub(tok, 2, -2) end
  local out, i, n = {}, 2, #tok - 1
  while i <= n do
    local k = string.find(tok, '\\\\', i, true)
    if not k or k > n then
      out[#out + 1] = string.sub(tok, i, n)
      break
    end
    out[#out + 1] = string.sub(tok, i, k - 1)
    local e = string.sub(tok, k + 1, k + 1)
    if e == 'u' then
      local cp = tonumber(string.sub(tok, k + 2, k + 5), 16)
      i = k + 6
      if cp >= 0xD800 and cp <= 0xDBFF and string.sub(tok, i, i + 1) == '\\\\u' then
        local lo = tonumber(string.sub(tok, i + 2, i + 5), 16)
        if lo and lo >= 0xDC00 and lo <= 0xDFFF then
          cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
          i = i + 6
        end
      end
      out[#out + 1] = utf8(cp)
    else
      out[#out + 1] = ESC[e]
      i = k + 2
    end
  end
  return table.concat(out)
end

local current = redis.pcall('GET', KEYS[1])
if type(current) == 'table' and current.err then
  if string.sub(current.err, 1, 9) == 'WRONGTYPE' then
    local kind = redis.call('TYPE', KEYS[1])
    return redis.error_reply('${MERGE_REFUSED.wrongType} ' .. tostring(kind.ok or kind))
  end
  return redis.error_reply(current.err)
end

local ts_text = ARGV[1]
local ts = tonumber(ts_text)
local updates, pending = {}, {}
for a = 2, #ARGV - 1, 2 do
  local name = decode_name(ARGV[a])
  if name ~= '_ts' then
    if not updates[name] then pending[#pending + 1] = name end
    updates[name] = { ARGV[a], ARGV[a + 1] }
  end
end

local out, stored_ts, has_ts, used = {}, 0, false, {}
if current then
  local s = current
  local i = ws(s, 1)
  if string.byte(s, i) ~= 123 then return redis.error_reply(BADROW .. 'not a JSON object') end
  i = ws(s, i + 1)
  if string.byte(s, i) == 125 then
    i = i + 1
  else
    while true do
      local start = i
      local value_at = scan_name(s, i)
      if not value_at then return redis.error_reply(BADROW .. 'bad member name at byte ' .. i) end
      local value_end = skip_value(s, value_at)
      if not value_end then return redis.error_reply(BADROW .. 'bad value at byte ' .. value_at) end
      local tok = string.sub(s, start, scan_string(s, start) - 1)
      local name = decode_name(tok)
      if name == '_ts' then
        local t = tonumber(string.sub(s, value_at, value_end - 1))
        -- as JSON.parse reads it: the last _ts wins; a non-number or non-finite one counts as 0
        stored_ts = (t and t == t and t ~= math.huge and t ~= -math.huge) and t or 0
        has_ts = true
        out[#out + 1] = tok .. ':' .. ts_text
      elseif updates[name] then
        used[name] = true
        out[#out + 1] = tok .. ':' .. updates[name][2]
      else
        out[#out + 1] = string.sub(s, start, value_end - 1)
      end
      i = ws(s, value_end)
      local c = string.byte(s, i)
      if c == 44 then
        i = ws(s, i + 1)
      elseif c == 125 then
        i = i + 1
        break
      else
        return redis.error_reply(BADROW .. 'expected , or } at byte ' .. i)
      end
    end
  end
  if ws(s, i) <= #s then return redis.error_reply(BADROW .. 'text after the object at byte ' .. i) end
end

-- a missing key is written whatever the timestamp; a stored row only by a newer update
if current and stored_ts >= ts then return 0 end
for _, name in ipairs(pending) do
  if not used[name] then out[#out + 1] = updates[name][1] .. ':' .. updates[name][2] end
end
if not has_ts then out[#out + 1] = '"_ts":' .. ts_text end
redis.call('SET', KEYS[1], '{' .. table.concat(out, ',') .. '}')
return 1
`;
