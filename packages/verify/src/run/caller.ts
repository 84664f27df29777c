import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import type { ChainConfig } from '../config/schema';
import { fillCaller, fillTemplate } from '../template';

/** One attempt of the caller and what came back. */
export interface CallerAnswer {
  /** 1-based attempt within the press. */
  attempt: number;
  /** Status, `null` when no answer came (timeout, reset). */
  status: number | null;
  /** Body text; empty when no answer came. */
  body: string;
  /** Why no answer came, e.g. `timeout` or `UND_ERR_SOCKET`. */
  error?: string;
}

/** One press of the button: the caller's attempts until an answer it does not retry. */
export interface Press {
  /** Which press of the scenario this is, e.g. `press`, `click 3`, `later press`. */
  label: string;
  intentId: string;
  /** The key sent, `undefined` when the press sends none. */
  key: string | undefined;
  answers: CallerAnswer[];
}

/** How one press differs from the config's entry request. */
export interface PressOptions {
  label: string;
  /** The id that fills `{{intentId}}` in the body. */
  intentId: string;
  /** Key to send; `undefined` sends none and then the caller does not retry either. */
  key: string | undefined;
  /** Headers of one of several callers, merged over the entry's (`{{intentId}}` is replaced). */
  headers?: Record<string, string>;
  /** A body template instead of the entry's (`key-reuse` changes one field at a time). */
  body?: unknown;
  /** A URL instead of the entry's (`key-reuse` changes one query parameter at a time). */
  url?: string;
  /** Which caller presses, filling `{{caller}}` (default 1). */
  caller?: number;
}

/**
 * The caller at the entry of the chain: sends the config's request with its timeout
 * and retries, as a client (a browser, a mobile app, a partner) would.
 */
export class Caller {
  private readonly agent = new Agent();

  constructor(private readonly entry: ChainConfig['entry']) {}

  /** Presses once: attempts until an answer not in `retryOnStatus` or the retries run out. */
  async press(options: PressOptions): Promise<Press> {
    const press: Press = { label: options.label, intentId: options.intentId, key: options.key, answers: [] };
    // Retrying without a key is unsafe by construction: a caller that sends none sends once.
    const attempts = options.key === undefined ? 1 : 1 + this.entry.retries;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const answer = await this.attempt(attempt, options);
      press.answers.push(answer);
      if (answer.status !== null && !this.entry.retryOnStatus.includes(answer.status)) break;
      if (attempt < attempts) await sleep(this.entry.retryDelayMs);
    }
    return press;
  }

  /**
   * Closes the caller's connections, ending any press still in flight: at the run's
   * deadline one may wait out a long timeout, and the run must not wait with it.
   */
  close(): Promise<void> {
    return this.agent.destroy();
  }

  private async attempt(attempt: number, options: PressOptions): Promise<CallerAnswer> {
    const caller = options.caller ?? 1;
    const headers = fillCaller(fillTemplate(merged(this.entry.headers, options.headers), options.intentId), caller);
    if (options.key !== undefined) headers[this.entry.key.header] = options.key;
    const source = options.body ?? this.entry.body;
    const template = source === undefined ? undefined : fillCaller(fillTemplate(source, options.intentId), caller);
    const body = template === undefined || typeof template === 'string' ? template : JSON.stringify(template);
    if (typeof template === 'object' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    try {
      const answer = await request(options.url ?? this.entry.url, {
        dispatcher: this.agent,
        method: this.entry.method,
        headers,
        body,
        signal: AbortSignal.timeout(this.entry.timeoutMs),
      });
      return { attempt, status: answer.statusCode, body: await answer.body.text() };
    } catch (error) {
      return { attempt, status: null, body: '', error: describe(error) };
    }
  }
}

/** `over` on top of `base`, header names compared without case: a caller's header replaces the entry's. */
function merged(base: Record<string, string>, over: Record<string, string> = {}): Record<string, string> {
  const replaced = new Set(Object.keys(over).map((name) => name.toLowerCase()));
  return { ...Object.fromEntries(Object.entries(base).filter(([name]) => !replaced.has(name.toLowerCase()))), ...over };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timeout';
    return (error as { code?: string }).code ?? error.message;
  }
  return String(error);
}
