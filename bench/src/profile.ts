import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, relative } from 'node:path';

/** The parts of a V8 `.cpuprofile` this summary reads. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Self time of one function or one area, in microseconds of CPU per request. */
interface SelfTime {
  name: string;
  usPerRequest: number;
  share: number;
}

export interface ProfileSummary {
  /** Busy (non-idle) CPU time per request, in microseconds. */
  busyUsPerRequest: number;
  areas: SelfTime[];
  functions: SelfTime[];
}

/**
 * Where a function lives: the npm package (under node_modules), the
 * workspace package (packages/*, apps/*), Node's core, or V8 itself.
 */
const SOCKET_IO = new Set([
  'writev',
  'writeUtf8String',
  'writeBuffer',
  'writeLatin1String',
  'writeAsciiString',
  'writeUcs2String',
  'shutdown',
  'close',
]);
const CRYPTO = new Set(['Hash', 'HashDigest', 'digest', 'update', 'secureBuffer', 'getRandomValues', 'randomFillSync']);

function areaOf(functionName: string, url: string): string {
  if (!url) {
    if (functionName === '(garbage collector)') return 'V8: garbage collector';
    if (functionName === '(program)') return 'V8: (program)';
    if (SOCKET_IO.has(functionName)) return 'socket writes (native, one system call each)';
    if (CRYPTO.has(functionName)) return 'crypto (native: SHA-256, random UUIDs)';
    return 'V8/native, other';
  }
  if (url.startsWith('node:')) return 'Node.js core (net, http, streams, timers)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const workspace = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (workspace) return `${workspace[1]}/${workspace[2]} (this repo)`;
  if (url.includes('/bench/')) return 'bench fixture';
  return url;
}

function shortUrl(url: string): string {
  if (!url) return '';
  if (url.startsWith('node:')) return url;
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + '/node_modules/'.length);
  return relative(`${__dirname}/../..`, path);
}

/**
 * Summarise a profile taken while the server answered `requests` requests.
 * Shares come from the samples; they are turned into time per request with
 * `cpuMs`, the CPU time the kernel counted for the process over the same
 * window, when given (samples measure wall time, which a busy machine inflates).
 */
export function summarizeProfile(file: string, requests: number, cpuMs = Number.NaN, top = 12): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfUs = new Map<number, number>();
  // A sample lasts until the next one: its duration is the next time delta.
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id);
    if (!frame || frame.functionName === '(idle)' || frame.functionName === '(root)') continue;
    busy += us;
    const area = areaOf(frame.functionName, frame.url);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const busyUsPerRequest = (Number.isFinite(cpuMs) ? cpuMs * 1000 : busy) / requests;
  const rank = (entries: Map<string, number>, limit: number): SelfTime[] =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, usPerRequest: (us / busy) * busyUsPerRequest, share: us / busy }));
  return { busyUsPerRequest, areas: rank(areas, 12), functions: rank(functions, top) };
}

/**
 * Markdown for a comparison of profiles (e.g. bare vs guarded): CPU per
 * request by area side by side, then the guarded profile's top functions.
 */
export function profileMarkdown(profiles: Array<{ label: string; summary: ProfileSummary }>, focus: string, unit = 'request'): string {
  const areaNames = [...new Set(profiles.flatMap((p) => p.summary.areas.map((a) => a.name)))];
  const cell = (p: ProfileSummary, area: string) => {
    const found = p.areas.find((a) => a.name === area);
    return found ? `${found.usPerRequest.toFixed(1)} µs (${(found.share * 100).toFixed(0)} %)` : '-';
  };
  const lines = [
    `| area (self time, CPU per ${unit}) | ${profiles.map((p) => p.label).join(' | ')} |`,
    `|---|${profiles.map(() => '---:').join('|')}|`,
    ...areaNames.map((area) => `| ${area} | ${profiles.map((p) => cell(p.summary, area)).join(' | ')} |`),
    `| **CPU per ${unit}** | ${profiles.map((p) => `**${p.summary.busyUsPerRequest.toFixed(1)} µs**`).join(' | ')} |`,
  ];
  const focused = profiles.find((p) => p.label === focus);
  const baseline = profiles[0];
  if (focused && baseline && baseline !== focused) {
    const usOf = (p: ProfileSummary, area: string) => p.areas.find((a) => a.name === area)?.usPerRequest ?? 0;
    const deltas = areaNames
      .map((area) => ({ area, us: usOf(focused.summary, area) - usOf(baseline.summary, area) }))
      .sort((a, b) => b.us - a.us)
      .slice(0, 5);
    const total = focused.summary.busyUsPerRequest - baseline.summary.busyUsPerRequest;
    lines.push(
      '',
      `Of the ${total >= 0 ? '+' : ''}${total.toFixed(0)} µs per ${unit} that ${focus} costs over ${baseline.label} under the profiler, the largest parts: ` +
        deltas.map((d) => `${d.area} ${d.us >= 0 ? '+' : ''}${d.us.toFixed(0)} µs`).join(', ') +
        '.',
    );
  }
  if (focused) {
    lines.push('', `Top self-time functions, ${focus}:`, '', `| function | CPU per ${unit} | share |`, '|---|---:|---:|');
    for (const fn of focused.summary.functions) {
      lines.push(`| \`${fn.name.replace(/\|/g, '\\|')}\` | ${fn.usPerRequest.toFixed(1)} µs | ${(fn.share * 100).toFixed(1)} % |`);
    }
  }
  return lines.join('\n');
}

/** Profile this process while `work` runs; resolves with the `.cpuprofile` path. */
export async function profileInProcess(work: () => Promise<void>): Promise<string> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  let profile: unknown;
  try {
    await work();
  } finally {
    profile = (await session.post('Profiler.stop')).profile;
    session.disconnect();
  }
  const dir = join(__dirname, '..', 'profiles');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `in-process-${process.pid}-${Date.now()}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  return file;
}
