import type { Service } from './lab-processes';

/**
 * One line of a service's JSON log, as the runner reads it. Three kinds
 * matter: `attempt` (an outbound call attempt, from the http-client),
 * `idempotency` (a coordinator decision) and pino-http's request lines.
 */
export interface LabEvent {
  service: Service | 'caller';
  time: number;
  event?: 'attempt' | 'idempotency' | 'message' | 'fault';
  msg?: string;
  // attempt
  callId?: string;
  path?: string;
  attempt?: number;
  keyHash?: string;
  outcome?: string;
  status?: number | string;
  retried?: boolean;
  startedAt?: number;
  durationMs?: number;
  replayed?: boolean;
  // idempotency
  operation?: string;
  epoch?: number;
  // fault: the lab's fault point that struck
  fault?: string;
}

/** The attempts every hop made, in the order they started. */
export function attemptsOf(events: LabEvent[]): LabEvent[] {
  return events.filter((e) => e.event === 'attempt').sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0));
}
