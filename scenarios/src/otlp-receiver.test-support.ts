import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as an OTLP exporter sent it, its attributes flattened. */
export interface ReceivedSpan {
  /** `service.name` of the process that sent it. */
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's numbering: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

/** OTLP/JSON's typed value: a string, a number (as a string for 64-bit ints), a boolean. */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  /** Header attributes are string arrays. */
  arrayValue?: { values?: AnyValue[] };
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{ spans?: Array<Omit<ReceivedSpan, 'service' | 'attributes'> & { attributes?: KeyValue[] }> }>;
  }>;
}

/** SpanKind numbers of OTLP. */
export const SpanKindNumber = { Server: 2, Client: 3 } as const;

/**
 * The receiving end of the services' real OTLP/HTTP exporters, the way a
 * collector or Jaeger receives them on `:4318/v1/traces` (JSON encoding, what
 * `@opentelemetry/exporter-trace-otlp-http` sends), keeping every span in memory.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private readonly listeners = new Set<() => void>();
  private server!: Server;
  /** What to set `OTEL_EXPORTER_OTLP_ENDPOINT` to. */
  endpoint = '';

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    receiver.server = createServer((request, response) => {
      void readBody(request).then((body) => {
        if (request.url === '/v1/traces') receiver.add(JSON.parse(body.toString()) as ExportRequest);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.endpoint = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  /** Resolves once `done(spans)` holds, checked on every export; rejects after `boundMs`, saying what arrived. */
  until(done: (spans: ReceivedSpan[]) => boolean, boundMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done(this.spans)) return;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`not received within ${boundMs} ms; got ${this.spans.map((s) => `${s.service} ${s.name}`).join(', ')}`));
      }, boundMs);
      this.listeners.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private add(request: ExportRequest): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(flatten(resourceSpans.resource?.attributes)['service.name']);
      for (const { spans = [] } of resourceSpans.scopeSpans ?? []) {
        for (const { attributes, ...span } of spans) this.spans.push({ ...span, service, attributes: flatten(attributes) });
      }
    }
    for (const listener of [...this.listeners]) listener();
  }
}

/** Attributes as a plain object: 64-bit ints as numbers, arrays joined with `,`. */
function flatten(attributes: KeyValue[] = []): Record<string, string | number | boolean> {
  const flat: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    const scalar = scalarOf(value);
    if (scalar !== undefined) flat[key] = scalar;
  }
  return flat;
}

function scalarOf(value: AnyValue): string | number | boolean | undefined {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(scalarOf).join(',');
  if (typeof value.intValue === 'string') return Number(value.intValue);
  return value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}
