import type { ExecutionContext } from '@nestjs/common';
import type { Registry } from 'prom-client';
import type { IdempotencyObserver } from '../observer';
import type { OperationPolicy } from '../policy';
import type { IdempotencyStore } from '../store';

/**
 * What a route does when a request carries no `Idempotency-Key`.
 *
 * - `required`: refuse it with 400 (`MissingKeyError`) before any claim.
 * - `optional`: run it unprotected.
 * - `fingerprint`: the request fingerprint becomes the key, so identical
 *   payloads to the same route collapse into one execution (the lab's
 *   fallback policy).
 * - `off`: no protection at all; even a key that is sent is ignored (the
 *   lab's `none` policy).
 */
export type KeyMode = 'required' | 'optional' | 'fingerprint' | 'off';

/** Options of `IdempotencyModule.forRoot` (or returned by `forRootAsync`'s factory). */
export interface IdempotencyModuleOptions {
  /** This service's name: part of every record's identity. */
  service: string;
  store: IdempotencyStore;
  /** Policy for every operation of this service. */
  defaults?: Partial<OperationPolicy>;
  /** Per-operation policy, over the defaults. */
  operations?: Record<string, Partial<OperationPolicy>>;
  /** What a route does without a key, unless `@Idempotent` says otherwise. Default `required`. */
  keyMode?: KeyMode;
  /**
   * The caller's principal or tenant, so one caller can never replay another's
   * stored response by presenting the same key. Unset: one shared scope.
   */
  scope?: (context: ExecutionContext) => string | undefined;
  /** More observers of the coordinator's events (logs, traces), next to the metrics. */
  observers?: IdempotencyObserver[];
  /**
   * Where the Prometheus metrics are registered: a given registry, prom-client's
   * default `register` when unset, or a private registry nobody scrapes (`false`).
   */
  metrics?: { registry?: Registry } | false;
  /** Close the store on application shutdown. Default `false`: the app may share it. */
  closeStore?: boolean;
}

/** Options of `@Idempotent`: how the route reads its key, and its policy over the operation's. */
export type IdempotentOptions = {
  /** Overrides the module's `keyMode` for this route. */
  keyMode?: KeyMode;
  /** Fingerprint only these top-level body fields (e.g. to ignore a client timestamp). */
  fingerprintFields?: string[];
} & Partial<OperationPolicy>;

/** What `@Idempotent` stores on a handler. */
export interface IdempotentMetadata {
  operation: string;
  keyMode?: KeyMode;
  fingerprintFields?: string[];
  policy: Partial<OperationPolicy>;
}
