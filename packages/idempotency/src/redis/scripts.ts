/**
 * The Lua scripts behind `RedisStore`. Redis runs a script to completion
 * before it serves any other command, so each script is one indivisible
 * read-decide-write step: no other client can slip a command between the
 * check and the write the way it could between two round trips. All keys a
 * script touches share one hash tag, so the script stays legal (one slot)
 * on Redis Cluster.
 *
 * Record hash fields: `status` (`in_progress` | `completed`), `fp`
 * (fingerprint), `owner` (kept once completed), `epoch`, `result` once
 * completed, and `w` once a waiter listens for its end. The key's TTL is the
 * lease while in progress and the retention once completed.
 *
 * Each script is idempotent for its own owner: ioredis resends a command
 * whose reply a dropped connection lost (`autoResendUnfulfilledCommands`),
 * and the second run answers as the first did (see `IdempotencyStore`).
 *
 * Each `redis.call` inside a script costs Redis a few microseconds, a new
 * key with an expiry several more: on the path every request takes (a claim
 * on a new key, its completion) the scripts write one key, and publish only
 * when somebody listens.
 */

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
 * Create the record or report the one that is there.
 *
 * KEYS: record hash, epoch counter, released-by key. ARGV: fingerprint,
 * owner, leaseMs, epoch counter TTL in ms. Returns `{'claimed', epoch}`
 * (also to the same owner's claim run again), `{'in_progress', fp, pttl}` or
 * `{'completed', fp, result, pttl}`.
 *
 * Atomic because the existence check and the HSET happen inside one script:
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
export const CLAIM_SCRIPT = `
local record = redis.call('HMGET', KEYS[1], 'status', 'fp', 'result', 'owner', 'epoch')
if record[1] == 'completed' then
  return {'completed', record[2], record[3], redis.call('PTTL', KEYS[1])}
end
if record[1] and record[4] == ARGV[2] then return {'claimed', record[5]} end
if record[1] then
  return {'in_progress', record[2], math.max(redis.call('PTTL', KEYS[1]), 0)}
end
${CLOCK}
local previous = tonumber(redis.call('GET', KEYS[2]))
local epoch = string.format('%.0f', math.max((previous or 0) + 1, now))
redis.call('HSET', KEYS[1], 'status', 'in_progress', 'fp', ARGV[1], 'owner', ARGV[2], 'epoch', epoch)
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
 * KEYS: record hash. ARGV: owner, result, retentionMs, completion channel.
 * Returns 1 (also when `owner` had completed it already: the first result
 * stays), or 0 with nothing changed.
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
export const completeScript = (publish: 'PUBLISH' | 'SPUBLISH'): string => `
local record = redis.call('HMGET', KEYS[1], 'status', 'owner', 'epoch', 'w')
if record[2] ~= ARGV[1] then return 0 end
if record[1] == 'completed' then return 1 end
${CLOCK}
redis.call('HSET', KEYS[1], 'status', 'completed', 'result', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], at(record[3], ARGV[3]))
if record[4] then redis.call('${publish}', ARGV[4], 'completed') end
return 1
`;

/**
 * Delete the in-progress record if `owner` still holds it, leave its epoch
 * in the counter, then wake waiters.
 *
 * KEYS: record hash, epoch counter, released-by key. ARGV: owner,
 * completion channel, epoch counter TTL in ms. Returns 1 or 0.
 *
 * Atomic for the same reason as completion: a stale holder cannot delete a
 * record that a newer claim created under the same key. The counter keeps
 * the next claim's epoch above this one's even within the same millisecond
 * (see the claim script). The released-by key names the owner until the
 * released lease would have ended, or the next claim: the same release run
 * again answers 1 without touching anything.
 */
export const releaseScript = (publish: 'PUBLISH' | 'SPUBLISH'): string => `
local record = redis.call('HMGET', KEYS[1], 'status', 'owner', 'epoch', 'w')
if not record[1] and redis.call('GET', KEYS[3]) == ARGV[1] then return 1 end
if record[1] ~= 'in_progress' or record[2] ~= ARGV[1] then return 0 end
local lease = redis.call('PTTL', KEYS[1])
${CLOCK}
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], record[3])
redis.call('PEXPIREAT', KEYS[2], at(record[3], ARGV[3]))
if lease > 0 then redis.call('SET', KEYS[3], ARGV[1], 'PX', lease) end
if record[4] then redis.call('${publish}', ARGV[2], 'released') end
return 1
`;

/**
 * Extend the lease to `leaseMs` from now if `owner` still holds it.
 *
 * KEYS: record hash. ARGV: owner, leaseMs. Returns 1 or 0; 1 without a
 * change when `owner` has completed the record (its renewal arriving late).
 *
 * Atomic so a heartbeat that fires just after its lease ran out cannot
 * extend the lease of whoever claimed the key since.
 */
export const RENEW_SCRIPT = `
local record = redis.call('HMGET', KEYS[1], 'status', 'owner', 'epoch')
if record[2] ~= ARGV[1] then return 0 end
if record[1] == 'completed' then return 1 end
${CLOCK}
redis.call('PEXPIREAT', KEYS[1], at(record[3], ARGV[2]))
return 1
`;

/**
 * Read the record's status for a waiter that has just subscribed to its
 * channel, and mark an in-progress record (`w`) so that its completion or
 * release publishes.
 *
 * KEYS: record hash. Returns the status, or nil when there is no record.
 *
 * Atomic, and run after the subscription is confirmed: the record ends
 * either before this read (seen by it) or after the mark (published to the
 * subscribed waiter). A record already marked is only read: however many
 * waiters and polls, a record is written once (replicated and appended to
 * the AOF once). A mark Redis refuses (out of memory, too few replicas to
 * write) does not fail the wait: the waiter then learns of the end from its
 * poll, which tries the mark again.
 */
export const WAITING_SCRIPT = `
local record = redis.call('HMGET', KEYS[1], 'status', 'w')
if record[1] == 'in_progress' and not record[2] then redis.pcall('HSET', KEYS[1], 'w', '1') end
return record[1]
`;

/**
 * Read a record for an operator, changing nothing.
 *
 * KEYS: record hash. Returns `{}` when there is no record, else `{status,
 * fp, owner present ('1' | '0'), epoch, pttl, result or false}`.
 */
export const INSPECT_SCRIPT = `
local record = redis.call('HMGET', KEYS[1], 'status', 'fp', 'owner', 'epoch', 'result')
if not record[1] then return {} end
return {record[1], record[2] or '', record[3] and '1' or '0', record[4], redis.call('PTTL', KEYS[1]), record[5] or false}
`;

/**
 * End a record whoever holds it, for an operator: delete it and its
 * released-by key, and leave `epoch + 1` in the counter, an epoch nobody
 * holds, so the next claim's exceeds it (see the claim script). The holder
 * that is still alive then fails every owner check (complete, renew,
 * release) and its resends are no longer recognised. A completed record is
 * refused unless ARGV[1] is `1`.
 *
 * KEYS: record hash, epoch counter, released-by key. ARGV: force (`1` |
 * `0`), completion channel, epoch counter TTL in ms. Returns `{'absent'}`,
 * `{'refused_completed', epoch}`, or `{'released' | 'forced', epoch,
 * epoch + 1}`.
 */
export const operatorReleaseScript = (publish: 'PUBLISH' | 'SPUBLISH'): string => `
local record = redis.call('HMGET', KEYS[1], 'status', 'epoch', 'w')
if not record[1] then return {'absent'} end
if record[1] == 'completed' and ARGV[1] ~= '1' then return {'refused_completed', record[2]} end
${CLOCK}
local after = string.format('%.0f', math.max(tonumber(record[2]), tonumber(redis.call('GET', KEYS[2])) or 0) + 1)
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('SET', KEYS[2], after)
redis.call('PEXPIREAT', KEYS[2], at(after, ARGV[3]))
if record[3] then redis.call('${publish}', ARGV[2], 'released') end
return {record[1] == 'completed' and 'forced' or 'released', record[2], after}
`;
