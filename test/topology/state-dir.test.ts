import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';
import type { TestContext } from '../helpers/context.js';

// A refused start exits at once; a runner that starts anyway is stopped once ready, or after this.
const BOUND_MS = 120_000;

function runner(args: string[]): Promise<{ code: number | null; stderr: string; started: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['dist/topology/topology-cli.js', '--gateways', '1', '--gateway-port', '32000', ...args],
      {
        cwd: ROOT,
        env: { ...process.env, ADMIN_TOKEN: '', REDIS_URL: '' },
      },
    );
    let stderr = '';
    let started = false;
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', () => {
      started = true;
      child.kill('SIGTERM');
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), BOUND_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, started });
    });
  });
}

/** A port something listens on: the runner stops at its --port check, after taking the state directory. */
async function busyPort(t: TestContext): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return (server.address() as { port: number }).port;
}

t.test(
  'a group- or world-writable --state-dir is refused before anything starts; a new one is made 0700',
  async (t) => {
    const dir = t.testdir();
    for (const mode of [0o777, 0o770]) {
      const open = join(dir, `open-${mode.toString(8)}`);
      mkdirSync(open);
      chmodSync(open, mode);
      const r = await runner(['--port', '0', '--state-dir', open]);
      t.equal(r.code, 1, `mode ${mode.toString(8)}: refused (${r.stderr.trim()})`);
      t.notOk(r.started, 'nothing started');
      t.match(r.stderr, new RegExp(`${open}: .*group- or world-writable \\(mode ${mode.toString(8)}\\)`));
      t.same(readdirSync(open), [], 'nothing written in it');
    }
    const fresh = join(dir, 'new/nested');
    const r = await runner(['--port', String(await busyPort(t)), '--state-dir', fresh]);
    t.equal(r.code, 1);
    t.match(r.stderr, /is in use/);
    t.equal(statSync(fresh).mode & 0o777, 0o700, 'created 0700');
  },
);

t.test('a forged runner.json cannot make the runner signal a process it did not start', async (t) => {
  const stateDir = join(t.testdir(), 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  const victim = spawn('sleep', ['300'], { stdio: 'ignore' });
  t.teardown(() => victim.kill('SIGKILL'));
  const pid = victim.pid as number;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  const deadRunner = spawnSync(process.execPath, ['-e', '']).pid;
  const children = ['redis', 'balancer', 'gateway-1'].map((name) => ({ name, pid, started }));
  writeFileSync(join(stateDir, 'runner.json'), JSON.stringify({ runner: deadRunner, children }));

  const r = await runner(['--port', String(await busyPort(t)), '--state-dir', stateDir]);
  t.equal(r.code, 1, 'the runner stops at the busy port');
  t.match(r.stderr, /is in use/);
  t.equal(victim.exitCode, null, 'the victim did not exit');
  t.equal(victim.signalCode, null, 'nor was it signalled');
  t.ok(existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')), 'it still runs');
});
