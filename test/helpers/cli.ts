import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runCommandLine } from '../../src/cli/run.js';
import type { TestContext } from './context.js';
import { storeTimeouts } from './redis.js';
import { tempDir } from './tmp.js';
import { scaled, waitFor as until } from './wait.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Children run dist/, built from src/ by tap's `before` program (build-dist.ts); tap's coverage
// hook comes along in NODE_OPTIONS and the source maps lead it back to src/. Each child watches
// for the test process to go (parent-watch.mjs) and stops itself then.
export const CHILD_ARGS = ['--enable-source-maps', '--import', new URL('./parent-watch.mjs', import.meta.url).href];

/**
 * Every child a test starts ends with the test: at its teardown, and at the test process' exit,
 * which runs no teardown when tap aborts a test file at its timeout. (A test process killed
 * outright runs nothing: then the child's own watch, parent-watch.mjs, stops it.)
 */
const running = new Map<ChildProcess, NodeJS.Signals>();
process.on('exit', () => {
  for (const [child, signal] of running) child.kill(signal);
});

/** Ends `child` with `signal` if it is still running when the test process exits. */
export function endAtExit(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  running.set(child, signal);
  child.once('exit', () => running.delete(child));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `fuel-gateway ARGS` in this process (src/cli/run.ts, which main.ts runs on the process):
 * its exit code and what it wrote, as a child would have. A few tests spawn the binary itself
 * (spawnCli) for its real exit code and streams.
 */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const stdout = collector();
  const stderr = collector();
  const code = await runCommandLine(args, {
    env: { ...process.env, FUEL_GATEWAY_CONFIG: '', REDIS_URL: '', ...env },
    stdout: stdout.stream,
    stderr: stderr.stream,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Runs `fuel-gateway ARGS` as a real child process (dist/main.js). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CHILD_ARGS, 'dist/main.js', ...args], {
      cwd: ROOT,
      env: { ...process.env, FUEL_GATEWAY_CONFIG: '', REDIS_URL: '', ...env },
    });
    endAtExit(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/**
 * Runs `fuel-gateway serve ARGS` on free loopback ports where it should refuse to start: its
 * result once it exits. One still serving after `ms` (scaled) is killed, and its code is null.
 */
export function serveRefused(
  t: TestContext,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  ms = 20_000,
): Promise<CliResult> {
  const child = spawn(process.execPath, [...CHILD_ARGS, 'dist/main.js', 'serve', ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      FUEL_GATEWAY_CONFIG: '',
      REDIS_URL: '',
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ...env,
    },
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), scaled(ms));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Served {
  child: ReturnType<typeof spawn>;
  output(): string;
  /** Resolves with the first match of `re` in stdout+stderr, within `ms` scaled by TEST_TIME_FACTOR. */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A config file of its own per child, so no two share the memory store's file (or the project's). */
export function privateConfig(settings: Record<string, unknown> = {}): string {
  const file = join(tempDir('fpg-serve-'), 'gateway.yaml');
  const store = (settings['store'] ?? { memory: { file: 'memory-store.json' } }) as { redis?: Record<string, unknown> };
  // On Redis, the busy machine's timeouts unless the test sets its own: beside the bench, an admin
  // call outlasted the default 500 ms and a test's set-up got a 503.
  const redis = store.redis && { ...storeTimeouts(), ...store.redis };
  writeFileSync(file, JSON.stringify({ ...settings, store: redis ? { ...store, redis } : store }));
  return file;
}

export { storeTimeouts } from './redis.js';

/**
 * A config file for gateway processes sharing one Redis (`redis`: url or cluster nodes, and any
 * other store.redis setting), its timeouts stretched for a busy machine, the access log off.
 */
export function redisConfig(redis: Record<string, unknown>, settings: Record<string, unknown> = {}): string {
  return privateConfig({
    store: { type: 'redis', redis: { ...storeTimeouts(), ...redis } },
    log: { access: false },
    ...settings,
  });
}

/** Starts `fuel-gateway serve` as a child process; killed on teardown if still running. */
export function serve(t: TestContext, args: string[] = [], env: NodeJS.ProcessEnv = {}): Served {
  const config = args.includes('--config') ? '' : privateConfig();
  const child = spawn(process.execPath, [...CHILD_ARGS, 'dist/main.js', 'serve', ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      FUEL_GATEWAY_CONFIG: config,
      REDIS_URL: '',
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ...env,
    },
  });
  endAtExit(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    output: () => out,
    async waitFor(re, ms = 20_000) {
      await until(`${re} in the output`, () => out.search(re) !== -1, ms, {
        gaveUp: () => child.exitCode !== null,
        every: 25,
      }).catch((err: Error) => {
        throw new Error(`no ${re} in output (${err.message}):\n${out}`);
      });
      return out.match(re) as RegExpMatchArray;
    },
    stop(signal = 'SIGTERM') {
      child.kill(signal);
      return exited;
    },
  };
}

export interface GatewayProcess extends Served {
  base: string;
  admin: string;
}

/** A `fuel-gateway serve` child on free loopback ports, ready once both listeners are up. */
export async function gatewayProcess(
  t: TestContext,
  configFile: string,
  env: NodeJS.ProcessEnv = {},
): Promise<GatewayProcess> {
  const served = serve(t, ['--config', configFile], env);
  // 40 s, scaled: beside the bench (load 17) three gateways starting at once had not logged a
  // line after 60 s; a start costs ~1.7 s of CPU under coverage.
  const portOf = async (msg: string): Promise<number> => {
    const [line] = await served.waitFor(new RegExp(`^\\{.*"msg":"${msg}".*$`, 'm'), 40_000);
    return (JSON.parse(line) as { address: { port: number } }).address.port;
  };
  const publicPort = await portOf('public listener ready');
  const adminPort = await portOf('admin listener ready');
  return { ...served, base: `http://127.0.0.1:${publicPort}`, admin: `http://127.0.0.1:${adminPort}` };
}
