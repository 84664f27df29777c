import { decodeAnswer, encodeAnswer, type HttpAnswer } from './http-answer';

const answer = (body: Buffer | string): HttpAnswer => ({ status: 201, headers: { 'content-type': 'x/y', link: ['<a>', '<b>'] }, body });

describe('a stored answer', () => {
  it.each([
    ['UTF-8 JSON', Buffer.from('{"note":"ünïcode ✓","n":1}\n{"second":"line"}')],
    ['an empty body', Buffer.alloc(0)],
    ['binary bytes', Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0xfe, 0x80])],
    ['text with a NUL', Buffer.from('a\u0000b')],
    ['a lone continuation byte', Buffer.from([0x61, 0x80])],
  ])('round-trips %s byte for byte, status and headers too', (_name, body) => {
    const decoded = decodeAnswer(encodeAnswer(answer(body)));
    expect(decoded.status).toBe(201);
    expect(decoded.headers).toEqual({ 'content-type': 'x/y', link: ['<a>', '<b>'] });
    expect(Buffer.from(decoded.body).equals(body)).toBe(true);
  });

  it('keeps a string body as it is, and stores it as text unless it holds a NUL', () => {
    const text = answer('{"note":"ünïcode ✓"}');
    expect(encodeAnswer(text)).toBe('{"status":201,"headers":{"content-type":"x/y","link":["<a>","<b>"]}}\n{"note":"ünïcode ✓"}');
    expect(decodeAnswer(encodeAnswer(text)).body).toBe('{"note":"ünïcode ✓"}');
    const nul = answer('a\u0000b');
    expect(Buffer.from(decodeAnswer(encodeAnswer(nul)).body).toString()).toBe('a\u0000b');
  });

  it('keeps UTF-8 text as text (readable in the store), and anything else - or text with a NUL, which PostgreSQL text refuses - as base64', () => {
    expect(encodeAnswer(answer(Buffer.from('{"a":1}')))).toBe(
      '{"status":201,"headers":{"content-type":"x/y","link":["<a>","<b>"]}}\n{"a":1}',
    );
    expect(encodeAnswer(answer(Buffer.from('a\u0000b')))).toContain('"base64":true}\nYQBi');
  });
});
