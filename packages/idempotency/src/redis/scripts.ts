import { SILENT_AFTER_HEARTBEATS } from '../holder-liveness';

/**
 * The Lua scripts behind `RedisStore`. Redis runs a script to completion
 * before it serves any other command, so each script is one indivisible
 * read-decide-write step: no other client can slip a command between the
 * check and the write the way it could between two round trips. All keys a
 * script touches share one hash tag, so the script stays legal (one slot)
 * on Redis Cluster.
 *
 * A record is one string, format version 2 (see `RECORD`): a fixed header
 * of 33 bytes, then the result.
 *
 * ```text
 * offset  0  '2' '\n'      the format version, as a line: a release that reads format 1 refuses it as version 2
 *         2  state          one byte: p in progress, w in progress with a waiter listening for its end, c completed
 *         3  fingerprint    16 bytes: the first 128 bits of SHA-256 of the request's (see `keptFingerprint` in redis-store.ts)
 *        19  owner          8 bytes: the first 64 bits of SHA-256 of the owner token
 *        27  epoch          6 bytes, big-endian: the fencing epoch (server milliseconds, up to 2^48)
 *        33  result         the stored answer, once completed
 * ```
 *
 * While in progress, a record written by this release carries a tail
 * instead of a result, for an operator to tell a holder still running from
 * a silent one (see `HolderState`):
 *
 * ```text
 *        33  renewed at     6 bytes, big-endian: server ms of the claim, then of each renewal
 *        39  heartbeat      4 bytes, big-endian: the holder's heartbeat interval in ms (0: none)
 * ```
 *
 * Still format 2: every reader of format 2 reads an in-progress record's
 * header only, so an earlier 0.x release reads such a record as it always
 * did, and the completion drops the tail with the rest of the value. An
 * in-progress record without it (claimed by an earlier release) reports no
 * renewal, and its holder counts as alive.
 *
 * Fixed offsets, so the scripts read every field with `string.sub` and
 * `struct` whatever bytes it holds (the fingerprint and the owner arrive as
 * raw bytes, sent by ioredis as Buffers), and the header costs 33 bytes
 * where format 1 spelled out a 64-hex fingerprint, the owner token and the
 * epoch in decimal (some 130): a completed record of a 276-byte answer fits
 * one allocation of 320 bytes instead of 448. The fingerprint only tells the
 * request that claimed a record from another one sent with its key, and
 * the owner only one claimer of the key from another: 128 and 64 bits do
 * that. The owner and the epoch are kept once completed. The key's TTL is
 * the lease while in progress and the retention once completed. One string
 * rather than a hash: a hash holding a result longer than 64 bytes leaves
 * Redis's compact encoding for a table of one entry per field, which cost
 * a record about twice its answer; a string costs its bytes.
 *
 * Each script is idempotent for its own owner: ioredis resends a command
 * whose reply a dropped connection lost (`autoResendUnfulfilledCommands`),
 * and the second run answers as the first did (see `IdempotencyStore`).
 *
 * A value of any other version (format 1, written by earlier 0.x
 * releases), or of another type (a hash: the layout before versions), is
 * never read as a record nor written over: the claim and the waiting
 * script answer `{'version', found}`, which the store raises as
 * `RecordVersionError`, and completion, release and renewal answer 0.
 *
 * Each `redis.call` inside a script costs Redis a few microseconds, a new
 * key with an expiry several more: on the path every request takes (a claim
 * on a new key, its completion) the scripts write one key, and publish only
 * when somebody listens.
 */

/** The record format version the scripts write and read. */
export const RECORD_FORMAT = 2;

/** Bytes before a record's result: version line, state, fingerprint, owner, epoch. */
export const HEADER_BYTES = 33;

/** Bytes of an in-progress record that keeps its last renewal: header, renewed at, heartbeat. */
export const RENEWAL_BYTES = HEADER_BYTES + 10;

/** The epochs a header holds: 6 bytes. */
const EPOCH_LIMIT = 2 ** 48;

/**
 * What every script that reads a record starts with: `record(key)`, the
 * record at `key` parsed, `nil` when there is none, or `nil, found` for a
 * value of another format (`found` its version, `none` for another type,
 * `damaged` for a header that does not parse). A record is `{state, fp,
 * owner, epoch, head, value}`: `fp` and `owner` the raw bytes, `epoch` in
 * decimal, `head` the fingerprint, owner and epoch as they are stored; the
 * result is `value` from byte `HEADER_BYTES + 1` on. `hex(fp)` is a
 * fingerprint as the store reports it.
 */
const RECORD = `
local function record(key)
  local value = redis.pcall('GET', key)
  if not value then return nil end
  if type(value) ~= 'string' then return nil, 'none' end
  if string.sub(value, 1, 2) ~= '${RECORD_FORMAT}\\n' then return nil, string.sub(string.match(value, '^[^\\n]*'), 1, 32) end
  -- A damaged record (a byte overwritten, a value cut short) answers 'damaged', refused like an unknown
  -- version, and never raises a script error, which the store would report as an outage and an operation
  -- that fails open would answer by running its action again.
  local state = string.sub(value, 3, 3)
  if #value < ${HEADER_BYTES} or (state ~= 'p' and state ~= 'w' and state ~= 'c') then return nil, 'damaged' end
  return {
    state = state, fp = string.sub(value, 4, 19), owner = string.sub(value, 20, 27),
    epoch = string.format('%.0f', (struct.unpack('>I6', value, 28))), head = string.sub(value, 4, ${HEADER_BYTES}), value = value,
  }
end
local function hex(fp) return string.format('%08x%08x%08x%08x', struct.unpack('>I4I4I4I4', fp)) end
local function result(held) return string.sub(held.value, ${HEADER_BYTES + 1}) end
-- An in-progress record's last renewal (server ms) and heartbeat interval, or nil when it does not keep them.
local function renewal(held)
  if held.state == 'c' or #held.value < ${RENEWAL_BYTES} then return nil end
  return (struct.unpack('>I6', held.value, ${HEADER_BYTES + 1})), (struct.unpack('>I4', held.value, ${HEADER_BYTES + 7}))
end
`;

/**
 * What every script that sets an expiry starts with: effects replication
 * (TIME is read inside the script, which Redis allows because scripts
 * replicate their effects: the default from Redis 7, `replicate_commands`
 * turns it on for 5 and 6 and is a no-op after), the server's time in ms,
 * and `at(epoch, ms)`: the absolute time `ms` after now, or after `epoch`
 * if that is later. Numbers go back to Redis as `%.0f` strings so a
 * 13-digit time is never written in exponent form.
 *
 * Every expiry of a record, and of the epoch counter, is set with
 * PEXPIREAT to such a time: a key never expires before the server's clock
 * has passed the epoch it holds, even after the clock stepped back (a
 * correction, a failover to a replica whose clock is behind; replicas get
 * the absolute time). So the clock alone gives the next claim a greater
 * epoch, and fencing holds.
 */
const CLOCK = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function at(epoch, ms) return string.format('%.0f', math.max(now, tonumber(epoch) or 0) + tonumber(ms)) end
`;

/**
 * Whether the holder of `held`, an in-progress record, is alive at `now`:
 * `holderState` in holder-liveness.ts, the rule every store applies.
 */
const ALIVE = `
local function alive(held)
  local renewed, heartbeat = renewal(held)
  if not renewed or heartbeat <= 0 then return true end
  return now - renewed <= ${SILENT_AFTER_HEARTBEATS} * heartbeat
end
`;

/**
 * Create the record or report the one that is there.
 *
 * KEYS: record, epoch counter, released-by key. ARGV: fingerprint (16
 * bytes), owner (8 bytes), leaseMs, epoch counter TTL in ms, heartbeat
 * interval in ms (the record's tail). Returns
 * `{'claimed', epoch}` (also to the same owner's claim run again),
 * `{'in_progress', fp, pttl}`, `{'completed', fp, result, pttl}` or
 * `{'version', found}` (`counter` for an epoch counter it cannot go on
 * from); `fp` is `''` when the record's fingerprint is ARGV's, else the
 * record's in hex (so the common answer, a retry of the same request,
 * carries no fingerprint back).
 *
 * Atomic because the existence check and the SET happen inside one script:
 * of any number of concurrent claims exactly one sees no record.
 *
 * Epochs of one key strictly increase. The epoch is `max(counter + 1,
 * server time in ms)`. A record that ends by expiring (a lease run out, a
 * retention over) expires only once the clock has passed its epoch (see
 * `CLOCK`), so the clock alone gives the next claim a greater one. A
 * release deletes the record at once, maybe in the millisecond it was
 * claimed: it leaves its epoch behind in the counter (see the release
 * script), and while the counter lives every claim keeps it up to date. A
 * claim on a key never released, the path of nearly every request, writes
 * no counter.
 */
export const CLAIM_SCRIPT = `${RECORD}
local held, found = record(KEYS[1])
if found then return {'version', found} end
if held and held.state == 'c' then
  return {'completed', held.fp == ARGV[1] and '' or hex(held.fp), result(held), redis.call('PTTL', KEYS[1])}
end
if held and held.owner == ARGV[2] then return {'claimed', held.epoch} end
if held then
  return {'in_progress', held.fp == ARGV[1] and '' or hex(held.fp), math.max(redis.call('PTTL', KEYS[1]), 0)}
end
${CLOCK}
local counter = redis.pcall('GET', KEYS[2])
local previous = type(counter) == 'string' and tonumber(counter) or nil
local issued = math.max((previous or 0) + 1, now)
-- A counter of another type, or one no later epoch fits in 6 bytes after (only a counter written by hand gets
-- this far), is refused as a damaged record is: never a script error, which a fail-open claim would run past.
if type(counter) == 'table' or issued >= ${EPOCH_LIMIT} then return {'version', 'counter'} end
local epoch = string.format('%.0f', issued)
redis.call('SET', KEYS[1], '${RECORD_FORMAT}\\np' .. ARGV[1] .. ARGV[2] .. struct.pack('>I6', issued) .. struct.pack('>I6I4', now, tonumber(ARGV[5]) or 0))
redis.call('PEXPIREAT', KEYS[1], at(epoch, ARGV[3]))
if previous then
  redis.call('SET', KEYS[2], epoch)
  redis.call('PEXPIREAT', KEYS[2], at(epoch, ARGV[4]))
  redis.call('DEL', KEYS[3])
end
return {'claimed', epoch}
`;

/**
 * Store the result if `owner` still holds the lease, then wake waiters.
 *
 * KEYS: record. ARGV: owner (8 bytes), result, retentionMs, completion
 * channel. Returns 1 (also when `owner` had completed it already: the
 * first result stays), or 0 with nothing changed.
 *
 * Atomic because the owner check and the write are one step: a holder whose
 * lease ran out, and whose key someone else claimed since, fails the check
 * and cannot overwrite the new owner's record. The PUBLISH happens in the
 * same step, so a waiter that re-reads the record after being woken always
 * sees the result; it is sent only when a waiter marked the record (`w`,
 * see the waiting script), which it does after subscribing. `SPUBLISH`
 * (sharded pub/sub) is legal here on a Cluster because the channel carries
 * the record's hash tag: same slot, same node.
 */
export const completeScript = (publish: 'PUBLISH' | 'SPUBLISH'): string => `${RECORD}
local held = record(KEYS[1])
if not held or held.owner ~= ARGV[1] then return 0 end
if held.state == 'c' then return 1 end
${CLOCK}
redis.call('SET', KEYS[1], '${RECORD_FORMAT}\\nc' .. held.head .. ARGV[2])
redis.call('PEXPIREAT', KEYS[1], at(held.epoch, ARGV[3]))
if held.state == 'w' then redis.call('${publish}', ARGV[4], 'completed') end
return 1
`;

/**
 * Delete the in-progress record if `owner` still holds it, leave its epoch
 * in the counter, then wake waiters.
 *
 * KEYS: record, epoch counter, released-by key. ARGV: owner (8 bytes),
 * completion channel, epoch counter TTL in ms. Returns 1 or 0.
 *
 * Atomic for the same reason as completion: a stale holder cannot delete a
 * record that a newer claim created under the same key. The counter keeps
 * the next claim's epoch above this one's even within the same millisecond
 * (see the claim script). The released-by key names the owner until the
 * released lease would have ended, or the next claim: the same release run
 * again answers 1 without touching anything.
 */
export const releaseScript = (publish: 'PUBLISH' | 'SPUBLISH'): string => `${RECORD}
local held, found = record(KEYS[1])
if not held and not found and redis.call('GET', KEYS[3]) == ARGV[1] then return 1 end
if not held or held.state == 'c' or held.owner ~= ARGV[1] then return 0 end
local lease = redis.call('PTTL', KEYS[1])
${CLOCK}
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], held.epoch)
redis.call('PEXPIREAT', KEYS[2], at(held.epoch, ARGV[3]))
if lease > 0 then redis.call('SET', KEYS[3], ARGV[1], 'PX', lease) end
if held.state == 'w' then redis.call('${publish}', ARGV[2], 'released') end
return 1
`;

/**
 * Extend the lease to `leaseMs` from now if `owner` still holds it, and
 * note the renewal in the record's tail when it has one (SETRANGE keeps
 * the TTL, which PEXPIREAT then moves).
 *
 * KEYS: record. ARGV: owner (8 bytes), leaseMs. Returns 1 or 0; 1 without a change
 * when `owner` has completed the record (its renewal arriving late).
 *
 * Atomic so a heartbeat that fires just after its lease ran out cannot
 * extend the lease of whoever claimed the key since.
 */
export const RENEW_SCRIPT = `${RECORD}
local held = record(KEYS[1])
if not held or held.owner ~= ARGV[1] then return 0 end
if held.state == 'c' then return 1 end
${CLOCK}
if renewal(held) then redis.call('SETRANGE', KEYS[1], ${HEADER_BYTES}, struct.pack('>I6', now)) end
redis.call('PEXPIREAT', KEYS[1], at(held.epoch, ARGV[2]))
return 1
`;

/**
 * Read the record's status for a waiter that has just subscribed to its
 * channel, and mark an in-progress record (`w`) so that its completion or
 * release publishes.
 *
 * KEYS: record. Returns `in_progress`, `completed`, nil when there is no
 * record, or `{'version', found}`.
 *
 * Atomic, and run after the subscription is confirmed: the record ends
 * either before this read (seen by it) or after the mark (published to the
 * subscribed waiter). A record already marked is only read: however many
 * waiters and polls, a record is written once (replicated and appended to
 * the AOF once). The mark overwrites the state byte in place (SETRANGE),
 * so the record keeps its TTL. A mark Redis refuses (out of memory, too
 * few replicas to write) does not fail the wait: the waiter then learns of
 * the end from its poll, which tries the mark again.
 */
export const WAITING_SCRIPT = `${RECORD}
local held, found = record(KEYS[1])
if found then return {'version', found} end
if not held then return false end
if held.state == 'c' then return 'completed' end
if held.state == 'p' then redis.pcall('SETRANGE', KEYS[1], 2, 'w') end
return 'in_progress'
`;

/**
 * Read a record for an operator, changing nothing.
 *
 * KEYS: record. Returns `{}` when there is no record, `{'version', found}`
 * for a value of another format, else `{state, fp (hex), owner present
 * ('1' | '0': eight zero bytes name none), epoch, pttl, result, ms since
 * the last renewal, heartbeat ms}` (`state` is `in_progress` or
 * `completed`; the result is `''` while in progress; the last two are `''`
 * unless the record keeps its renewals).
 */
export const INSPECT_SCRIPT = `${RECORD}
local held, found = record(KEYS[1])
if found then return {'version', found} end
if not held then return {} end
${CLOCK}
local completed = held.state == 'c'
local renewed, heartbeat = renewal(held)
return {completed and 'completed' or 'in_progress', hex(held.fp), held.owner ~= string.rep('\\0', 8) and '1' or '0', held.epoch,
  redis.call('PTTL', KEYS[1]), completed and result(held) or '',
  renewed and string.format('%.0f', math.max(now - renewed, 0)) or '', heartbeat and string.format('%.0f', heartbeat) or ''}
`;

/**
 * End a record whoever holds it, for an operator: delete it and its
 * released-by key, and leave `epoch + 1` in the counter, an epoch nobody
 * holds, so the next claim's exceeds it (see the claim script). The holder
 * that is still alive then fails every owner check (complete, renew,
 * release) and its resends are no longer recognised. A completed record,
 * or one whose holder is alive (see `ALIVE`), is refused unless ARGV[1] is
 * `1`. A value of another format is refused whatever ARGV[1] says, and
 * left as it is.
 *
 * KEYS: record, epoch counter, released-by key. ARGV: force (`1` | `0`),
 * completion channel, epoch counter TTL in ms. Returns `{'absent'}`,
 * `{'version', found}`, `{'refused_completed', epoch}`,
 * `{'refused_holder_alive', epoch, ms since the last renewal or ''}`, or
 * `{'released' | 'forced' | 'forced_holder_alive', epoch, epoch + 1}`.
 */
export const operatorReleaseScript = (publish: 'PUBLISH' | 'SPUBLISH'): string => `${RECORD}
local held, found = record(KEYS[1])
if found then return {'version', found} end
if not held then return {'absent'} end
if held.state == 'c' and ARGV[1] ~= '1' then return {'refused_completed', held.epoch} end
${CLOCK}
${ALIVE}
local living = held.state ~= 'c' and alive(held)
if living and ARGV[1] ~= '1' then
  local renewed = renewal(held)
  return {'refused_holder_alive', held.epoch, renewed and string.format('%.0f', math.max(now - renewed, 0)) or ''}
end
local after = string.format('%.0f', math.max(tonumber(held.epoch), tonumber(redis.call('GET', KEYS[2])) or 0) + 1)
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('SET', KEYS[2], after)
redis.call('PEXPIREAT', KEYS[2], at(after, ARGV[3]))
if held.state == 'w' then redis.call('${publish}', ARGV[2], 'released') end
return {held.state == 'c' and 'forced' or living and 'forced_holder_alive' or 'released', held.epoch, after}
`;

/**
 * Which of the commands the store's scripts run the connection's user may
 * not run on a record's keys and channel (`redis.acl_check_cmd`, Redis 7.0
 * and later; on earlier servers nothing is listed, and a denied command
 * shows when a script runs it). Nothing is read or written.
 *
 * KEYS[1] a record key, KEYS[2] its channel; ARGV[1] the publish command,
 * ARGV[2] the subscribe command (the waiters' connection logs in as the
 * same user), ARGV[3] '1' when the store waits for replicas (WAIT).
 */
export const ACCESS_SCRIPT = `
if not redis.acl_check_cmd then return {} end
local denied = {}
local function check(name, ...)
  if not redis.acl_check_cmd(name, ...) then denied[#denied + 1] = name end
end
check('GET', KEYS[1])
check('SET', KEYS[1], '')
check('SETRANGE', KEYS[1], '0', '')
check('PEXPIREAT', KEYS[1], '0')
check('PTTL', KEYS[1])
check('DEL', KEYS[1])
check('TIME')
check(ARGV[1], KEYS[2], '')
check(ARGV[2], KEYS[2])
if ARGV[3] == '1' then check('WAIT', '0', '0') end
return denied
`;
