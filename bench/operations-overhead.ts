/**
 * What do the operations features (metrics, access log, request id, Cache-Status) cost on the
 * `hot` path? Starts `src/main.ts` of one or more checkouts exactly as `npm start` does (dev auth
 * mode, embedded sample upstream, stdout to /dev/null), pinned to core 0, and drives each with
 * autocannon from this process (run it pinned to core 1), interleaving the checkouts round by round.
 *
 *   taskset -c 1 node --import tsx bench/operations-overhead.ts --root /tmp/hg-before --root . --rounds 3 --duration 10
 *
 * Bounded: every run stops after --duration seconds; every server is killed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { parseArgs } from '../src/cli-args.ts';

interface Target {
  readonly root: string;
  readonly results: number[];
  readonly p99: number[];
  /** Server CPU time per request, in µs: less sensitive than req/s to other load on the machine. */
  readonly cpuUs: number[];
}

/** utime + stime of a process, in ms (Linux /proc; clock ticks are 100 Hz). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

async function startServer(root: string, extraEnv: Record<string, string>): Promise<{ child: ChildProcess; port: number; token: string }> {
  const port = await freePort();
  const adminPort = await freePort();
  const pin = existsSync('/usr/bin/taskset') ? ['taskset', '-c', '0'] : [];
  const argv = [...pin, process.execPath, '--import', 'tsx', resolve(root, 'src/main.ts')];
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: root,
    env: { ...process.env, HYPERGATE_PORT: String(port), HYPERGATE_ADMIN_PORT: String(adminPort), ...extraEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const token = await new Promise<string>((done, fail) => {
    let err = '';
    const timer = setTimeout(() => fail(new Error(`no dev token from ${root} within 20 s:\n${err}`)), 20_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /Bearer ([A-Za-z0-9._-]+)/.exec(err);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        done(m[1]);
      }
    });
    child.once('exit', (code) => fail(new Error(`${root} exited with ${code}:\n${err}`)));
  });
  return { child, port, token };
}

async function runOnce(port: number, token: string, seconds: number, connections: number): Promise<{ rps: number; p99: number; bad: number; total: number }> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/customers/42`,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    connections,
    duration: seconds,
  });
  return { rps: result.requests.average, p99: result.latency.p99, bad: result.non2xx + result.errors, total: result.requests.total };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const roots = argv.flatMap((a, i) => (a === '--root' ? [resolve(argv[i + 1] ?? '.')] : []));
  const rest = argv.filter((a, i) => a !== '--root' && argv[i - 1] !== '--root');
  const args = parseArgs(rest, ['--rounds', '--duration', '--connections', '--env'], []);
  const rounds = Number(args.get('--rounds') ?? 3);
  const seconds = Number(args.get('--duration') ?? 10);
  const connections = Number(args.get('--connections') ?? 50);
  const extraEnv: Record<string, string> = {};
  for (const pair of String(args.get('--env') ?? '').split(',').filter(Boolean)) {
    const [k, v] = pair.split('=');
    if (k !== undefined && v !== undefined) extraEnv[k] = v;
  }
  const targets: Target[] = (roots.length > 0 ? roots : [resolve('.')]).map((root) => ({ root, results: [], p99: [], cpuUs: [] }));
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const { child, port, token } = await startServer(t.root, extraEnv);
      try {
        await runOnce(port, token, 2, connections); // warm-up
        const cpuBefore = cpuMs(child.pid as number);
        const r = await runOnce(port, token, seconds, connections);
        const cpu = ((cpuMs(child.pid as number) - cpuBefore) * 1000) / r.total;
        if (r.bad > 0) throw new Error(`${t.root}: ${r.bad} errors or non-2xx answers`);
        t.results.push(r.rps);
        t.p99.push(r.p99);
        t.cpuUs.push(cpu);
        process.stdout.write(`round ${round + 1} ${t.root}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, ${cpu.toFixed(1)} µs CPU/request\n`);
      } finally {
        child.kill('SIGKILL');
      }
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  for (const t of targets) process.stdout.write(`median ${t.root}: ${Math.round(median(t.results))} req/s, p99 ${median(t.p99)} ms, ${median(t.cpuUs).toFixed(1)} µs CPU/request\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
