import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { dayOf } from '../../src/time/days.js';
import { gatewayProcess, runCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('fpg-cli-usage-');

t.test('usage export and usage periods print the admin API’s rows, to stdout or --out', async (t) => {
  const redis = await startRedis(t);
  const config = join(dir, 'redis.yaml');
  writeFileSync(
    config,
    JSON.stringify({ store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } }, log: { access: false } }),
  );
  const cli = (...args: string[]) => runCli([...args, '--config', config]);
  const gw = await gatewayProcess(t, config);
  const created = await cli('accounts', 'create', '--plan', 'starter', '--label', 'Acme Fleet');
  const { account, api_key: key } = JSON.parse(created.stdout) as { account: { id: string }; api_key: string };
  for (let i = 0; i < 3; i++)
    t.equal((await fetch(`${gw.base}/fuel-api/api/simple-current.php?api_key=${key}`)).status, 200);
  const today = dayOf(Date.now(), 'Africa/Johannesburg');

  const days = await cli('usage', 'export', '--from', today, '--to', today);
  t.equal(days.code, 0, days.stderr);
  t.equal(days.stdout, `account_id,label,plan,date,requests\r\n${account.id},Acme Fleet,starter,${today},3\r\n`);
  const admin = await (await fetch(`${gw.admin}/admin/usage?from=${today}&to=${today}`)).text();
  t.equal(days.stdout, admin, 'the same bytes as the admin API');

  const out = join(dir, 'periods.json');
  const periods = await cli('usage', 'periods', '--from', today, '--to', today, '--format', 'json', '--out', out);
  t.equal(periods.code, 0, periods.stderr);
  t.equal(periods.stdout, '', 'nothing on stdout with --out');
  const written = JSON.parse(readFileSync(out, 'utf8')) as { rows: Array<Record<string, unknown>> };
  t.match(written.rows, [{ account_id: account.id, plan: 'starter', request_limit: 2000, requests_used: 3 }]);

  const bad = await cli('usage', 'export', '--from', today, '--to', '2020-01-01');
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^BAD_REQUEST: Invalid date range\.$/m);
  const unknown = await cli('usage', 'periods', '--from', today, '--to', today, '--account', 'acct_nope');
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^NOT_FOUND: no account with id acct_nope$/m);
  const unwritable = await cli(
    'usage',
    'export',
    '--from',
    today,
    '--to',
    today,
    '--out',
    join(dir, 'no/such/dir.csv'),
  );
  t.equal(unwritable.code, 1, 'a file that cannot be written fails the command');
  t.match(unwritable.stderr, /ENOENT/);
});
