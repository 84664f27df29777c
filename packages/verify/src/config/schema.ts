import { z } from 'zod';
import { UNCOPIED_HEADERS } from '../broker/uncopied-headers';
import { missingFor } from '../scenarios/requirements';
import { findCycle } from './cycles';

/** `host:port` a fault proxy listens on; the host defaults to loopback. */
const listenAddress = z
  .string()
  .regex(/^(?:[^:]+:)?\d{1,5}$/, 'expected "host:port" or "port"')
  .describe('address the fault proxy listens on');

const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });

/**
 * A time in ms the verifier sets a timer for: Node fires a timer longer than
 * 2^31 - 1 ms at once, so a longer one (a deadline of a month) would end the
 * run before it starts; refused when the config loads.
 */
const duration = z.number().int().max(2_147_483_647, 'expected at most 2147483647 ms (about 24.8 days): a longer timer fires at once');

/** A request body: a JSON value (sent as JSON) or a raw string; `{{intentId}}` is replaced. */
const bodyTemplate = z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]);

const entry = z.strictObject({
  url: httpUrl,
  method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE', 'GET']).default('POST'),
  headers: z.record(z.string(), z.string()).default({}),
  body: bodyTemplate.optional(),
  key: z
    .strictObject({
      send: z.boolean().default(true),
      header: z.string().min(1).default('Idempotency-Key'),
    })
    .default({ send: true, header: 'Idempotency-Key' }),
  timeoutMs: duration.positive().default(5000),
  retries: z.number().int().min(0).max(20).default(3),
  retryDelayMs: duration.min(0).default(200),
  retryOnStatus: z.array(z.number().int().min(100).max(599)).default([409, 425, 429, 500, 502, 503, 504]),
  /**
   * Two callers (tenants, users) sending the same key, each with headers of its own
   * merged over `headers` and a body merged over `body` (field by field when both are
   * objects): enables `two-callers`. `{{caller}}` anywhere is the caller's number.
   */
  callers: z
    .array(z.strictObject({ headers: z.record(z.string(), z.string()).default({}), body: bodyTemplate.optional() }))
    .length(2, 'expected exactly two callers')
    .optional(),
});

/** How the verifier may run a hop's service itself, so that it can kill and restart it. */
const service = z.strictObject({
  /** Command and arguments; started without a shell. */
  start: z.array(z.string()).min(1),
  cwd: z.string().optional(),
  env: z.record(z.string(), z.string()).default({}),
  /** Polled with GET until it answers 2xx: the service is up. */
  health: httpUrl,
  startTimeoutMs: duration.positive().default(30000),
  /**
   * How to crash it, when killing the started process is not enough (it is a client
   * such as `docker run`): e.g. `[docker, kill, payments]`. Default: SIGKILL to it.
   */
  kill: z.array(z.string()).min(1).optional(),
  /** How to stop it at the end, e.g. `[docker, stop, payments]`. Default: SIGTERM to the started process. */
  stop: z.array(z.string()).min(1).optional(),
});

const hop = z.strictObject({
  name: z.string().regex(/^[A-Za-z][\w-]*$/, 'expected a short name: letters, digits, "-" or "_"'),
  listen: listenAddress,
  // The proxy forwards each request's own path, so a path here would be silently dropped.
  // zod still runs refinements after a failed format check: leave a non-URL to that check.
  upstream: httpUrl.refine((url) => !URL.canParse(url) || (new URL(url).pathname === '/' && !new URL(url).search), {
    error: 'expected an origin such as http://127.0.0.1:8102 (the request path is forwarded as it came)',
  }),
  holdMs: duration.positive().optional(),
  service: service.optional(),
});

/** A JetStream stream or consumer name: no whitespace, dots, wildcards or path separators (JetStream's own rule). */
const jetStreamName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s.*>/\\]+$/, 'expected a JetStream name: no whitespace, ".", "*", ">", "/" or "\\"');

/**
 * A queue between the chain and its deepest consumer: the consumer connects to the
 * verifier's proxy at `listen` instead of the broker. On RabbitMQ (`amqp://`) it reads
 * `queue`; on NATS JetStream (`nats://`) it reads `stream` through the consumer `consumer`.
 */
const queueHop = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z][\w-]*$/, 'expected a short name: letters, digits, "-" or "_"'),
    /** The broker the consumer's connections go on to, and the verifier's own (copies, what is left unacked). */
    broker: z
      .string()
      .regex(/^(?:amqp|nats):\/\/[^/]+/, 'expected an amqp:// or nats:// URL (the proxy reads plain AMQP 0-9-1 or NATS; no TLS)'),
    /** Where the consumer connects instead of the broker. */
    listen: listenAddress,
    /** RabbitMQ: the queue the consumer reads. */
    queue: z.string().min(1).max(255).optional(),
    /** NATS: the JetStream stream the consumer reads. */
    stream: jetStreamName.optional(),
    /** NATS: the JetStream consumer (its durable name) the team's consumer pulls from or is pushed by. */
    consumer: jetStreamName.optional(),
    /** The message header the idempotency key travels in, hashed in reports. */
    keyHeader: z.string().min(1).default('idempotency-key'),
    service: service.optional(),
  })
  .superRefine((queue, context) => {
    const nats = queue.broker.startsWith('nats:');
    const needed = nats ? (['stream', 'consumer'] as const) : (['queue'] as const);
    const foreign = nats ? (['queue'] as const) : (['stream', 'consumer'] as const);
    const kind = nats ? 'a nats:// broker (JetStream)' : 'an amqp:// broker (RabbitMQ)';
    for (const field of needed) {
      if (queue[field] === undefined) context.addIssue({ code: 'custom', path: [field], message: `required with ${kind}` });
    }
    for (const field of foreign) {
      if (queue[field] !== undefined) context.addIssue({ code: 'custom', path: [field], message: `not read with ${kind}` });
    }
    if (nats && UNCOPIED_HEADERS.test(queue.keyHeader)) {
      // duplicate-delivery's copies leave this header out (JetStream would drop them): the key would not travel with a copy.
      context.addIssue({
        code: 'custom',
        path: ['keyHeader'],
        message: `${queue.keyHeader} cannot carry the key: the verifier's copies of a message leave it out, or JetStream would drop them as duplicates; key the message with a header of its own`,
      });
    }
  });

/**
 * How to count the effects of one intent: exactly one of `http`, `command` or `postgres`.
 * One object with optional members rather than a union, so that a bad field inside the
 * chosen way is reported by its own path instead of as "no union member matched".
 */
const effect = z
  .strictObject({
    http: z
      .strictObject({
        url: httpUrl,
        path: z.string().min(1).default('$'),
        headers: z.record(z.string(), z.string()).default({}),
      })
      .optional(),
    command: z.array(z.string()).min(1).optional(),
    cwd: z.string().optional(),
    postgres: z
      .strictObject({
        url: z.string().regex(/^postgres(?:ql)?:\/\//, 'expected a postgres:// URL'),
        query: z.string().min(1),
      })
      .optional(),
  })
  .refine((e) => [e.http, e.command, e.postgres].filter((way) => way !== undefined).length === 1, {
    error: 'expected exactly one of "http", "command" or "postgres"',
  });

const settle = z.strictObject({
  quietMs: duration.positive().default(1000),
  timeoutMs: duration.positive().default(60000),
});

/**
 * Statuses a chain may refuse a reused key with. Never one that means something else:
 * 401/403 (the caller, not the key), 408/409/425/429 (try again later) or a 5xx (broken).
 */
const refusal = z
  .number()
  .int()
  .min(400, 'expected a 4xx')
  .max(499, 'expected a 4xx')
  .refine((status) => ![401, 403, 408, 409, 425, 429].includes(status), {
    error: 'expected a refusal of the key, not 401, 403, 408, 409, 425 or 429',
  });

/** Every scenario the verifier knows, by the name a config or `--scenario` selects it with. */
const SCENARIO_NAMES = [
  'write-up',
  'lost-reply',
  'later-press',
  'late-press',
  'double-click',
  'duplicate',
  'retry-while-running',
  'key-reuse',
  'no-key',
  'reset',
  'unavailable',
  'kill',
  'two-callers',
  'lost-ack',
  'duplicate-delivery',
  'kill-before-ack',
] as const;

/** Every scenario family, in the order the catalog runs them. */
export const ALL_SCENARIOS: readonly ScenarioName[] = SCENARIO_NAMES;

/** The whole config file: what to call, where the proxies sit, how to count an effect. */
export const chainConfigSchema = z
  .strictObject({
    entry,
    hops: z.array(hop).min(1),
    /** A queue after the deepest HTTP hop, whose consumer the verifier stands in front of. */
    queue: queueHop.optional(),
    effect,
    settle: settle.default({ quietMs: 1000, timeoutMs: 60000 }),
    /**
     * The families that must run; absent, every family the config can run (the others
     * are reported as skipped). Kept absent rather than defaulted, so that a family
     * the file names and cannot run is an error and one it leaves out is not.
     */
    scenarios: z.array(z.enum(SCENARIO_NAMES)).min(1).optional(),
    doubleClick: z.strictObject({ presses: z.number().int().min(2).max(50).default(5) }).default({ presses: 5 }),
    keyReuse: z
      .strictObject({
        refusedWith: z.array(refusal).min(1).default([422]),
        /** Body fields (`note`, `customer.ref`) the chain rightly leaves out of its fingerprint: never changed. */
        ignoredFields: z.array(z.string().min(1)).default([]),
        /** Query parameters the chain rightly leaves out of its fingerprint: never changed. */
        ignoredQuery: z.array(z.string().min(1)).default([]),
      })
      .default({ refusedWith: [422], ignoredFields: [], ignoredQuery: [] }),
    /**
     * How long the chain promises to keep a key: a press of the same intent this long
     * after the first (`late-press`) must still be a replay. The team's retry window,
     * shortened to what a CI run can wait for; the default is a floor, not a promise.
     */
    retention: z.strictObject({ minimumMs: duration.positive().default(10_000) }).default({ minimumMs: 10_000 }),
    /** Longest the whole run may take, services' start included: a CI job never hangs on a stuck chain. */
    deadlineMs: duration.positive().default(1_800_000),
  })
  .superRefine((config, context) => {
    const cycle = findCycle(config.hops);
    if (cycle) context.addIssue({ code: 'custom', path: ['hops', cycle.index, 'upstream'], message: cycle.message });
    // A scenario named and never run would leave the gate green without having tested.
    config.scenarios?.forEach((family, index) => {
      const missing = missingFor(family, config);
      if (missing !== undefined) {
        context.addIssue({ code: 'custom', path: ['scenarios', index], message: `"${family}" cannot run: ${missing}` });
      }
    });
  });

/**
 * A validated config with every default filled in.
 *
 * @public
 */
export type ChainConfig = z.infer<typeof chainConfigSchema>;
/** One hop of a validated config. */
export type HopConfig = ChainConfig['hops'][number];
/** The queue hop of a validated config. */
export type QueueHopConfig = NonNullable<ChainConfig['queue']>;
/** How the verifier runs one hop's service. */
export type ServiceConfig = NonNullable<HopConfig['service']>;
/** How a validated config counts the effects of one intent. */
export type EffectConfig = ChainConfig['effect'];
/**
 * The name of a scenario.
 *
 * @public
 */
export type ScenarioName = (typeof SCENARIO_NAMES)[number];
