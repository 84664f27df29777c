import { InvalidKeyError, MissingKeyError } from '@idempotency-chain/idempotency';
import { BadGatewayException, GatewayTimeoutException, HttpException } from '@nestjs/common';
import type { HttpResponse } from '../client-options';
import { DeadlineExceededError, isHttpCallError, OutcomeUnknownError, ResponseTooLargeError, RetriesExhaustedError } from '../errors';
import { problemType } from '../problem-type';

/**
 * Decides whether the next hop's 4xx/5xx answer is the customer's answer
 * (relayed with its status and body) or an answer about this hop itself
 * (its credentials, its routing, the next hop's health), which becomes a 502.
 *
 * @public
 */
export type CustomerAnswerRule = (response: HttpResponse<unknown>) => boolean;

/**
 * Options of `relayAnswer`.
 *
 * @public
 */
export interface RelayOptions {
  /** Which 4xx/5xx of the next hop are relayed as they are. Default `isCustomerAnswer`. */
  isCustomerAnswer?: CustomerAnswerRule;
}

// Declines and validation errors: what the customer sent, judged.
const CUSTOMER_STATUSES = new Set([400, 402, 409, 422]);
// The next hop's 400s about the key this hop sent, not about the customer's request.
const HOP_KEY_TYPES = new Set([new InvalidKeyError('').problemType, new MissingKeyError('').problemType]);

/**
 * The default `CustomerAnswerRule`: only declines and validation errors are
 * the customer's answer. Everything else is about the hop and becomes a 502,
 * which `@Idempotent` never stores: a 401 of an expired service token, a 404
 * during a deploy, a 500 must not be replayed for 24 h once the hop is fixed.
 * An allow-list, so an unforeseen status errs towards a retry, never towards
 * a stored answer that nothing ever earned.
 *
 * | next hop answered                        | default | why                                        |
 * |------------------------------------------|---------|--------------------------------------------|
 * | 400                                      | relayed | the customer's request failed validation; never stored, so it can be corrected |
 * | 400 `invalid-key` / `missing-key`        | 502     | about the key this hop sent                |
 * | 402                                      | relayed | a decline                                  |
 * | 409 (a conflict; the in-flight 409 is retried by the client) | relayed | the customer's request conflicts with the state |
 * | 422                                      | relayed | a validation error (or the customer's key reused with another body) |
 * | 401, 403, 407                            | 502     | this hop's credentials                     |
 * | 404, 405, 410, any other 4xx             | 502     | this hop's routing, or a deploy under way  |
 * | 5xx                                      | 502     | the next hop failed                        |
 *
 * @example
 * // A catalogue whose 404 is the customer's "no such product":
 * relayAnswer(call, { isCustomerAnswer: (r) => r.status === 404 || isCustomerAnswer(r) });
 *
 * @public
 */
export const isCustomerAnswer: CustomerAnswerRule = ({ status, body }) => {
  const type = problemType(body);
  return CUSTOMER_STATUSES.has(status) && !(status === 400 && type !== undefined && HOP_KEY_TYPES.has(type));
};

/**
 * The answer of a call to the next hop, as this hop's own answer:
 *
 * | the call                                   | this hop                      |
 * |--------------------------------------------|-------------------------------|
 * | answered 2xx                               | returns the parsed body       |
 * | answered 3xx (a redirect, not followed: a proxy's login page, http to https) | throws 502 |
 * | answered 4xx/5xx the rule calls the customer's (default: 400, 402, 409, 422) | throws the same status and body (`HttpException`) |
 * | answered any other 4xx/5xx (401, 403, 404, 500...) | throws 502 (`BadGatewayException`) |
 * | ran out of attempts on unknown outcomes, or may not retry one (no key) | throws 502 |
 * | answered with a body over `maxResponseBytes` | throws 502                  |
 * | ran out of time (its deadline, or the caller's) | throws 504 (`GatewayTimeoutException`) |
 *
 * A 502 or 504 is not final: with `@Idempotent` this hop's key is released
 * and the caller's retry runs again, carrying the same key down the chain,
 * where the next hop answers from its record. Which answers are relayed is
 * `options.isCustomerAnswer` (default `isCustomerAnswer`, whose table says why).
 * Anything else the call throws (a bug, a closed client) is thrown as is.
 *
 * @example
 * @Post() @Idempotent('orders.place')
 * place(@Body() order: OrderDto) {
 *   return relayAnswer(this.payments.post<Charge>('/charges', order));
 * }
 *
 * @public
 */
export async function relayAnswer<T>(call: Promise<HttpResponse<T>>, options: RelayOptions = {}): Promise<T> {
  let response: HttpResponse<T>;
  try {
    response = await call;
  } catch (error) {
    if (isHttpCallError(error, DeadlineExceededError)) throw new GatewayTimeoutException(error.message, { cause: error });
    if (
      isHttpCallError(error, RetriesExhaustedError) ||
      isHttpCallError(error, OutcomeUnknownError) ||
      isHttpCallError(error, ResponseTooLargeError)
    ) {
      throw new BadGatewayException(error.message, { cause: error });
    }
    throw error;
  }
  if (response.status >= 200 && response.status < 300) return response.body;
  // A 3xx is no success: the call was not done (redirects are not followed), so it must not be stored as done.
  if (response.status >= 400 && (options.isCustomerAnswer ?? isCustomerAnswer)(response)) {
    throw new HttpException(response.body as object, response.status);
  }
  // The next hop's body is about this hop: it is not the customer's to read.
  throw new BadGatewayException(`the next hop answered ${response.status}, which is not the customer's answer`);
}
