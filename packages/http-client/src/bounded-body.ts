import type { Dispatcher } from 'undici';

/** What `readBoundedBody` throws: the body went past the cap, and its stream was destroyed. */
export class BodyTooLarge extends Error {
  constructor(
    /** Status of the response whose body it is. */
    readonly status: number,
    readonly maxBytes: number,
    /** Bytes received before reading stopped (0 when refused on its `content-length`). */
    readonly bytesRead: number,
  ) {
    super(`response body over ${maxBytes} bytes (read ${bytesRead})`);
    this.name = 'BodyTooLarge';
  }
}

/**
 * Read a response body as UTF-8 text, holding at most `maxBytes` of it (plus
 * the chunk that crossed the line). A body announced larger by its
 * `content-length` is refused before a byte is read; one that grows past the
 * cap is cut off there. Either way the stream is destroyed, which closes the
 * connection rather than draining the rest into memory.
 */
export async function readBoundedBody(response: Dispatcher.ResponseData, maxBytes: number): Promise<string> {
  const { statusCode, headers, body } = response;
  if (Number(headers['content-length']) > maxBytes) {
    body.destroy();
    throw new BodyTooLarge(statusCode, maxBytes, 0);
  }
  const chunks: Buffer[] = [];
  let bytesRead = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    bytesRead += chunk.length;
    if (bytesRead > maxBytes) {
      body.destroy();
      throw new BodyTooLarge(statusCode, maxBytes, bytesRead);
    }
    chunks.push(chunk);
  }
  // TextDecoder, as undici's body.text(): UTF-8, a leading BOM dropped.
  return new TextDecoder().decode(Buffer.concat(chunks));
}
