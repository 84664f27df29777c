import { POLICIES, type Policy } from '@idempotency-chain/scenarios';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { EventStream } from './event-stream';
import { FAULT_CHOICE_SCHEMA } from './faults';
import { Refusal, type CheckoutRequest } from './checkout-request';
import type { LabConsole } from './lab-console';

/** Bounds of "double-click ×N". */
const CLICKS = { min: 2, max: 50 } as const;

const CHECKOUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['mode', 'faults'],
  properties: {
    mode: { enum: ['pay', 'again', 'double-click'] },
    policy: { enum: POLICIES },
    clicks: { type: 'integer', minimum: CLICKS.min, maximum: CLICKS.max },
    faults: FAULT_CHOICE_SCHEMA,
  },
  allOf: [
    { if: { properties: { mode: { enum: ['pay', 'double-click'] } } }, then: { required: ['policy'] } },
    { if: { properties: { mode: { const: 'double-click' } } }, then: { required: ['clicks'] } },
  ],
} as const;

const LAB_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['policy'],
  properties: { policy: { enum: POLICIES } },
} as const;

/** An RFC 9457 problem document, as the services answer theirs. */
function problem(status: number, title: string, detail: string) {
  return { type: 'about:blank', title, status, detail };
}

/**
 * The page's controls as a small JSON API. Every action answers 202 at once
 * (with the number of the action it started) and is seen through the event
 * stream; one that cannot start now is a 409 (another runs) or a 503 (the
 * console is still starting).
 */
export function registerApi(app: FastifyInstance, lab: LabConsole, events: EventStream): void {
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error instanceof Refusal)
      return reply
        .status(error.status)
        .type('application/problem+json')
        .send(problem(error.status, 'Not now', error.message));
    if (error.validation)
      return reply
        .status(400)
        .type('application/problem+json')
        .send(problem(400, 'Bad request', error.message));
    const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
    return reply
      .status(status)
      .type('application/problem+json')
      .send(problem(status, status < 500 ? 'Bad request' : 'Internal error', error.message));
  });

  app.get('/api/state', async () => lab.snapshot());

  app.get('/api/events', (request, reply) => {
    reply.hijack();
    events.attach(reply.raw);
    request.raw.on('close', () => reply.raw.end());
  });

  app.post<{ Body: { policy: Policy } }>('/api/labs', { schema: { body: LAB_SCHEMA } }, async (request, reply) => {
    const { policy } = request.body;
    void lab.prepare(policy);
    return reply.status(202).send({ policy });
  });

  app.post<{ Body: CheckoutRequest }>('/api/checkouts', { schema: { body: CHECKOUT_SCHEMA } }, async (request, reply) =>
    reply.status(202).send({ action: lab.startCheckout(request.body) }),
  );

  app.post('/api/write-up', async (_request, reply) => reply.status(202).send({ action: lab.playWriteUp() }));
}
