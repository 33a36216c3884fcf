import { spawn } from 'node:child_process';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';
import { SIMPLE, startTopology, until } from '../helpers/topology.js';

// The runner guards what it owns: its state directory, its public port, and what it started.
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function runner(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/topology/topology-cli.js', '--gateway-port', '31000', ...args], {
      cwd: ROOT,
      env: { ...process.env, ADMIN_TOKEN: '', REDIS_URL: '' },
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

t.test(
  'a second runner is refused on a state directory or a port in use, and one after a SIGKILL stops what was left',
  async (t) => {
    const first = await startTopology(t);
    const stateDir = first.stateDir;
    const port = new URL(first.ready.public).port;

    const sameDir = await runner(['--port', '0', '--state-dir', stateDir]);
    t.equal(sameDir.code, 1);
    t.match(sameDir.stderr, new RegExp(`in use by the runner with pid ${first.ready.pid}`));
    const samePort = await runner(['--port', port, '--state-dir', `${stateDir}-other`]);
    t.equal(samePort.code, 1);
    t.match(samePort.stderr, new RegExp(`127\\.0\\.0\\.1:${port} \\(--port\\) is in use`));

    const left = [first.ready.lb.pid, ...first.ready.gateways.map((g) => g.pid)];
    process.kill(first.ready.pid, 'SIGKILL');
    await first.stop();
    t.ok(left.every(alive), 'a SIGKILLed runner leaves its children running (no process can stop them then)');
    const second = await startTopology(t, ['--port', port], 60_000, stateDir);
    const event = await second.waitEvent((e) => e['event'] === 'stopped-leftovers', 5000);
    t.equal((event['processes'] as string[]).length, 5, 'Redis, 3 gateways and the balancer left by the first');
    await until('the leftovers are gone', () => left.every((pid) => !alive(pid)), 15_000);
    const { key } = await second.account('developer');
    const res = await fetch(`${second.ready.public}${SIMPLE}`, { headers: { 'x-api-key': key } });
    t.equal(res.status, 200, 'the new topology serves on the same port');
    t.equal(await second.stop(), 0, 'and stops with exit 0');
  },
);
