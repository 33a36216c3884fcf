/**
 * Every child a test starts ends with the test, also when the test process ends without its
 * teardowns (tap's abort at a timeout) or is killed outright: after a full run under load, three
 * gateways of test/scale/burst-exact.test.ts were found running with their parent gone.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

/** Whether `pid` runs (a zombie, dead but not yet reaped by its new parent, does not). */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

for (const [ending, what] of [
  ['exit', 'exits without running its teardowns'],
  ['kill', 'is killed outright (SIGKILL)'],
] as const) {
  t.test(`a gateway a test started ends when the test process ${what}`, async (t) => {
    const test = spawn(process.execPath, [...process.execArgv, 'test/fixtures/leave-a-gateway.ts'], {
      cwd: ROOT,
      env: { ...process.env, ENDING: ending },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    test.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const ended = new Promise((r) => test.once('exit', r));
    await waitFor('the gateway to start', () => out.includes('\n') || test.exitCode !== null, 30_000);
    const pid = Number(out.trim());
    t.teardown(() => {
      if (running(pid)) process.kill(pid, 'SIGKILL');
    });
    t.ok(pid > 0, `the gateway ${pid} started`);
    if (ending === 'kill') test.kill('SIGKILL');
    await ended;
    const ms = await waitFor(`gateway ${pid} to end`, () => !running(pid), 5000);
    t.pass(`gone ${ms} ms after the test process`);
  });
}
