import { randomBytes } from 'node:crypto';
import { Command } from 'ioredis';
import { ScriptCommand } from './lua-script';

/** What ioredis itself would write for `args`, as bytes. */
function ioredisWire(args: (string | number | Buffer)[]): Buffer {
  const wire = new Command('evalsha', args).toWritable({});
  return typeof wire === 'string' ? Buffer.from(wire) : wire;
}

function scriptWire(args: (string | number | Buffer)[]): Buffer {
  const wire = new ScriptCommand('evalsha', args).toWritable();
  return typeof wire === 'string' ? Buffer.from(wire) : wire;
}

describe('ScriptCommand', () => {
  test.each([
    ['strings only', ['0123456789abcdef0123456789abcdef01234567', 1, 'idem:{tag}', '{"a":1}', '30000']],
    [
      'a claim: keys, raw fingerprint and owner, numbers',
      ['sha', 3, 'idem:{t}', 'idem:{t}:epoch', 'idem:{t}:released', randomBytes(16), randomBytes(8), '30000', '86400000', '0'],
    ],
    [
      'a completion: raw owner, an answer beyond ASCII',
      ['sha', 1, 'idem:{t}', randomBytes(8), '{"name":"Zoë ✓ 𝄞"}', '5000', 'idem:{t}:done'],
    ],
    ['a Buffer first and last', [Buffer.from([0, 255, 13, 10]), 'middle', Buffer.from('\r\n$3\r\n')]],
    ['empty strings and an empty Buffer', ['', Buffer.alloc(0), '', Buffer.alloc(0)]],
    ['adjacent Buffers', [randomBytes(8), randomBytes(16), randomBytes(1)]],
    ['a key prefix beyond ASCII', ['sha', 1, 'ключ:{tag}', Buffer.from([0xe2, 0x82])]],
  ] as [string, (string | number | Buffer)[]][])('writes %s byte for byte as ioredis does', (_, args) => {
    expect(scriptWire(args).equals(ioredisWire(args))).toBe(true);
  });

  test('writes a command of strings only as one string, as ioredis does', () => {
    expect(new ScriptCommand('evalsha', ['sha', 0, 'x']).toWritable()).toBe(new Command('evalsha', ['sha', 0, 'x']).toWritable({}));
  });
});
