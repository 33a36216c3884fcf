import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { gatewayProcess, runCli } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

t.test('keys create, list, update, rotate and revoke from the CLI act on a running gateway', async (t) => {
  const redis = await startRedis(t);
  const config = join(tempDir('fpg-keys-cli-'), 'redis.json');
  writeFileSync(config, JSON.stringify({ store: redis.store, log: { access: false } }));
  const cli = async (...args: string[]): Promise<{ code: number | null; stderr: string; json: any }> => {
    const r = await runCli([...args, '--config', config]);
    return { code: r.code, stderr: r.stderr, json: r.code === 0 ? JSON.parse(r.stdout) : null };
  };
  const gw = await gatewayProcess(t, config);
  const status = async (key: string): Promise<number> => (await fetch(`${gw.base}${SIMPLE}?api_key=${key}`)).status;

  const account = (await cli('accounts', 'create', '--plan', 'starter')).json;
  const id = account.account.id as string;
  const made = await cli(
    'keys',
    'create',
    id,
    '--name',
    'ERP',
    '--expires',
    '30d',
    '--scopes',
    'prices,history',
    '--allow',
    '127.0.0.1,::1',
  );
  t.equal(made.code, 0, made.stderr);
  t.match(made.json.key, { name: 'ERP', scopes: ['prices', 'history'], allowed_cidrs: ['127.0.0.1/32', '::1/128'] });
  const days = (Date.parse(made.json.key.expires_at) - Date.now()) / 86_400_000;
  t.ok(days > 29.9 && days <= 30, `--expires 30d is 30 days from now (${days})`);
  t.equal(await status(made.json.api_key), 200, 'the new key works on the running gateway');

  const listed = await cli('keys', 'list', id);
  t.same(
    listed.json.keys.map((k: { name: string }) => k.name),
    ['default', 'ERP'],
  );
  const keyId = made.json.key.id as string;
  const updated = await cli('keys', 'update', id, keyId, '--expires', 'never', '--allow', 'none', '--scopes', 'usage');
  t.match(updated.json?.key, { expires_at: null, allowed_cidrs: [], scopes: ['usage'] }, updated.stderr);

  const rotated = await cli('keys', 'rotate', id, keyId, '--grace', '1h');
  t.equal(rotated.code, 0, rotated.stderr);
  const graceMs = Date.parse(rotated.json.previous.expires_at) - Date.now();
  t.ok(graceMs > 3_500_000 && graceMs <= 3_600_000, 'the old key works for an hour');
  t.match(rotated.json.key, { name: 'ERP', scopes: ['usage'] });

  const revoked = await cli('keys', 'revoke', id, rotated.json.key.id);
  t.same(revoked.json, { revoked: { account_id: id, key_id: rotated.json.key.id } });
  t.equal(await status(rotated.json.api_key), 401, 'a revoked key stops on the running gateway');

  const several = await cli('accounts', 'rotate-key', id);
  t.equal(several.code, 1, 'rotate-key refuses an account with several keys');
  t.match(several.stderr, /CONFLICT: .*keys\/KEY_ID\/rotate/);
  for (const [args, why] of [
    [['keys', 'create', id, '--name', 'x', '--scopes', 'everything'], 'an unknown scope'],
    [['keys', 'create', id, '--name', 'x', '--allow', '10.0.0.0/40'], 'a bad CIDR'],
    [['keys', 'create', id, '--name', 'x', '--expires', 'soon'], 'a bad expiry'],
    [['keys', 'rotate', id, keyId, '--grace', '31d'], 'a grace over 30 days'],
  ] as const) {
    const r = await cli(...args);
    t.equal(r.code, 1, why);
    t.match(r.stderr, /^BAD_REQUEST: /m, why);
  }
  t.equal((await runCli(['keys', 'create', id, '--nmae', 'x', '--config', config])).code, 2, 'an unknown option');
  t.equal((await cli('keys', 'list', id)).json.keys.length, 2, 'the refused commands changed nothing');
});
