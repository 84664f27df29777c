import {
  InFlightError,
  InvalidKeyError,
  KeyReusedError,
  LeaseLostError,
  MissingKeyError,
  StoreUnavailableError,
  StoredAnswerUnreadableError,
} from '@idempotency-chain/idempotency';
import { BadRequestException, HttpException, ServiceUnavailableException } from '@nestjs/common';
import { settlementOf } from './message-ack.interceptor.js';

describe('settlementOf', () => {
  it.each([
    ['a missing key', new MissingKeyError('no key')],
    ['a malformed key', new InvalidKeyError('bad key')],
    ['a key reused with another body', new KeyReusedError('reused')],
    ['a body that fails validation', new BadRequestException(['amountCents must not be less than 1'])],
    ['a declined payment', new HttpException('declined', 402)],
    ['a stored answer that does not decrypt', new StoredAnswerUnreadableError('not in the keyring')],
  ])('dead-letters %s: it can never succeed as sent', (_name, error) => {
    expect(settlementOf(error)).toBe('dead-letter');
  });

  it.each([
    ['a key still in flight', new InFlightError('in flight', 1)],
    ['a store that is down', new StoreUnavailableError('down')],
    ['a 503 of our own', new ServiceUnavailableException()],
    ['a 429', new HttpException('slow down', 429)],
    ['an unexpected error', new Error('boom')],
  ])('requeues %s: the same message may succeed later', (_name, error) => {
    expect(settlementOf(error)).toBe('requeue');
  });

  it.each([['a lost lease', new LeaseLostError('taken over')]])(
    'acks %s: a newer execution of the same key owns the outcome',
    (_name, error) => {
      expect(settlementOf(error)).toBe('ack');
    },
  );
});
