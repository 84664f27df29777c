import type { ChainConfig } from '../config/schema';
import type { Attempt } from '../proxy/attempt';
import { faultLabel, type Fault } from '../proxy/faults';

/**
 * The faults a scenario planned that did not take effect, each saying which setting to
 * change. A scenario whose fault hit nothing tested nothing: a hold that no caller
 * waited out, a reset at a hop no attempt reached, a kill that never ran would all
 * let a chain that double-charges pass.
 */
export function unexercised(planned: ReadonlyMap<string, readonly Fault[]>, attempts: readonly Attempt[], config: ChainConfig): string[] {
  return [...planned].flatMap(([hop, faults]) => faults.flatMap((fault) => problem(hop, fault, attempts, config) ?? []));
}

function problem(hop: string, fault: Fault, attempts: readonly Attempt[], config: ChainConfig): string | undefined {
  const index = config.hops.findIndex((h) => h.name === hop);
  const label = faultLabel(fault);
  const carriers = attempts.filter((a) => a.hop === hop && a.faults.includes(label));
  const what = `${fault.kind} at ${hop}`;
  if (carriers.length === 0) {
    const caller = index === 0 ? 'entry.url' : `the service behind hops.${index - 1} (${config.hops[index - 1]?.name})`;
    return `${what}: no attempt reached its proxy (hops.${index}.listen ${config.hops[index]?.listen}); point ${caller} at it`;
  }
  if (carriers.every((a) => a.outcome === 'upstream-failed')) {
    return `${what}: its service never answered the attempt the fault was planned on (hops.${index}.upstream ${config.hops[index]?.upstream}); is it running?`;
  }
  if (fault.kind === 'latency' && !carriers.some((a) => a.outcome === 'caller-gone')) {
    const caller =
      index === 0 ? `the verifier (entry.timeoutMs ${config.entry.timeoutMs}ms)` : `the service behind ${config.hops[index - 1]?.name}`;
    return `hold at ${hop}: ${hop} held its answer ${fault.ms}ms and ${caller} still waited for it; set hops.${index}.holdMs past that caller's timeout`;
  }
  if (
    fault.kind === 'duplicate' &&
    !carriers.some((a) =>
      overlapped(
        a,
        attempts.filter((c) => c.duplicateOf === a.attempt),
      ),
    )
  ) {
    return `${what}: no copy reached ${hop}'s service while the original was still there`;
  }
  if (
    fault.kind === 'hold-for-retry' &&
    !carriers.some((a) =>
      overlapped(
        a,
        attempts.filter((c) => c.hop === hop && c.attempt > a.attempt),
      ),
    )
  ) {
    const caller = index === 0 ? 'the verifier (entry.key.send, entry.retries)' : `the service behind ${config.hops[index - 1]?.name}`;
    return `retry-while-running at ${hop}: no retry arrived within ${fault.maxMs}ms while the first attempt was held; ${caller} did not retry it`;
  }
  if (fault.kind === 'kill' && !carriers.some((a) => a.outcome === 'reply-lost')) {
    return `${what}: the kill did not complete (see the scenario's error)`;
  }
  return undefined;
}

/** Whether one of `later` was sent to the service while `first` was still there: the two ran at once. */
function overlapped(first: Attempt, later: readonly Attempt[]): boolean {
  return later.some((a) => a.hop === first.hop && (a.concurrentWith ?? []).includes(first.attempt));
}
