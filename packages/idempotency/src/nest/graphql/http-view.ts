import type { ExecutionContext } from '@nestjs/common';
import type { GraphqlCall } from './graphql-call';

/**
 * A GraphQL resolver's context as the runner, the module's `scope` resolver
 * and a subclass of the runner see it: still a `graphql` context (its
 * `getArgs()` are the resolver's, so `GqlExecutionContext.create` works on
 * it), whose `switchToHttp()` is the HTTP request the operation came over.
 * A scope written for HTTP (`principalScope`, reading `request.user`, or a
 * tenant header) so applies to GraphQL operations unchanged.
 */
export function httpView(context: ExecutionContext, call: GraphqlCall): ExecutionContext {
  const http: ReturnType<ExecutionContext['switchToHttp']> = {
    getRequest: <T>() => call.request as T,
    getResponse: <T>() => call.response as T,
    getNext: <T>() => undefined as T,
  };
  return Object.assign(Object.create(context) as ExecutionContext, { switchToHttp: () => http });
}
