import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { runCli, serve } from '../helpers/cli.js';
import type { TestContext } from '../helpers/context.js';

// A token that passes: 43 characters of base64url (what `openssl rand -base64 32` gives, give or take).
const STRONG = 'q3Vx9LmN2pR7sT0uW4yZ8aB1cD5eF6gH-iJ_kK3lM';

/** Starts the real gateway process and answers its exit code and output, or 'running' once it listens. */
let started = 0;
async function start(
  t: TestContext & { testdir(): string },
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null | 'running'; out: string }> {
  // A config of its own in a directory of the test (removed with it), memory store file included.
  const dir = t.testdir();
  const config = join(dir, `gateway-${++started}.yaml`);
  writeFileSync(config, JSON.stringify({ store: { memory: { file: join(dir, `store-${started}.json`) } } }));
  const gw = serve(t, ['--config', config], { ADMIN_PORT: '0', ...env });
  const code = await Promise.race([
    new Promise<number | null>((r) => gw.child.on('exit', r)),
    gw.waitFor(/"msg":"admin listener ready"/, 60_000).then(() => 'running' as const),
  ]);
  if (code === 'running') await gw.stop('SIGTERM');
  return { code, out: gw.output() };
}

/**
 * The refusal of a config with these environment settings, in this process: the message that
 * `serve` prints before it exits 1 (the first case of each test proves that on a real process),
 * or '' if it is accepted.
 */
function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig({ env: { ADMIN_PORT: '0', ...env }, overrides: { store: { memory: { file: '' } } } });
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

/** Each case of a test: the first on a real process (exit code and output), the rest in this one. */
async function refused(t: Test, env: NodeJS.ProcessEnv, first: boolean, what: string): Promise<string> {
  if (!first) return refusal(env);
  const r = await start(t, env);
  t.equal(r.code, 1, `${what}: exit 1`);
  return r.out;
}

t.test('an admin token under 32 characters is refused on a non-loopback listener, naming the rule', async (t) => {
  for (const [i, token] of ['x', 'correct-horse-battery-staple'].entries()) {
    const out = await refused(t, { ADMIN_HOST: '0.0.0.0', ADMIN_TOKEN: token }, i === 0, JSON.stringify(token));
    t.match(out, /listen\.admin\.token: .*at least 32 characters/, `${JSON.stringify(token)}: names the rule`);
    if (token.length > 8) t.notMatch(out, token, 'and does not print the token');
  }
});

t.test('an admin token of runs and repeats is refused by its estimated entropy, naming the estimate', async (t) => {
  for (const [i, [token, bits]] of (
    [
      ['0123456789abcdef0123456789abcdef', 16],
      ['abcdefghijklmnopabcdefghijklmnop', 9],
      ['ab'.repeat(20), 8],
      ['0123456789abcde'.repeat(3), 16],
    ] as const
  ).entries()) {
    const out = await refused(t, { ADMIN_HOST: '::', ADMIN_TOKEN: token }, i === 0, token);
    t.match(
      out,
      `listen.admin.token: on a non-loopback admin listener (::) a token needs about 128 bits of entropy; this one is estimated at ${bits} `,
    );
    t.notMatch(out, token, 'and does not print the token');
  }
});

t.test('a token with surrounding whitespace is refused on any listener, not trimmed', async (t) => {
  for (const [i, [token, host]] of (
    [
      [` ${STRONG} `, '0.0.0.0'],
      [`${STRONG}\n`, '0.0.0.0'],
      [`\t${STRONG}`, '127.0.0.1'],
      [' ', '127.0.0.1'],
    ] as const
  ).entries()) {
    const out = await refused(
      t,
      { ADMIN_HOST: host, ADMIN_TOKEN: token },
      i === 0,
      `${JSON.stringify(token)} on ${host}`,
    );
    t.match(out, /listen\.admin\.token: starts or ends with whitespace .*nothing is trimmed/);
    t.notMatch(out, STRONG, 'and does not print the token');
  }
  const check = await runCli(['config', 'check'], { ADMIN_TOKEN: ` ${STRONG}` });
  t.equal(check.code, 1, '`config check` refuses it too');
  t.match(check.stderr, /listen\.admin\.token: starts or ends with whitespace/);
});

t.test('a strong token binds anywhere; a loopback listener takes any token', async (t) => {
  t.equal((await start(t, { ADMIN_HOST: '0.0.0.0', ADMIN_TOKEN: STRONG })).code, 'running');
  for (const token of [randomBytes(32).toString('hex'), randomBytes(32).toString('base64url')])
    t.equal(refusal({ ADMIN_HOST: '0.0.0.0', ADMIN_TOKEN: token }), '', '32 random bytes: accepted');
  t.equal(refusal({ ADMIN_HOST: '127.0.0.1', ADMIN_TOKEN: 'x' }), '', 'any token on loopback: accepted');
});
