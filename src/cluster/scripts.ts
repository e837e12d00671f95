import { createHash } from 'node:crypto';

/** A Lua script with its SHA-1, for EVALSHA. */
export interface LuaScript {
  readonly lua: string;
  readonly sha: string;
}

function luaScript(lua: string): LuaScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/*
 * The Lua scripts: each decision that reads and writes is one atomic script, timed by Redis's own
 * clock (TIME), so instances whose clocks disagree still agree on it. The shared tier's scripts
 * build their keys from the prefix (ARGV[1]); each script is also given one key (KEYS), which is
 * how Redis Cluster finds the node to run it on. On Redis Cluster the tier's prefix is in a hash
 * tag (`{hypergate:}`), so every key a tier script touches is in that key's slot; rate-limit
 * buckets and idempotency records are one key per script and keep the plain prefix. The layout
 * under redis.keyPrefix (docs/operations.md "Running many instances"):
 *
 *   gen                 generation of the shared tier; a purge of everything moves it on
 *   c:<gen>:<path>      a shared cache entry: "<Redis ms when written>\n<meta JSON>\n<body>"
 *   g:<gen>:<group>     the paths of an invalidation group (a collection's pages, what lies below an item)
 *   i:k:<path>, i:g:<group>, i:all
 *                       when a key, a group or everything was last invalidated (Redis ms), kept a
 *                       little longer than any load takes: a load that began before may not store
 *   l:<path>            the herd lock: which instance is fetching this path from the upstream
 *   rl:s:<realm>:<subject>, rl:a:<address>
 *                       a rate-limit bucket (GCRA: its theoretical arrival time, µs); the realm
 *                       names the key source and issuer whose subject it is (auth/realm.ts)
 *   pl:{<realm>:s:<subject>}:<policies>, pl:{<realm>:a:<address>}:<policies>
 *                       a plan's or a route limit's bucket (GCRA, as rl:), with its quota counts
 *                       beside it: <bucket key>:d<day> and :m<month> (days and months since 1970,
 *                       UTC); the braces keep one decision's keys in one Redis Cluster hash slot
 *   idem:<hash>         an idempotency record (the hash covers realm, issuer, subject and key)
 *   invalidate          the pub/sub channel of invalidations
 */

const NOW_MS = `local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * A local miss asks the tier. ARGV: prefix, path. Returns {now, entry} or, when there is none,
 * {now, 1 if another instance holds the herd lock else 0}. `now` (Redis ms) dates the load: the
 * write that ends it is refused if anything it covers was invalidated since.
 */
export const TIER_READ = luaScript(`${NOW_MS}
local p = ARGV[1]
local gen = redis.call('GET', p .. 'gen') or '0'
local v = redis.call('GET', p .. 'c:' .. gen .. ':' .. ARGV[2])
if v then return {nowms(), v} end
return {nowms(), redis.call('EXISTS', p .. 'l:' .. ARGV[2])}
`);

/**
 * Shares a fetched entry. ARGV: prefix, path, since (the load's TIER_READ time), ttl ms, payload,
 * groups... Stored unless the path, one of its groups or everything was invalidated at or after
 * `since`. Returns 1 when stored.
 */
export const TIER_WRITE = luaScript(`${NOW_MS}
local p, path, since, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local function dropped(key)
  local at = redis.call('GET', p .. key)
  return at and tonumber(at) >= since
end
if dropped('i:all') or dropped('i:k:' .. path) then return 0 end
for i = 6, #ARGV do
  if dropped('i:g:' .. ARGV[i]) then return 0 end
end
local gen = redis.call('GET', p .. 'gen') or '0'
redis.call('SET', p .. 'c:' .. gen .. ':' .. path, nowms() .. '\\n' .. ARGV[5], 'PX', ttl)
for i = 6, #ARGV do
  local g = p .. 'g:' .. gen .. ':' .. ARGV[i]
  redis.call('SADD', g, path)
  if redis.call('PTTL', g) < ttl then redis.call('PEXPIRE', g, ttl) end
end
return 1
`);

/**
 * The one invalidation: drops the keys and every member of the groups from the tier, marks them
 * invalidated (for loads under way) and tells every instance. ARGV: prefix, mark ms, message,
 * number of keys, keys..., groups... Returns PUBLISH's count of instances reached.
 */
export const INVALIDATE = luaScript(`${NOW_MS}
local p, mark, n = ARGV[1], ARGV[2], tonumber(ARGV[4])
local now = nowms()
local gen = redis.call('GET', p .. 'gen') or '0'
for i = 5, 4 + n do
  redis.call('DEL', p .. 'c:' .. gen .. ':' .. ARGV[i])
  redis.call('SET', p .. 'i:k:' .. ARGV[i], now, 'PX', mark)
end
for i = 5 + n, #ARGV do
  local g = p .. 'g:' .. gen .. ':' .. ARGV[i]
  for _, member in ipairs(redis.call('SMEMBERS', g)) do redis.call('DEL', p .. 'c:' .. gen .. ':' .. member) end
  redis.call('DEL', g)
  redis.call('SET', p .. 'i:g:' .. ARGV[i], now, 'PX', mark)
end
return redis.call('PUBLISH', p .. 'invalidate', ARGV[3])
`);

/**
 * Everything: a new generation (the old entries are never read again and expire on their own),
 * marked for loads under way, and told to every instance. ARGV: prefix, mark ms, message.
 */
export const CLEAR = luaScript(`${NOW_MS}
local p = ARGV[1]
redis.call('INCR', p .. 'gen')
redis.call('SET', p .. 'i:all', nowms(), 'PX', ARGV[2])
return redis.call('PUBLISH', p .. 'invalidate', ARGV[3])
`);

/** Releases the herd lock if this instance still holds it. ARGV: lock key, owner. */
export const UNLOCK = luaScript(`
if redis.call('GET', ARGV[1]) == ARGV[2] then return redis.call('DEL', ARGV[1]) end
return 0
`);

/**
 * A GCRA bucket read on Redis's clock: `now` (µs), `interval` (µs between requests), `burst`,
 * `limit` (µs a full bucket spans) and `tat`, the bucket's theoretical arrival time, never before now.
 */
function gcraAt(key: string, interval: string, burst: string): string {
  return `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, burst = tonumber(${interval}), tonumber(${burst})
local tat = tonumber(redis.call('GET', ${key}) or '0')
if tat < now then tat = now end
local limit = interval * burst`;
}

/**
 * One rate-limit decision, GCRA (the generic cell rate algorithm: a token bucket kept as one
 * number, the theoretical arrival time). ARGV: bucket key, emission interval µs (1e6 / rate),
 * burst, and "take" or "charge". take: {1, 0} when allowed, {0, ms until the next request may
 * pass} when not. charge (a failed authentication, charged to its address): taken even past empty,
 * since each failure was verified and so is paid for (concurrent ones push the wait further out);
 * returns the ms until the address may fail once more, 0 while its budget has room. The key
 * expires when the bucket is full again, so an idle client costs nothing.
 */
export const RATE = luaScript(`${gcraAt('ARGV[1]', 'ARGV[2]', 'ARGV[3]')}
local next = tat + interval
local charge = ARGV[4] == 'charge'
if not charge and next - now > limit then return {0, math.ceil((next - limit - now) / 1000)} end
redis.call('SET', ARGV[1], string.format('%.0f', next), 'PX', math.ceil((next - now) / 1000))
if charge then return math.max(0, math.ceil((next + interval - limit - now) / 1000)) end
return {1, 0}
`);

/**
 * One decision of a plan or a route limit: its bucket (GCRA, as RATE) and its quotas, all or
 * nothing. KEYS: the bucket, then one count per quota (all in one hash slot). ARGV: emission
 * interval µs, burst, then per quota its requests and how long its count is kept (ms: until the end
 * of its period by the instance's clock, and a margin; relative, so clocks that disagree cannot
 * drop a count early). The request passes when the bucket has a token and every
 * quota has room; then each is taken. Returns {1 if passed else 0, whole tokens left, ms until the
 * next token (0 when there is one), bit i set when quota i has no room, then each quota's count}.
 */
export const PLAN = luaScript(`${gcraAt('KEYS[1]', 'ARGV[1]', 'ARGV[2]')}
local tokens = math.max(0, math.floor((limit - (tat - now)) / interval))
local wait = 0
if tat + interval - now > limit then wait = math.ceil((tat + interval - limit - now) / 1000) end
local used, spent, bit = {}, 0, 1
for i = 2, #KEYS do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  used[i - 1] = n
  if n + 1 > tonumber(ARGV[1 + 2 * (i - 1)]) then spent = spent + bit end
  bit = bit * 2
end
if wait > 0 or spent > 0 then return {0, tokens, wait, spent, unpack(used)} end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - now) / 1000))
for i = 2, #KEYS do
  used[i - 1] = redis.call('INCR', KEYS[i])
  redis.call('PEXPIRE', KEYS[i], ARGV[2 + 2 * (i - 1)])
end
return {1, tokens - 1, 0, 0, unpack(used)}
`);

/**
 * Starts an idempotent request. ARGV: record key, fingerprint, lease ms. A new key is taken
 * ("p\\n<fingerprint>", for the lease); else the record says in-progress, completed (with the
 * answer) or mismatch (another request used this key).
 */
export const IDEMPOTENCY_BEGIN = luaScript(`
local v = redis.call('GET', ARGV[1])
if not v then
  redis.call('SET', ARGV[1], 'p\\n' .. ARGV[2], 'PX', ARGV[3])
  return {'new'}
end
local rest = string.sub(v, 3)
local nl = string.find(rest, '\\n', 1, true)
local fp = nl and string.sub(rest, 1, nl - 1) or rest
if fp ~= ARGV[2] then return {'mismatch'} end
if string.sub(v, 1, 1) == 'p' then return {'in-progress'} end
return {'completed', string.sub(rest, nl + 1)}
`);

/** Stores the final answer unless another request's record holds the key. ARGV: record key, fingerprint, answer, ttl ms. */
export const IDEMPOTENCY_COMPLETE = luaScript(`
local v = redis.call('GET', ARGV[1])
if v and v ~= 'p\\n' .. ARGV[2] then return 0 end
redis.call('SET', ARGV[1], 'c\\n' .. ARGV[2] .. '\\n' .. ARGV[3], 'PX', ARGV[4])
return 1
`);

/** Forgets an unfinished record of this fingerprint. ARGV: record key, fingerprint. */
export const IDEMPOTENCY_ABANDON = luaScript(`
if redis.call('GET', ARGV[1]) == 'p\\n' .. ARGV[2] then return redis.call('DEL', ARGV[1]) end
return 0
`);

/** Every script, loaded when a connection is made. */
export const SCRIPTS: readonly LuaScript[] = [
  TIER_READ,
  TIER_WRITE,
  INVALIDATE,
  CLEAR,
  UNLOCK,
  RATE,
  PLAN,
  IDEMPOTENCY_BEGIN,
  IDEMPOTENCY_COMPLETE,
  IDEMPOTENCY_ABANDON,
];
