import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

/**
 * Marks a provider that attaches a message transport to the app (the queue
 * folder's consumer): `attachMessageTransports` finds it by this mark, so
 * the root module and `main.ts` name no transport, and an app without the
 * folder attaches none.
 */
export const MessageTransport = DiscoveryService.createDecorator<void>();

/** What a provider marked `@MessageTransport()` does. */
export interface AttachesMessageTransport {
  /** Attach and start the transport's server on `app`, before it listens. */
  attach(app: INestApplication): Promise<void>;
}

/**
 * Attach every message transport the app's modules provide (none for an
 * HTTP-only app). Call before `listen`, after the global pipes are set:
 * Nest builds a consumer's handlers, pipes included, when it is attached.
 */
export async function attachMessageTransports(app: INestApplication): Promise<void> {
  const transports = app.get(DiscoveryService).getProviders({ metadataKey: MessageTransport.KEY });
  for (const transport of transports) await (transport.instance as AttachesMessageTransport).attach(app);
}
