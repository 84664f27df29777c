/**
 * What the HTTP adapter reads from a request, for both HTTP adapters,
 * without importing either (`@nestjs/platform-*` stay optional).
 */
import { HttpException } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { FingerprintInput } from '../../fingerprint';
import { HeaderName } from '../../header-name';

/** The parts of a Fastify or Express request the runner reads. */
export interface HttpRequestLike {
  method: string;
  /** Fastify: path and query as sent. Express: relative to the router's mount point. */
  url?: string;
  /** Express: path and query as sent. */
  originalUrl?: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  /** Set by Nest's `rawBody: true` option. */
  rawBody?: Buffer;
}

/** A file multer (Express's `FileInterceptor`) took out of a multipart body. */
interface UploadedFile {
  fieldname?: unknown;
  originalname?: unknown;
  mimetype?: unknown;
  size?: unknown;
  buffer?: unknown;
}

const NO_FILES: NonNullable<FingerprintInput['files']> = Object.freeze([]);

/**
 * The files a multipart parser took out of the body (multer's `file` and
 * `files`), for the fingerprint: a key sent again with another file is
 * another request. Their bytes count when they are in memory.
 */
export function uploadedFiles(request: HttpRequestLike & { file?: unknown; files?: unknown }): NonNullable<FingerprintInput['files']> {
  if (request.file === undefined && request.files === undefined) return NO_FILES; // most requests: nothing to collect
  const all = [request.file, ...(Array.isArray(request.files) ? request.files : Object.values(request.files ?? {}).flat())];
  return all
    .filter((file): file is UploadedFile => typeof file === 'object' && file !== null)
    .map((file) => ({
      field: String(file.fieldname ?? ''),
      name: String(file.originalname ?? ''),
      type: String(file.mimetype ?? ''),
      size: Number(file.size ?? 0),
      ...(Buffer.isBuffer(file.buffer) && { bytes: file.buffer }),
    }));
}

/** Whether the request declares a body (RFC 9112: a length above 0, or a transfer coding). */
export function hasBody(request: HttpRequestLike): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (typeof length === 'string' && Number(length) > 0);
}

/** The concrete path and the raw query string of a request, as the client sent them. */
export function requestTarget(request: HttpRequestLike): { path: string; query: string } {
  const url = request.originalUrl ?? request.url ?? '';
  const mark = url.indexOf('?');
  return mark < 0 ? { path: url, query: '' } : { path: url.slice(0, mark), query: url.slice(mark + 1) };
}

/** Absolute deadline (epoch ms) from the caller's `request-timeout-ms`; garbage is ignored. */
export function requestDeadline(request: HttpRequestLike, now?: number): number | undefined {
  const header = request.headers[HeaderName.RequestTimeout];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\s*\d{1,10}\s*$/.test(value)) return undefined;
  return (now ?? Date.now()) + Number(value);
}

/** The Node response under a Fastify reply or an Express response. */
export function rawResponse(response: { raw?: ServerResponse } | ServerResponse): ServerResponse {
  return ('raw' in response && response.raw ? response.raw : response) as ServerResponse;
}

/**
 * A signal aborted when the client goes away before its response is written.
 * It only ends this request's wait: the shared execution is never tied to it.
 */
export function disconnectSignal(raw: ServerResponse): AbortSignal {
  const controller = new AbortController();
  raw.once('close', () => {
    // 499: nobody reads it, but it keeps a vanished client out of the 500 logs.
    if (!raw.writableFinished) controller.abort(new HttpException('Client Closed Request', 499));
  });
  return controller.signal;
}
