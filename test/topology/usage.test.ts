/**
 * The runner's usage text is true: a port option it says takes 0 ("picks a free one") is not
 * refused for it, and a port it refuses 0 for has its range stated. The runner is started as an
 * operator starts it, a child process; `--gateways 0` makes each run stop at option checks.
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';

const PORT_OPTIONS = ['--port', '--gateway-port', '--tls-port'];

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['dist/topology/topology-cli.js', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ADMIN_TOKEN: '', REDIS_URL: '' },
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test(
  "every port option the runner's usage says takes 0 is not refused for 0; any other states its range",
  async (t) => {
    const usage = run(['--help']).stdout;
    const claim = /\(([^)]*0 picks a free one[^)]*)\)/.exec(usage)?.[1];
    t.ok(claim, 'the usage says which ports may be 0');
    const named = (claim?.match(/--[a-z-]+/g) ?? []).filter((o) => PORT_OPTIONS.includes(o));
    // A claim that names no option is about every port.
    const claimed = named.length > 0 ? named : PORT_OPTIONS;
    for (const option of PORT_OPTIONS) {
      const r = run([option, '0', '--gateways', '0']);
      t.equal(r.status, 2, `${option} 0 --gateways 0: refused (for --gateways at least), nothing started`);
      if (claimed.includes(option)) {
        t.notMatch(r.stderr, `${option}:`, `${option} 0 is not refused, as the usage says`);
        continue;
      }
      const min = new RegExp(`${option}: [^\\n]*>=(\\d+)`).exec(r.stderr)?.[1];
      t.ok(min, `${option} 0 is refused with its range`);
      t.match(usage, new RegExp(`${option}[^\\n]*${min}`), `the usage states ${option}'s range, from ${min}`);
    }
  },
);

t.test('a --gateway-config the runner cannot read stops it before anything starts, naming the file', async (t) => {
  const r = run(['--gateway-config', '/nonexistent/gateway.yaml']);
  t.equal(r.status, 2);
  t.match(r.stderr, /ENOENT[^\n]*\/nonexistent\/gateway\.yaml/);
  t.match(run(['--help']).stdout, /--gateway-config FILE/, 'the usage names the option');
});
