import type { Attempt } from '../proxy/attempt';
import { deliveryIds, settlementText } from './delivery';

/**
 * A Mermaid sequence diagram of what the proxies saw in one scenario: each attempt
 * drawn from the hop before it (the caller for the first hop) with its attempt number,
 * key hash and faults, and its reply — or a cross where the reply never arrived. A
 * queue delivery is drawn from the hop that publishes, with its tag and redelivered
 * flag, answered by the consumer's ack or nack, or crossed where none reached the broker.
 */
export function sequenceDiagram(hops: readonly string[], attempts: readonly Attempt[]): string {
  // Mermaid ids cannot hold "-": hops get ids h0, h1… and their names as aliases.
  const id = (hop: string) => `h${hops.indexOf(hop)}`;
  const from = (hop: string) => (hops.indexOf(hop) > 0 ? `h${hops.indexOf(hop) - 1}` : 'caller');
  const events = attempts.flatMap((a) => [
    { at: a.startedMs, order: 0, seq: a.seq, lines: request(a, from(a.hop), id(a.hop)) },
    ...(a.endedMs === null ? [] : [{ at: a.endedMs, order: 1, seq: a.seq, lines: [reply(a, from(a.hop), id(a.hop))] }]),
  ]);
  events.sort((x, y) => x.at - y.at || x.order - y.order || x.seq - y.seq);
  return [
    'sequenceDiagram',
    '  participant caller',
    ...hops.map((hop, i) => `  participant h${i} as ${label(hop)}`),
    ...events.flatMap((e) => e.lines.map((line) => `  ${line}`)),
  ].join('\n');
}

function request(a: Attempt, from: string, to: string): string[] {
  // A queue delivery is `d<n>`, with the broker's numbers (tag, or stream sequence and count) and redelivered flag; an HTTP attempt `a<n>`.
  const name = a.delivery ? 'd' : 'a';
  const copy = a.duplicateOf === undefined ? '' : ` copy of ${name}${a.duplicateOf}`;
  const delivery = a.delivery ? ` ${deliveryIds(a)}${a.delivery.redelivered ? ' redelivered' : ''}` : '';
  const lines = [`${from}->>${to}: ${label(`${a.hop} ${name}${a.attempt}${copy}${delivery} k=${a.keyHash ?? 'none'}`)}`];
  if (a.faults.length > 0) lines.push(`Note over ${to}: ${label(`${name}${a.attempt} ${a.faults.join(', ')}`)}`);
  return lines;
}

function reply(a: Attempt, from: string, to: string): string {
  if (a.delivery) {
    // Only an ack that reached the broker is drawn as an answer; the rest end in a cross.
    const arrow = a.outcome === 'acked' || a.outcome === 'requeued' ? '-->>' : '--x';
    return `${to}${arrow}${from}: ${label(`d${a.attempt} ${settlementText(a)}`)}`;
  }
  const status = a.status === null ? '' : ` ${a.status}`;
  switch (a.outcome) {
    case 'answered':
      return `${to}-->>${from}: ${label(`a${a.attempt}${status}`)}`;
    case 'reply-lost':
      return `${to}--x${from}: ${label(`a${a.attempt}${status} reply lost`)}`;
    case 'caller-gone':
      return `${to}--x${from}: ${label(`a${a.attempt}${status} caller gone`)}`;
    case 'reset':
      return `${to}--x${from}: ${label(`a${a.attempt} reset`)}`;
    case 'unavailable':
      return `${to}-->>${from}: ${label(`a${a.attempt} 503 from the proxy`)}`;
    default:
      return `${to}--x${from}: ${label(`a${a.attempt} upstream failed`)}`;
  }
}

/**
 * Mermaid ends a statement at a line break or a `;` and reads `#` as the start of an
 * entity: labels (hop names, fault labels) keep none of them, so each reads whole.
 */
function label(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed.
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .replace(/#/g, 'no. ')
      .replace(/;/g, ',')
  );
}
