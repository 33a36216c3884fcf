import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { COMMANDS } from '../../src/cli/args.js';
import { runCli, spawnCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

// A few refused lines go to the binary itself: its exit code and its streams, not only the
// function main.ts calls.
const SPAWNED = new Set(['serve', 'accounts create', 'cache purge']);

t.test(
  'every command of the command table refuses an unknown flag, a stray argument and a repeated option: exit 2, one line naming it',
  async (t) => {
    const dir = t.testdir({
      'gateway.yaml': JSON.stringify({ store: { memory: { file: '' } }, demo_accounts: false }),
    });
    // Were a command to run anyway, it runs on a private config and free ports.
    const env = { FUEL_GATEWAY_CONFIG: join(dir, 'gateway.yaml'), REDIS_URL: '', PORT: '0', ADMIN_PORT: '0' };
    t.same(
      [...new Set(COMMANDS.map((c) => c.words[0]))].sort(),
      [
        'accounts',
        'billing',
        'cache',
        'config',
        'help',
        'keys',
        'members',
        'prices',
        'serve',
        'signups',
        'usage',
        'webhooks',
      ],
      'the table has every group of commands',
    );
    const cases = COMMANDS.flatMap((c) => {
      // Each argument the command takes gets a value, so only the extra one is wrong.
      const valid = [...c.words, ...c.args.map((a) => `some-${a.toLowerCase()}`)];
      return [
        { name: c.words.join(' '), args: [...valid, '--bogus-flag=1'], named: '--bogus-flag' },
        { name: c.words.join(' '), args: [...valid, 'stray-argument'], named: 'stray-argument' },
        { name: c.words.join(' '), args: [...valid, '-q'], named: '-q' },
        // Every command takes --config: given twice, neither may silently win.
        {
          name: c.words.join(' '),
          args: [...valid, '--config', env.FUEL_GATEWAY_CONFIG, '--config=/nonexistent.yaml'],
          named: '--config',
        },
      ];
    });
    const results = await Promise.all(cases.map((c) => runCli(c.args, env)));
    const sample = cases.flatMap((c, i) => (SPAWNED.has(c.name) ? [i] : []));
    const spawned = await Promise.all(sample.map((i) => spawnCli((cases[i] as (typeof cases)[number]).args, env)));
    t.same(
      spawned,
      sample.map((i) => results[i]),
      'the binary exits and writes as the function says',
    );
    results.forEach((r, i) => {
      const c = cases[i] as (typeof cases)[number];
      const what = c.args.join(' ');
      t.equal(r.code, 2, `${what}: exit 2 (stderr: ${r.stderr.slice(0, 200)})`);
      t.equal(r.stdout, '', `${what}: nothing on stdout`);
      t.match(r.stderr, /^[^\n]+\n$/, `${what}: one line`);
      t.ok(r.stderr.includes(c.named) && r.stderr.startsWith(c.name), `${what}: names the command and ${c.named}`);
    });
  },
);

t.test('a misspelt option changes nothing in the store: --lable, --limt', async (t) => {
  const redis = await startRedis(t);
  const dir = t.testdir();
  const config = join(dir, 'redis.yaml');
  writeFileSync(config, JSON.stringify({ store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } } }));
  const cli = (...args: string[]) => runCli([...args, '--config', config]);

  const created = await cli('accounts', 'create', '--plan', 'starter', '--limit', '7');
  t.equal(created.code, 0, created.stderr);
  const id = (JSON.parse(created.stdout) as { account: { id: string } }).account.id;

  const typo = await cli('accounts', 'create', '--plan', 'starter', '--lable', 'x');
  t.equal(typo.code, 2, 'accounts create --lable: exit 2');
  t.equal(typo.stderr, 'accounts create: unknown option --lable (fuel-gateway --help for usage)\n');
  const limt = await cli('accounts', 'set-plan', id, 'business', '--limt', '5');
  t.equal(limt.code, 2, 'accounts set-plan --limt: exit 2');
  t.match(limt.stderr, /^accounts set-plan: unknown option --limt\b/);
  const both = await cli('accounts', 'show', id, 'extra', '--verbose');
  t.equal(both.code, 2);
  t.match(both.stderr, /^accounts show: unknown option --verbose; unexpected argument "extra"/, 'both named');

  const list = JSON.parse((await cli('accounts', 'list')).stdout) as {
    accounts: Array<{ id: string; plan: string; limit: number | null }>;
  };
  t.same(
    list.accounts.map((a) => [a.id, a.plan, a.limit]),
    [[id, 'starter', 7]],
    'no account was created, and the plan and limit were not changed',
  );
  const unknown = await cli('accounts', 'frobnicate');
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /^unknown command: accounts frobnicate/);
});

t.test('a repeated option is refused, naming it, and changes nothing: --limit 5 --limit 6', async (t) => {
  const redis = await startRedis(t);
  const config = join(t.testdir(), 'redis.yaml');
  writeFileSync(config, JSON.stringify({ store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } } }));
  const cli = (...args: string[]) => runCli([...args, '--config', config]);

  const created = await cli('accounts', 'create', '--plan', 'starter', '--limit', '7', '--label', 'Acme');
  t.equal(created.code, 0, created.stderr);
  const id = (JSON.parse(created.stdout) as { account: { id: string } }).account.id;

  const cases: Array<[string[], string]> = [
    [['accounts', 'create', '--plan', 'starter', '--limit', '5', '--limit', '6'], '--limit'],
    [['accounts', 'create', '--plan', 'starter', '--label', 'x', '--label=y'], '--label'],
    [['accounts', 'create', '--plan', 'starter', '--plan', 'business'], '--plan'],
    [['accounts', 'set-plan', id, 'business', '--limit', '5', '--limit', '6'], '--limit'],
    [['cache', 'purge', '--all', '--all'], '--all'],
    [['cache', 'purge', '--path', '/a', '--path', '/b'], '--path'],
  ];
  for (const [args, named] of cases) {
    const r = await cli(...args);
    const what = args.join(' ');
    t.equal(r.code, 2, `${what}: exit 2 (${r.stderr})`);
    t.equal(r.stdout, '', `${what}: nothing on stdout`);
    t.match(r.stderr, /^[^\n]+\n$/, `${what}: one line`);
    t.ok(r.stderr.startsWith(`${args[0]} ${args[1]}: `) && r.stderr.includes(named), `${what}: names ${named}`);
  }
  const list = JSON.parse((await cli('accounts', 'list')).stdout) as {
    accounts: Array<{ id: string; plan: string; limit: number | null; label: string }>;
  };
  t.same(
    list.accounts.map((a) => [a.id, a.plan, a.limit, a.label]),
    [[id, 'starter', 7, 'Acme']],
    'no account was created, and the plan and limit were not changed',
  );
});
