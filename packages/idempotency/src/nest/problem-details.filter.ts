import { ArgumentsHost, Catch, ExceptionFilter, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { throwError, type Observable } from 'rxjs';
import { problemOf } from './problem-details';

/**
 * The one place errors become HTTP responses: every error, of this package or
 * not, is answered as an RFC 9457 `application/problem+json` document, with
 * `Retry-After` where the error says when to retry (409 in flight, 503 store
 * down). Works with both HTTP adapters. For RPC handlers it rethrows the
 * problem document as the message's error (the transport's client receives
 * it), keeping other errors as Nest's RPC filter would.
 *
 * @example
 * providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }]
 * // or: app.useGlobalFilters(new ProblemDetailsFilter(app.get(HttpAdapterHost)));
 *
 * @public
 */
@Catch()
@Injectable()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetailsFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): Observable<never> | void {
    if (host.getType() === 'rpc') return this.catchRpc(exception);
    if (host.getType() !== 'http') throw exception;

    const adapter = this.adapterHost.httpAdapter;
    const [request, response] = [host.switchToHttp().getRequest(), host.switchToHttp().getResponse()];
    const url = String(adapter.getRequestUrl(request) ?? '');
    const { status, headers, document, unexpected } = problemOf(exception, url.split('?')[0] || undefined);
    if (unexpected) this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    // The client is gone or the handler already answered: nothing left to render.
    if (adapter.isHeadersSent(response)) return;
    for (const [name, value] of Object.entries(headers)) adapter.setHeader(response, name, value);
    adapter.setHeader(response, 'content-type', 'application/problem+json');
    // Serialised here: handed an object with an error status, the Express adapter resets the type to application/json.
    adapter.reply(response, JSON.stringify(document), status);
  }

  private catchRpc(exception: unknown): Observable<never> {
    // An RpcException (duck-typed: @nestjs/microservices stays optional) carries its own payload.
    const rpcError = (exception as { getError?: () => unknown } | null)?.getError;
    if (typeof rpcError === 'function') return throwError(() => rpcError.call(exception));
    const { document, unexpected } = problemOf(exception);
    if (unexpected) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
      return throwError(() => ({ status: 'error', message: 'Internal server error' }));
    }
    return throwError(() => ({ ...document, message: document.detail ?? document.title }));
  }
}
