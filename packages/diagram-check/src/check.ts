/** One message or note of a diagram: what the source says, and what Mermaid read. */
interface MessageCheck {
  /** Index of the diagram among those checked. */
  diagram: number;
  source: string;
  /** Undefined when Mermaid read no message for this line. */
  parsed?: string;
  /** Mermaid read the whole text, nothing cut off. */
  whole: boolean;
}

/** What Mermaid made of a set of diagrams. */
export interface DiagramReport {
  diagrams: number;
  messages: MessageCheck[];
  /** Diagrams Mermaid refused altogether, with its error. */
  errors: Array<{ diagram: number; error: string }>;
}

/** The body of every ```mermaid block in a Markdown text. */
export function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
}

/** The text of every message and note line of a sequence diagram, as written. */
function messageTexts(diagram: string): string[] {
  return diagram
    .split('\n')
    .slice(1)
    .filter((line) => !/^\s*participant\s/.test(line) && line.includes(':'))
    .map((line) => line.slice(line.indexOf(':') + 1).trim());
}

interface SequenceDb {
  getMessages(): Array<{ message?: string }>;
}

/**
 * Mermaid itself (the package GitHub renders with), in a jsdom window: the
 * library expects a browser's globals even to parse.
 */
async function loadMermaid() {
  const { JSDOM } = await import('jsdom');
  const { window } = new JSDOM('<!doctype html><html><body></body></html>');
  Object.assign(globalThis, { window, document: window.document });
  const { default: mermaid } = await import('mermaid');
  mermaid.initialize({ startOnLoad: false });
  return mermaid;
}

/**
 * Parse every diagram with Mermaid and compare each message and note, line
 * by line, with the text it was written with: a `#` or a `;` in a label
 * shows up here as a cut-off message or a refused diagram.
 */
export async function checkDiagrams(diagrams: string[]): Promise<DiagramReport> {
  const mermaid = await loadMermaid();
  const report: DiagramReport = { diagrams: diagrams.length, messages: [], errors: [] };
  for (const [index, text] of diagrams.entries()) {
    const sources = messageTexts(text);
    let parsed: string[];
    try {
      const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
      parsed = (diagram.db as unknown as SequenceDb).getMessages().map((m) => (m.message ?? '').trim());
    } catch (error) {
      report.errors.push({ diagram: index, error: (error as Error).message.split('\n').slice(0, 3).join(' ') });
      parsed = [];
    }
    // A statement split in two shifts every later message: the counts differ and nothing after the split matches.
    const aligned = parsed.length === sources.length;
    sources.forEach((source, i) => {
      const read = parsed[i];
      report.messages.push({ diagram: index, source, parsed: read, whole: aligned && read === source });
    });
  }
  return report;
}
