import { hash } from 'node:crypto';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import {
  RecordStatus,
  type ClaimRequest,
  type ClaimResult,
  type InspectableStore,
  type OperatorReleaseResult,
  type StoreDegraded,
  type StoredRecord,
} from '../store';
import { CompletionChannels, type PubSubMode } from './completion-channels';
import { positiveMs } from '../milliseconds';
import { SignalledWaits } from '../signalled-wait';
import { closeConnection, isCluster, openConnection } from './redis-client';
import { WriteCoalescer } from './write-coalescing';
import { ConnectionAnswer } from './connection-answer';
import { clusterMasters, slotsServedBy, type SilentMaster } from './cluster-masters';
import { CLUSTER_SLOTS, keySlot } from './key-slot';
import { fingerprintDigest } from '../fingerprint-digest';
import { isNoScript, LuaScript, type ScriptArgument } from './lua-script';
import {
  ACCESS_SCRIPT,
  CLAIM_SCRIPT,
  completeScript,
  INSPECT_SCRIPT,
  operatorReleaseScript,
  RECORD_FORMAT,
  releaseScript,
  RENEW_SCRIPT,
  WAITING_SCRIPT,
} from './scripts';
import { isIdempotencyError, RecordVersionError, StoreRefusedError } from '../errors';

/**
 * Options of {@link RedisStore}.
 *
 * @public
 */
export interface RedisStoreOptions {
  /**
   * The connection the store runs its scripts on. Configure it to fail fast
   * (`FAIL_FAST_REDIS_OPTIONS`, or `createRedisClient`): a store
   * call must reject while Redis is down, not wait for it to come back.
   */
  client: Redis | Cluster;
  /**
   * Which pub/sub wakes waiters: `sharded` (SPUBLISH/SSUBSCRIBE, Redis 7.0+)
   * by default on a `Cluster`, so a completion travels only within the shard
   * that owns the record; `classic` (PUBLISH/SUBSCRIBE) by default on a
   * single `Redis`, which works on any version.
   */
  pubsub?: PubSubMode;
  /**
   * Wait until this many replicas acknowledge a claim or a completion
   * (`WAIT replicas timeoutMs`) before answering it. Redis replicates
   * asynchronously: without this, a master that fails right after
   * acknowledging a claim can lose it to a promoted replica, and a second
   * request claims the same key. WAIT cannot run inside a script, so it is
   * pipelined right behind the script on the same connection (the same
   * node on a Cluster): no extra network round trip, but the answer now
   * waits for the replica's acknowledgement. A write acknowledged by fewer
   * replicas than asked within `timeoutMs` rejects (the coordinator then
   * fails closed; the claim stays until its lease ends). WAIT narrows the
   * window; it does not make Redis a consensus store: a replica that
   * acknowledged can still lose the race to be promoted. Off by default.
   */
  waitForReplicas?: { replicas: number; timeoutMs: number };
  /** Prepended to every key and channel name. Default `idem:`. */
  prefix?: string;
  /**
   * While waiting, how often the record is re-read in case it left
   * `in_progress` without a message (a lease that ran out silently, a
   * message lost while the subscriber reconnected): once per record,
   * however many requests wait on it. Default 1000 ms.
   */
  pollIntervalMs?: number;
  /** Whether `close()` also quits `client`. Default `false`. */
  ownsClient?: boolean;
}

/**
 * How long the epoch counter lives after the release that left it or the
 * claim that last updated it (or the lease, if longer). While it lives, the
 * counter orders claims made within one millisecond or after the server
 * clock stepped back; by the time it expires, the clock has long passed
 * every epoch it issued, and seeds the next one (see `CLAIM_SCRIPT`).
 */
const EPOCH_TTL_FLOOR_MS = 24 * 60 * 60 * 1000;

/** The store's scripts; completion and release in the pub/sub mode's flavour. */
interface StoreScripts {
  claim: LuaScript;
  complete: LuaScript;
  release: LuaScript;
  renew: LuaScript;
  waiting: LuaScript;
  inspect: LuaScript;
  operatorRelease: LuaScript;
  access: LuaScript;
}

/**
 * A store shared by every replica of a service, in Redis. Each operation is
 * one Lua script, sent as EVALSHA with a transparent EVAL fallback
 * (`LuaScript`), so each is one atomic round trip. All of one record's
 * keys share a hash tag, so they live in one Cluster slot and the scripts
 * stay legal there.
 *
 * Key layout, for a `recordKey` that is already a hash (no user text), its
 * 32 bytes in base64url as the hash tag (`<tag>`, 43 characters; see
 * {@link redisRecordKey}):
 * - `<prefix>{<tag>}`: the record, one string that starts with its format
 *   version (see `scripts.ts`). Its TTL is the lease while in progress, so
 *   a crashed holder's claim vanishes after one lease, and the retention
 *   once completed. A record of another format version (format 1, of
 *   earlier 0.x releases), or the hash of a release from before versions,
 *   is refused (`RecordVersionError`), never read or written over.
 * - `<prefix>{<tag>}:epoch`: the fencing counter, left by a release (a key
 *   never released has none; see `CLAIM_SCRIPT`).
 * - `<prefix>{<tag>}:released`: the owner that released the key, until its
 *   lease would have ended or the next claim, so the same release sent
 *   twice (resent after a reconnect) answers as the first did.
 * - `<prefix>{<tag>}:done`: the channel completion and release publish on,
 *   once a waiter has marked the record.
 *
 * A record keeps 128 bits of a hash of the request's fingerprint and 64
 * bits of a hash of the owner token (see `scripts.ts`): a claim of the same
 * request is answered with the request's own fingerprint, one of another
 * request with the 32 hex digits the record keeps (`keptFingerprint`,
 * what `inspect` reports too).
 *
 * Waiters share one subscriber connection, created with `client.duplicate()`
 * on the first wait and always closed by `close()`. On a `Cluster` the
 * duplicate has `shardedSubscribers` on: one subscriber per master, each
 * SSUBSCRIBE sent to the shard that owns the channel's slot, where the
 * completion script SPUBLISHes it. A waiter on any node is woken, and after
 * a failover ioredis re-subscribes on the promoted replica (the poll covers
 * a message lost in between).
 *
 * ```text
 * waiter:  SUBSCRIBE :done --ok--> GET, mark w --in_progress--> wait for message
 * holder:                  complete: SET, PUBLISH if marked (one script)
 * ```
 * All the requests of a process that wait on one record share one wait:
 * one subscription, one read, one mark, one poll.
 *
 * The record is read and marked only after the subscription is confirmed,
 * so a completion lands either before the read (seen by it) or after the
 * mark (published, and delivered to the subscription): never in between,
 * unseen. A completion nobody waits for publishes nothing.
 *
 * @example
 * import { RedisStore, createRedisClient } from '@idempotency-chain/idempotency/redis';
 *
 * const client = createRedisClient(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * await client.connect();
 * const store = new RedisStore({ client, ownsClient: true });
 * const idempotency = new IdempotencyCoordinator({ service: 'payments', store });
 * // on shutdown
 * await store.close();
 *
 * @public
 */
export class RedisStore implements InspectableStore {
  private readonly client: Redis | Cluster;
  private readonly prefix: string;
  private readonly ownsClient: boolean;
  private readonly pubsub: PubSubMode;
  private readonly scripts: StoreScripts;
  private readonly waitForReplicas: { replicas: number; timeoutMs: number } | undefined;
  private readonly channels: CompletionChannels;
  private readonly writes: WriteCoalescer;
  /** One wait per record however many requests wait on it; `close()` resolves them all. */
  private readonly waits: SignalledWaits;
  private closed = false;

  constructor(options: RedisStoreOptions) {
    this.prefix = checkedPrefix(options.prefix ?? DEFAULT_PREFIX);
    this.waits = new SignalledWaits(positiveMs('pollIntervalMs', options.pollIntervalMs ?? 1000));
    this.ownsClient = options.ownsClient ?? false;
    const client = options.client;
    this.pubsub = options.pubsub ?? (isCluster(client) ? 'sharded' : 'classic');
    this.waitForReplicas = options.waitForReplicas && {
      replicas: Math.max(1, Math.floor(options.waitForReplicas.replicas)),
      timeoutMs: positiveMs('waitForReplicas.timeoutMs', options.waitForReplicas.timeoutMs),
    };
    const publish = this.pubsub === 'sharded' ? 'SPUBLISH' : 'PUBLISH';
    this.scripts = {
      claim: new LuaScript(CLAIM_SCRIPT, 3),
      complete: new LuaScript(completeScript(publish), 1),
      release: new LuaScript(releaseScript(publish), 3),
      renew: new LuaScript(RENEW_SCRIPT, 1),
      waiting: new LuaScript(WAITING_SCRIPT, 1),
      inspect: new LuaScript(INSPECT_SCRIPT, 1),
      operatorRelease: new LuaScript(operatorReleaseScript(publish), 3),
      access: new LuaScript(ACCESS_SCRIPT, 2),
    };
    this.client = client;
    this.connection = new ConnectionAnswer(client);
    client.on('error', this.heardError);
    client.on('node error', this.heard);
    client.on('ready', this.connected);
    this.writes = new WriteCoalescer(client);
    const sharded = this.pubsub === 'sharded';
    // A single subscriber does not reconnect: its subscriptions end with its
    // connection, and the next waiter opens a new one (see CompletionChannels).
    const subscriber = (): Redis | Cluster =>
      isCluster(client)
        ? client.duplicate([], { shardedSubscribers: sharded, lazyConnect: true })
        : client.duplicate({ lazyConnect: true, retryStrategy: () => null });
    this.channels = new CompletionChannels(subscriber, this.pubsub);
  }

  async claim({ recordKey, fingerprint, owner, leaseMs, heartbeatMs }: ClaimRequest): Promise<ClaimResult> {
    const keys = this.keys(recordKey);
    const lease = positiveMs('leaseMs', leaseMs);
    const epochTtl = String(Math.max(lease, EPOCH_TTL_FLOOR_MS));
    // No heartbeat given is kept as none (0): the holder then counts as alive for as long as its lease.
    const heartbeat = String(Math.max(0, Math.floor(heartbeatMs ?? 0)));
    const args = [
      keys.record,
      keys.epoch,
      keys.released,
      keptFingerprintBytes(fingerprint),
      ownerBytes(owner),
      String(lease),
      epochTtl,
      heartbeat,
    ];
    if (!this.waitForReplicas) return toClaimResult(await this.run(this.scripts.claim, args), fingerprint);
    return toClaimResult(await this.send(() => this.replicated(this.scripts.claim, args, 'claim')), fingerprint);
  }

  async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    const { record, channel } = this.keys(recordKey);
    const args = [record, ownerBytes(owner), result, String(positiveMs('retentionMs', retentionMs)), channel];
    if (!this.waitForReplicas) return (await this.run(this.scripts.complete, args)) === 1;
    return (await this.send(() => this.replicated(this.scripts.complete, args, 'completion'))) === 1;
  }

  async release(recordKey: string, owner: string): Promise<boolean> {
    const { record, epoch, released, channel } = this.keys(recordKey);
    const args = [record, epoch, released, ownerBytes(owner), channel, String(EPOCH_TTL_FLOOR_MS)];
    return (await this.run(this.scripts.release, args)) === 1;
  }

  async renew(recordKey: string, owner: string, leaseMs: number): Promise<boolean> {
    const { record } = this.keys(recordKey);
    return (await this.run(this.scripts.renew, [record, ownerBytes(owner), String(positiveMs('leaseMs', leaseMs))])) === 1;
  }

  async waitForChange(recordKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const { record, channel } = this.keys(recordKey);
    return this.waits.wait(
      recordKey,
      () => ({
        join: (wake) => this.channels.join(channel, wake),
        leave: (wake) => this.channels.leave(channel, wake),
        inProgress: async () => refuseOtherFormat(await this.run(this.scripts.waiting, [record])) === RecordStatus.InProgress,
      }),
      timeoutMs,
      signal,
    );
  }

  /**
   * What a record keeps of a request's fingerprint, and `inspect` reports:
   * 32 hex digits, the first 128 bits of SHA-256 of the fingerprint (see
   * `IdempotencyStore.keptFingerprint`).
   */
  keptFingerprint(fingerprint: string): string {
    return keptFingerprint(fingerprint);
  }

  /** The live record at `recordKey`, read by one script (see `InspectableStore`). */
  async inspect(recordKey: string): Promise<StoredRecord | undefined> {
    return toStoredRecord(await this.run(this.scripts.inspect, [this.keys(recordKey).record]));
  }

  /** End the record whoever holds it, by one script: the epoch counter moves past its epoch (see `InspectableStore`). */
  async releaseByOperator(recordKey: string, { force }: { force: boolean }): Promise<OperatorReleaseResult> {
    const { record, epoch, released, channel } = this.keys(recordKey);
    const args = [record, epoch, released, force ? '1' : '0', channel, String(EPOCH_TTL_FLOOR_MS)];
    return toOperatorRelease(await this.run(this.scripts.operatorRelease, args));
  }

  /**
   * Connect `client`: a single `Redis` if it was created with `lazyConnect` and is not connected yet; a
   * `Cluster` until it is ready, within its `readyTimeoutMs` (see `createRedisCluster`; 10 s for one the app made).
   */
  connect(): Promise<void> {
    // A closed store's client stays closed: a boot that retries while shutdown closes it must not reopen it.
    if (this.closed) return Promise.reject(new Error('RedisStore is closed'));
    return openConnection(this.client);
  }

  /**
   * Resolve when Redis answers, and lets the connection's user run the
   * store's scripts and the commands in them on its keys and channels (by
   * `redis.acl_check_cmd` on Redis 7.0 and later, which reads and writes
   * nothing). Rejects with `StoreRefusedError`, naming what is missing,
   * while Redis refuses the user's login (`WRONGPASS`, `NOAUTH`) or its ACL
   * denies a command (`NOPERM`).
   *
   * On a Cluster, every master is asked first: one that does not answer
   * while others do is a shard down, which a Cluster run with
   * `cluster-require-full-coverage no` serves without. The user's access is
   * then checked on every master that answers (ACLs are per node), each with
   * a key of a slot it serves; the ping resolves `{ degraded }` when a
   * master is silent, naming it and the share of the slots it holds: the
   * store's records spread over every slot (see `degradedCluster`), so that
   * is the share of records that fail as in an outage. It rejects when no
   * master answers, or when one that answers refuses the user.
   */
  async ping(): Promise<void | StoreDegraded> {
    if (!isCluster(this.client)) return this.checkAccess(this.keys(PING_RECORD).record);
    const cluster = this.client;
    const { answering, silent } = await clusterMasters(cluster, isRefusal).catch(this.refused);
    // No master known (every connection ended, the client reconnecting): the Cluster client itself says how it fares.
    if (answering.length === 0) return this.checkAccess(this.keys(PING_RECORD).record);
    const checks = await Promise.allSettled(
      answering.map(async ({ node, address }) => {
        const record = probeRecord(this.prefix, slotsServedBy(cluster, address));
        // A master that serves no slot holds none of the store's records.
        if (record === undefined) return false;
        await this.checkAccess(record, node);
        return true;
      }),
    );
    const refusal = checks.find((check) => check.status === 'rejected' && isIdempotencyError(check.reason, StoreRefusedError));
    if (refusal) throw (refusal as PromiseRejectedResult).reason;
    // A master that answered the PING and then failed the check went silent in between.
    checks.forEach((check, i) => {
      const address = answering[i]?.address as string;
      if (check.status === 'rejected') silent.push({ address, slots: slotsServedBy(cluster, address).size });
    });
    const checked = checks.filter((check) => check.status === 'fulfilled' && check.value).length;
    if (silent.length > 0) return { degraded: degradedCluster(silent, checked) };
  }

  /**
   * Resolve when Redis (the Cluster master `node`, when given) lets the
   * connection's user run the store's scripts and their commands on
   * `record` and its channel; reject with `StoreRefusedError` naming what
   * it may not.
   */
  private async checkAccess(record: string, node?: Redis): Promise<void> {
    const sharded = this.pubsub === 'sharded';
    const args = [
      record,
      `${record}:done`,
      sharded ? 'SPUBLISH' : 'PUBLISH',
      sharded ? 'SSUBSCRIBE' : 'SUBSCRIBE',
      this.waitForReplicas ? '1' : '0',
    ];
    const denied = (await (node
      ? this.scripts.access.run(node, args).catch(this.refused)
      : this.run(this.scripts.access, args))) as string[];
    if (denied.length > 0) {
      throw new StoreRefusedError(
        `The Redis user "${this.user()}" may not run ${denied.join(', ')} on the idempotency store's keys and channels: ` +
          `${this.grant()}; requests are refused until then`,
      );
    }
  }

  /** Resolve pending waits, close the subscriber, and quit `client` if owned. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.client.off('error', this.heardError);
    this.client.off('node error', this.heard);
    this.client.off('ready', this.connected);
    this.waits.close();
    this.connection.answer();
    await this.channels.close();
    if (this.ownsClient) await closeConnection(this.client);
  }

  /** Run one script, a refusal rejecting as `StoreRefusedError`. */
  private run(script: LuaScript, args: ScriptArgument[]): Promise<unknown> {
    return this.send(() => script.run(this.client, args));
  }

  /**
   * `attempt`, a refusal rejecting as `StoreRefusedError`. An attempt the
   * client would not send, its connection not ready, is sent again once:
   * when the connection attempt under way turns ready. A connection that
   * dropped while the user's grants were revoked then answers `NOPERM`
   * (refused) instead of an outage; one that simply reconnected, its answer.
   */
  private async send<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      if (!isUnsent(error) || this.isReady()) return this.refused(error);
      await this.connection.settled();
      return this.isReady() ? attempt().catch(this.refused) : this.refused(error);
    }
  }

  /**
   * Reject with `error`, or with `StoreRefusedError` when it is Redis
   * refusing this connection's user: an ACL that denies a command, a key or
   * a channel (`NOPERM`, or a script's command refused for it), or a login
   * refused (`WRONGPASS`, `NOAUTH`). A login refused surfaces on the
   * client's `error` event, not on the command: the command is refused by
   * the client for a connection that is not ready, which would read as an
   * outage, so the store remembers the last refusal it heard until the
   * connection is ready or fails for another reason. Before the client's
   * first connection was answered, and from the loss of a ready connection
   * until the next attempt is (its user may have been disabled, its
   * password rotated meanwhile), there is nothing heard yet: the failure
   * waits for that answer (see `ConnectionAnswer`).
   */
  private readonly refused = async (error: unknown): Promise<never> => {
    if (isRefusal(error)) {
      throw new StoreRefusedError(
        `Redis refuses the idempotency store's user "${this.user()}" (${(error as Error).message}): ${this.grant()}; ` +
          'requests are refused until then',
        { cause: error },
      );
    }
    // Until a connection attempt was answered (the first, or the next after a drop), a command rejected as not
    // connected cannot tell a login refused from an outage: wait for the answer rather than have an operation
    // that fails open run unprotected.
    if (this.client.status !== 'ready') await this.connection.settled();
    const login = this.loginRefused;
    if (login && this.client.status !== 'ready' && isSentinelRefusal(login)) {
      throw new StoreRefusedError(
        `Redis Sentinel refuses the idempotency store's login (${login.message}): ` +
          "check the client's sentinelUsername and sentinelPassword; requests are refused until then",
        { cause: login },
      );
    }
    if (login && this.client.status !== 'ready') {
      throw new StoreRefusedError(
        `Redis refuses the idempotency store's login as "${this.user()}" (${login.message}): ` +
          "check the client's username and password, and that the user is on; requests are refused until then",
        { cause: login },
      );
    }
    throw error;
  };

  /** The last refusal a connection of `client` was answered with, until it is ready or fails for another reason. */
  private loginRefused: Error | undefined;

  /** Whether Redis has answered the client's connection since it was last ready, for a failure before that (see `refused`). */
  private readonly connection: ConnectionAnswer;

  private readonly heard = (error: unknown): void => {
    // A Cluster whose nodes all refuse the login reports it as slots it could not refresh, the refusal its lastNodeError.
    const last = (error as { lastNodeError?: unknown } | null)?.lastNodeError;
    this.loginRefused = isRefusal(error) ? (error as Error) : isRefusal(last) ? (last as Error) : undefined;
    this.connection.answer(error);
  };

  /**
   * The client's own `error` event. ioredis prints an error nobody listens
   * for (`[ioredis] Unhandled error event`); the store's listener must not
   * silence that for an app that added none, so while it is the only one it
   * prints as ioredis would.
   */
  private readonly heardError = (error: unknown): void => {
    this.heard(error);
    if (this.client.listenerCount('error') === 1 && error instanceof Error) {
      console.error('[ioredis] Unhandled error event:', error.stack);
    }
  };

  private readonly connected = (): void => {
    this.loginRefused = undefined;
    this.connection.ready();
  };

  /** Whether the client's connection is ready now (a method, read again after each await). */
  private isReady(): boolean {
    return this.client.status === 'ready';
  }

  /** The user the client logs in as: what an ACL names. */
  private user(): string {
    const options: RedisOptions | undefined = isCluster(this.client) ? this.client.options.redisOptions : this.client.options;
    return options?.username || 'default';
  }

  /** The ACL rule that lets the store's user do what the store does, for an operator to apply. */
  private grant(): string {
    const sharded = this.pubsub === 'sharded';
    const commands = ['evalsha', 'eval', 'info', 'get', 'set', 'setrange', 'pexpireat', 'pttl', 'del', 'time'];
    commands.push(...(sharded ? ['spublish', 'ssubscribe', 'sunsubscribe'] : ['publish', 'subscribe', 'unsubscribe']));
    if (this.waitForReplicas) commands.push('wait');
    return `ACL SETUSER ${this.user()} ${commands.map((c) => `+${c}`).join(' ')} ~${this.prefix}* &${this.prefix}*`;
  }

  /**
   * Run one script and `WAIT` in one pipeline: same connection, same node,
   * one round trip. Rejects when fewer replicas than asked acknowledged.
   */
  private async replicated(script: LuaScript, args: ScriptArgument[], what: string, full = false): Promise<unknown> {
    const { replicas, timeoutMs } = this.waitForReplicas as { replicas: number; timeoutMs: number };
    const replies = (await script.queue(this.client.pipeline(), args, full).call('WAIT', String(replicas), String(timeoutMs)).exec()) ?? [];
    const [[scriptError, reply] = [], [waitError, acknowledged] = []] = replies;
    // The server lost its scripts (a restart): nothing ran, so send the whole script once.
    if (!full && isNoScript(scriptError)) return this.replicated(script, args, what, true);
    if (scriptError) throw scriptError;
    if (waitError) throw waitError;
    if (Number(acknowledged) < replicas) {
      throw new Error(`The ${what} reached ${Number(acknowledged)} of ${replicas} replicas within ${timeoutMs} ms`);
    }
    return reply;
  }

  private keys(recordKey: string): { record: string; epoch: string; released: string; channel: string } {
    if (this.closed) throw new Error('RedisStore is closed');
    this.writes.hold();
    if (recordKey.length === 0) throw new RangeError('Invalid store key');
    const record = `${this.prefix}{${hashTag(recordKey)}}`;
    return { record, epoch: `${record}:epoch`, released: `${record}:released`, channel: `${record}:done` };
  }
}

/** The record key `ping()` checks the user's access on: a record under the store's prefix, never claimed. */
const PING_RECORD = 'idempotency-store:ping';

/**
 * A key under `prefix` whose slot is one of `slots`, for the ping to check
 * the user's access on the master that serves them: a record's name, never
 * claimed (its tag holds `:`, which no record's tag does). Undefined for no
 * slot, or one found by no tag tried (a master of very few slots).
 */
function probeRecord(prefix: string, slots: Set<number>): string | undefined {
  if (slots.size === 0) return undefined;
  for (let n = 0; n < PROBE_TRIES; n += 1) {
    const record = `${prefix}{${PING_RECORD}:${n}}`;
    if (slots.has(keySlot(record))) return record;
  }
  return undefined;
}

/** How many tags `probeRecord` tries: one slot of 16384 is missed with odds of e^-8 (0.03 %). */
const PROBE_TRIES = 8 * CLUSTER_SLOTS;

/**
 * What a degraded Cluster ping says. A record's keys are hashed to their
 * slot by their hash tag alone, the record key's SHA-256 (the prefix is
 * outside the braces): the store's records spread evenly over all 16384
 * slots, whatever the service or its keys, so a silent master holds the
 * share of them that its slots are of all slots, and none when it serves
 * no slot.
 */
function degradedCluster(silent: SilentMaster[], checked: number): string {
  const slots = silent.reduce((sum, master) => sum + master.slots, 0);
  const share = `${((100 * slots) / CLUSTER_SLOTS).toFixed(1)}%`;
  const names = silent.map(({ address, slots: held }) => `${address} (${held} slots)`).join(', ');
  const records =
    slots === 0
      ? "they serve no slot, so none of the store's records live there"
      : `they serve ${slots} of ${CLUSTER_SLOTS} slots; the store's records spread over every slot (a record's hash tag is a hash of its key), ` +
        `so about ${share} of them, whatever their key, live there and fail as in an outage`;
  return `Redis Cluster masters ${names} do not answer: ${records}; the user's access was checked on the ${checked} masters that answer`;
}

/**
 * Whether Redis refused the user: an ACL that denies a command, key or
 * channel (`NOPERM`; a script's command denied reads `The user executing
 * the script can't ...` on Redis 7.0), or a login refused.
 */
function isRefusal(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    /^(?:NOPERM|WRONGPASS|NOAUTH)\b/.test(error.message) ||
    /NOPERM|The user executing the script can't/.test(error.message) ||
    isSentinelRefusal(error)
  );
}

/**
 * Whether `error` is a Sentinel refusing the client's login: ioredis
 * reports it as every sentinel unreachable, the refusal only as the last
 * error, which an outage would name as a connection error.
 */
function isSentinelRefusal(error: Error): boolean {
  return /^All sentinels are unreachable\b.*\bLast error: (?:WRONGPASS|NOAUTH)\b/s.test(error.message);
}

/**
 * Whether the client refused to send a command, its connection not ready
 * and its offline queue off: nothing reached Redis, so it may be sent again.
 */
function isUnsent(error: unknown): boolean {
  return error instanceof Error && /\benableOfflineQueue options is false\b/.test(error.message);
}

/** What `RedisStore` names its keys with when given no `prefix`. */
const DEFAULT_PREFIX = 'idem:';

/** A record key as the coordinator makes it: SHA-256, in hex. */
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** The owner of a record that names none. */
const NO_OWNER = Buffer.alloc(8);

/** `prefix`, unless it holds a brace: it would become the hash tag and split a record's keys across slots. */
function checkedPrefix(prefix: string): string {
  if (/[{}]/.test(prefix)) throw new RangeError('RedisStore prefix must not contain { or }');
  return prefix;
}

/**
 * The hash tag of a record's keys: the record key's 32 bytes in base64url
 * (43 characters, where its hex took 64), all 256 bits of it, so two
 * records never share one. A record key that is not SHA-256 in hex (a
 * store used without the coordinator) is hashed to 32 bytes first, and its
 * tag starts with `=`, which base64url never holds: without it, the key
 * `X` and the key spelling SHA-256 of `X` in hex would share one record,
 * and either be answered with the other's result.
 */
function hashTag(recordKey: string): string {
  if (SHA256_HEX.test(recordKey)) return Buffer.from(recordKey, 'hex').toString('base64url');
  return `=${hash('sha256', recordKey, 'base64url')}`;
}

/**
 * The Redis key `RedisStore` keeps the record of `recordKey` under, with
 * the store's `prefix` (default `idem:`): `<prefix>{<the record key's 32
 * bytes in base64url>}` (for a record key that is not SHA-256 in hex, `=`
 * and its SHA-256 in base64url). For an operator who looks the record up in Redis
 * itself (`redis-cli GET`, `TTL`, `CLUSTER KEYSLOT`); the record's other
 * keys add `:epoch`, `:released` and `:done` to it.
 *
 * @example
 * redisRecordKey(execution.recordKey); // 'idem:{P6HCc...}'
 *
 * @public
 */
export function redisRecordKey(recordKey: string, prefix = DEFAULT_PREFIX): string {
  if (recordKey.length === 0) throw new RangeError('Invalid store key');
  return `${checkedPrefix(prefix)}{${hashTag(recordKey)}}`;
}

/** What a record keeps of a request's fingerprint, in hex: its digest (see `fingerprintDigest`). */
function keptFingerprint(fingerprint: string): string {
  return fingerprintDigest(fingerprint);
}

/** `keptFingerprint` as the 16 bytes the record holds. */
function keptFingerprintBytes(fingerprint: string): Buffer {
  return Buffer.from(keptFingerprint(fingerprint), 'hex');
}

/**
 * The owner token as the record holds it: the first 64 bits of its
 * SHA-256, which tell the claimers of one key apart (an owner token is
 * unique per claim); eight zero bytes for none.
 */
function ownerBytes(owner: string): Buffer {
  // Hex, then 8 bytes from Buffer's pool: a digest returned as a Buffer of its own costs more than the hash.
  return owner === '' ? NO_OWNER : Buffer.from(hash('sha256', owner, 'hex').slice(0, 16), 'hex');
}

/** `reply`, unless a script found a record of another format: then the error that refuses it. */
function refuseOtherFormat(reply: unknown): unknown {
  if (Array.isArray(reply) && reply[0] === 'version') throw new RecordVersionError(String(reply[1]), RECORD_FORMAT);
  return reply;
}

/**
 * A claim's answer, its fingerprint the request's own when the record's is
 * (the script answers `''` then), else the record's as kept, in hex: 32
 * digits, marked in the one case they would spell the request's own
 * fingerprint (a request whose fingerprint is another's kept form), so
 * that it never reads as the same request.
 */
function toClaimResult(reply: unknown, requested: string): ClaimResult {
  const [status, first, second, third] = Array.isArray(refuseOtherFormat(reply)) ? (reply as unknown[]) : [];
  if (status === 'claimed' && Number.isSafeInteger(Number(first))) return { status, epoch: Number(first) };
  const kept = String(first ?? '');
  const fingerprint = first === '' ? requested : kept === requested ? `kept:${kept}` : kept;
  if (status === 'in_progress') return { status, fingerprint, leaseRemainingMs: Number(second) };
  if (status === 'completed') {
    const remainingMs = Number(third);
    return { status, fingerprint, result: String(second ?? ''), ...(remainingMs > 0 && { remainingMs }) };
  }
  throw new Error('Unexpected reply from the idempotency claim script');
}

function toStoredRecord(reply: unknown): StoredRecord | undefined {
  const [status, fingerprint, owner, epoch, pttl, result, renewalAgo, heartbeat] = Array.isArray(refuseOtherFormat(reply))
    ? (reply as unknown[])
    : [];
  if (status === undefined) return undefined;
  if ((status !== RecordStatus.InProgress && status !== RecordStatus.Completed) || !Number.isSafeInteger(Number(epoch))) {
    throw new Error('Unexpected reply from the idempotency inspect script');
  }
  const remainingMs = Number(pttl);
  return {
    status,
    epoch: Number(epoch),
    ownerPresent: owner === '1',
    ...(remainingMs >= 0 && { remainingMs }),
    fingerprint: String(fingerprint),
    ...(renewalAgo !== undefined && renewalAgo !== '' && { lastRenewalMsAgo: Number(renewalAgo), heartbeatMs: Number(heartbeat) }),
    ...(status === RecordStatus.Completed && { result: String(result ?? '') }),
  };
}

function toOperatorRelease(reply: unknown): OperatorReleaseResult {
  const [outcome, before, after] = Array.isArray(refuseOtherFormat(reply)) ? (reply as unknown[]) : [];
  if (outcome === 'absent') return { outcome };
  if (outcome === 'refused_completed') return { outcome, epochBefore: Number(before) };
  if (outcome === 'refused_holder_alive') {
    return { outcome, epochBefore: Number(before), ...(after !== undefined && after !== '' && { lastRenewalMsAgo: Number(after) }) };
  }
  if (outcome === 'released' || outcome === 'forced' || outcome === 'forced_holder_alive')
    return { outcome, epochBefore: Number(before), epochAfter: Number(after) };
  throw new Error('Unexpected reply from the idempotency operator release script');
}
