import { headerValue, MAX_CONTROL_LINE_BYTES, NatsFrameReader } from '../src/broker/nats-frames';

const bytes = (text: string) => Buffer.from(text, 'latin1');

describe('the NATS frame reader', () => {
  it('reads both directions of a connection, a message split anywhere', () => {
    const hmsg = 'NATS/1.0\r\nIdempotency-Key: k-1\r\n\r\n';
    const server = `INFO {"max_payload":1048576, "jetstream":true}\r\nHMSG orders.charge 7 $JS.ACK.S.C.1.2.3.4.0 ${hmsg.length} ${hmsg.length + 5}\r\n${hmsg}hello\r\nPING\r\n+OK\r\n-ERR 'Unknown Protocol Operation'\r\n`;
    const client =
      'CONNECT {"verbose":false}\r\nSUB _INBOX.x 7\r\npub $JS.ACK.S.C.1.2.3.4.0 4\r\n+ACK\r\nPUB a.b _INBOX.r 0\r\n\r\nUNSUB 7 1\r\nPONG\r\n';
    for (const text of [server, client]) {
      const whole = new NatsFrameReader().push(bytes(text));
      // Byte by byte: every frame comes out once, at the byte that completed it.
      const reader = new NatsFrameReader();
      const split = [...text].flatMap((c) => reader.push(bytes(c)));
      expect(split.map(({ start: _, ...f }) => f)).toEqual(whole.map(({ start: _, ...f }) => f));
      expect(split.every((f) => f.start === 0)).toBe(true);
    }
    const [info, msg, ping, ok, err] = new NatsFrameReader().push(bytes(server));
    expect(info).toMatchObject({ op: 'INFO', args: ['{"max_payload":1048576, "jetstream":true}'], start: 0 });
    expect(msg).toMatchObject({ op: 'HMSG', subject: 'orders.charge', reply: '$JS.ACK.S.C.1.2.3.4.0', payload: bytes('hello') });
    expect(headerValue(msg?.headers, 'idempotency-key')).toBe('k-1');
    expect([ping?.op, ok?.op, err?.op, err?.args]).toEqual(['PING', '+OK', '-ERR', ["'Unknown Protocol Operation'"]]);
    const [, , ack, pub] = new NatsFrameReader().push(bytes(client));
    // Lower case is NATS too; the offset is where the frame starts, for the bytes before it to go on alone.
    expect(ack).toMatchObject({ op: 'PUB', subject: '$JS.ACK.S.C.1.2.3.4.0', payload: bytes('+ACK'), start: client.indexOf('pub') });
    expect(pub).toMatchObject({ op: 'PUB', subject: 'a.b', reply: '_INBOX.r', payload: Buffer.alloc(0) });
  });

  it('refuses garbage, an endless control line, a payload past max_payload and bad sizes, then stays broken', () => {
    const cases: [string, RegExp][] = [
      ['GET / HTTP/1.1\r\n', /unknown operation "GET": not NATS/],
      ['x'.repeat(MAX_CONTROL_LINE_BYTES + 1), /longer than 4096 bytes without its CRLF/],
      [`PUB ${'s'.repeat(MAX_CONTROL_LINE_BYTES)} 1\r\n`, /control line of \d+ bytes: at most 4096/],
      ['PUB a 2000\r\n', /PUB of 2000 bytes: larger than the server's max_payload 1000/],
      ['PUB a -1\r\n', /PUB with size "-1": not a number/],
      ['HPUB a 10 5\r\n', /header block of 10 bytes in 5/],
      ['MSG a\r\n', /MSG with 1 arguments: malformed/],
      ['PUB a 2\r\nabcd\r\n', /payload does not end with CRLF/],
    ];
    for (const [text, error] of cases) {
      const reader = new NatsFrameReader();
      reader.maxPayload = 1000;
      expect(() => reader.push(bytes(text))).toThrow(error);
      expect(() => reader.push(bytes('PING\r\n'))).toThrow(error);
    }
  });

  it('reads a payload of max_payload in 64 KiB chunks without copying what it holds with each chunk', () => {
    // 64 MiB is the largest max_payload a server takes: copied again with each chunk, it took minutes.
    const size = 64 * 1024 * 1024;
    const frame = Buffer.concat([bytes(`MSG a 1 ${size}\r\n`), Buffer.alloc(size, 120), bytes('\r\nPING\r\n')]);
    const reader = new NatsFrameReader();
    reader.maxPayload = size;
    const started = performance.now();
    const frames = [];
    for (let at = 0; at < frame.length; at += 65_536) frames.push(...reader.push(frame.subarray(at, at + 65_536)));
    expect(frames.map((f) => [f.op, f.payload?.length])).toEqual([
      ['MSG', size],
      ['PING', undefined],
    ]);
    // Linear reading takes well under a second; the margin is for a loaded machine.
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 60_000);

  it('reads a header absent or in any case, and only in the header lines', () => {
    const block = bytes('NATS/1.0\r\nNats-Msg-Id: m\r\nIDEMPOTENCY-KEY:  k 2 \r\n\r\n');
    expect(headerValue(block, 'Idempotency-Key')).toBe('k 2');
    expect(headerValue(block, 'NATS/1.0')).toBeUndefined();
    expect(headerValue(block, 'other')).toBeUndefined();
    expect(headerValue(undefined, 'Idempotency-Key')).toBeUndefined();
  });
});
