import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { checkDiagramTexts } from '../src';

// Mermaid runs in a child process; give a loaded machine room.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

describe('diagram-check, with Mermaid itself', () => {
  it('passes a diagram whose every message and note reads whole', async () => {
    const report = await checkDiagramTexts([
      [
        'sequenceDiagram',
        '  participant a',
        '  participant b',
        '  a->>b: attempt 1, key 2a5d0e',
        '  Note over b: held 1500 ms',
        '  b-->>a: 201',
      ].join('\n'),
    ]);
    expect(report).toMatchObject({
      diagrams: 1,
      errors: [],
      messages: [
        { diagram: 0, source: 'attempt 1, key 2a5d0e', parsed: 'attempt 1, key 2a5d0e', whole: true },
        { diagram: 0, source: 'held 1500 ms', parsed: 'held 1500 ms', whole: true },
        { diagram: 0, source: '201', parsed: '201', whole: true },
      ],
    });
  });

  it('would catch the labels GitHub used to cut: a # ends the message, a ; breaks the diagram', async () => {
    const old = [
      'sequenceDiagram',
      '  participant Caller',
      '  participant Gateway',
      '  Caller->>Gateway: +0 ms /checkout #1 key 2a5d0e',
    ].join('\n');
    const split = ['sequenceDiagram', '  participant Caller', '  participant Gateway', '  Gateway-->>Caller: 201; replayed'].join('\n');
    const report = await checkDiagramTexts([old, split]);
    expect(report.messages[0]).toMatchObject({ source: '+0 ms /checkout #1 key 2a5d0e', parsed: '+0 ms /checkout', whole: false });
    expect(report.errors.map((e) => e.diagram)).toEqual([1]);
    expect(report.messages[1]?.whole).toBe(false);
  });

  it('refuses to run without a file', async () => {
    const code = await new Promise<number | null>((resolve) =>
      execFile(process.execPath, [join(__dirname, '../dist/cli.js')], (error) => resolve(error ? (error.code as number) : 0)),
    );
    expect(code).toBe(2);
  });
});
