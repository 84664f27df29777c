import { BadGatewayException, GatewayTimeoutException, HttpException } from '@nestjs/common';
import type { HttpResponse } from '../client-options';
import { isDeadlineExceededError, isRetriesExhaustedError } from '../errors';

/**
 * The answer of a call to the next hop, as this hop's own answer:
 *
 * | the call                                   | this hop                      |
 * |--------------------------------------------|-------------------------------|
 * | answered 1xx-3xx                           | returns the parsed body       |
 * | answered 4xx or 5xx                        | throws the same status and body (`HttpException`) |
 * | ran out of attempts on unknown outcomes    | throws 502 (`BadGatewayException`) |
 * | ran out of time (its deadline, or the caller's) | throws 504 (`GatewayTimeoutException`) |
 *
 * A 502 or 504 says "outcome unknown": with `@Idempotent` it is not final,
 * so this hop's key is released and the caller's retry runs again, carrying
 * the same key down the chain, where the next hop answers from its record.
 * Anything else the call throws (a bug, a closed client) is thrown as is.
 *
 * @example
 * @Post() @Idempotent('orders.place')
 * place(@Body() order: OrderDto) {
 *   return relayAnswer(this.payments.post<Charge>('/charges', order));
 * }
 */
export async function relayAnswer<T>(call: Promise<HttpResponse<T>>): Promise<T> {
  let response: HttpResponse<T>;
  try {
    response = await call;
  } catch (error) {
    if (isDeadlineExceededError(error)) throw new GatewayTimeoutException(error.message, { cause: error });
    if (isRetriesExhaustedError(error)) throw new BadGatewayException(error.message, { cause: error });
    throw error;
  }
  if (response.status >= 400) throw new HttpException(response.body as object, response.status);
  return response.body;
}
