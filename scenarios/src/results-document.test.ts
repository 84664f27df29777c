import { parseSections, resultsDocument, section } from './results-document';

const ORDER = ['write-up', 'double-click', 'retention'];

describe('RESULTS.md as sections', () => {
  const full = resultsDocument(
    new Map([
      ['write-up', section('write-up', '## The write-up\n\nfirst run')],
      ['double-click', section('double-click', '### Double-click\n\nfirst run')],
      ['retention', section('retention', '### Retention\n\nfirst run')],
    ]),
    ORDER,
  );

  it('reads back every section it wrote, markers included', () => {
    const sections = parseSections(full);
    expect([...sections.keys()]).toEqual(ORDER);
    expect(sections.get('retention')).toBe('<!-- section retention -->\n### Retention\n\nfirst run\n<!-- /section retention -->');
  });

  it('replaces only the sections a partial run ran, and keeps every other one byte for byte', () => {
    const sections = parseSections(full);
    sections.set('double-click', section('double-click', '### Double-click\n\nsecond run'));
    const updated = resultsDocument(sections, ORDER);
    expect(updated).toContain('second run');
    expect(updated.replace('second run', 'first run')).toBe(full);
  });

  it('puts the failures under their own heading, after the write-up, in the given order', () => {
    const doc = resultsDocument(parseSections(full), ORDER);
    const at = (text: string) => doc.indexOf(text);
    expect(at('## The write-up')).toBeLessThan(at('## Beyond the write-up'));
    expect(at('## Beyond the write-up')).toBeLessThan(at('### Double-click'));
    expect(at('### Double-click')).toBeLessThan(at('### Retention'));
  });

  it('keeps nothing from a file without markers, or from a section cut short', () => {
    expect(parseSections('# Results\n\n### old format\n').size).toBe(0);
    expect(parseSections('<!-- section retention -->\n### Retention\n').size).toBe(0);
  });
});
