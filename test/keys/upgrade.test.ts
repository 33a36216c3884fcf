/**
 * A Redis written by the previous release (one key per account, the account hash's `key_hash`)
 * works unchanged under this one: each account's key is its `default` key. The previous release
 * is built from its commit into a directory of its own and writes the store through its own CLI.
 */
import { execFileSync, spawn } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { hashKey } from '../../src/keys/key-generator.js';
import { adminCall } from '../helpers/admin.js';
import { CHILD_ARGS, endAtExit, ROOT, storeTimeouts } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { freePort, startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

// One test at a time: building the previous release (execFileSync) holds this process' event
// loop for seconds, and a gateway started beside it times out connecting to Redis.

const PREVIOUS = 'b6a89d5';
const SIMPLE = '/fuel-api/api/simple-current.php';
const INVALID = { status: 401, body: '{"success":false,"message":"Invalid API key."}' };

/** The previous release, built once (transpiled: it was type-checked in its day): its dist/ runs against the shared node_modules. */
function buildPrevious(): string {
  const dir = tempDir('fpg-previous-');
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive ${PREVIOUS} | tar -x -C "${dir}"`]);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--noCheck', '--noResolve'],
    {
      cwd: dir,
    },
  );
  return dir;
}

function previousCli(dir: string, config: string, args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/main.js', ...args, '--config', config], {
      cwd: dir,
      env: { ...process.env, FUEL_GATEWAY_CONFIG: '', REDIS_URL: '' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`previous release: exit ${code}: ${err}`)),
    );
  });
}

interface Answer {
  status: number;
  body: string;
}

/**
 * Starts the previous release (built in `dir`) as a gateway on the Redis at `url`, as a rolling
 * upgrade leaves one running beside this release; returns the status it answers for a key.
 */
async function previousGateway(
  t: Test,
  dir: string,
  url: string,
  configName: string,
): Promise<(key: string) => Promise<Answer>> {
  const port = await freePort();
  const prevConfig = join(dir, configName);
  writeFileSync(
    prevConfig,
    JSON.stringify({
      store: { type: 'redis', redis: { url, ...storeTimeouts() } },
      listen: { public: { host: '127.0.0.1', port }, admin: { host: '127.0.0.1', port: await freePort() } },
      prices: { watch_file: false },
      demo_accounts: false,
      log: { access: false },
    }),
  );
  const previous = spawn(process.execPath, [...CHILD_ARGS, 'dist/main.js', 'serve', '--config', prevConfig], {
    cwd: dir,
    env: { ...process.env, FUEL_GATEWAY_CONFIG: '', REDIS_URL: '' },
    stdio: 'ignore',
  });
  endAtExit(previous);
  t.teardown(() => void previous.kill('SIGKILL'));
  return async (key: string): Promise<Answer> => {
    const r = await fetch(`http://127.0.0.1:${port}${SIMPLE}?api_key=${key}`);
    return { status: r.status, body: await r.text() };
  };
}

t.test('accounts written by the previous release keep their key, as their default key', async (t) => {
  const redis = await startRedis(t);
  const dir = buildPrevious();
  const config = join(dir, 'redis.json');
  writeFileSync(
    config,
    // The busy machine's timeouts: at the default 1 s, its CLI failed to connect beside the bench.
    JSON.stringify({ store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } }, log: { access: false } }),
  );
  const made = (await previousCli(dir, config, ['accounts', 'create', '--plan', 'starter'])) as {
    account: { id: string };
    api_key: string;
  };
  const other = (await previousCli(dir, config, ['accounts', 'create', '--plan', 'developer'])) as typeof made;
  // The previous release's rotation: the account hash's key_hash replaced.
  const rotated = (await previousCli(dir, config, ['accounts', 'rotate-key', other.account.id])) as { api_key: string };
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  const accountKey = (id: string): string => `fpg:{acct:${id}}:account`;
  t.ok(await raw.hexists(accountKey(made.account.id), 'key_hash'), 'the store is in the previous layout');
  t.notOk(await raw.hexists(accountKey(made.account.id), 'keys'));

  const gw = await startGateway(t, { store: redis.store });
  const status = async (key: string): Promise<number> => (await gw.get(`${SIMPLE}?api_key=${key}`)).status;
  t.equal(await status(made.api_key), 200, 'the key works');
  t.equal(await status(rotated.api_key), 200, 'so does one rotated by the previous release');
  t.equal(await status(other.api_key), 401, 'and the key it replaced still does not');

  const shown = await adminCall(gw, 'GET', `/admin/accounts/${made.account.id}`);
  t.equal(shown.status, 200);
  t.equal(shown.body.keys.length, 1);
  t.match(shown.body.keys[0], {
    id: /^key_[0-9a-f]{16}$/,
    name: 'default',
    expires_at: null,
    expired: false,
    scopes: ['prices', 'history', 'usage', 'passthrough'],
    allowed_cidrs: [],
    hint: null,
  });
  const listed = await adminCall(gw, 'GET', `/admin/accounts/${made.account.id}/keys`);
  t.equal(listed.body.keys[0].id, shown.body.keys[0].id, 'its id is the same on every read');
  t.match(listed.body.keys[0].last_used_on, /^\d{4}-\d{2}-\d{2}$/, 'the request above was noted');

  // The first change writes the keys in this release's layout; the key goes on working.
  const added = await adminCall(gw, 'POST', `/admin/accounts/${made.account.id}/keys`, { name: 'dashboard' });
  t.equal(added.status, 201);
  t.ok(await raw.hexists(accountKey(made.account.id), 'keys'), 'the keys are written in this layout');
  t.equal(
    await raw.hget(accountKey(made.account.id), 'key_hash'),
    hashKey(made.api_key),
    "the previous release's field still names the first key",
  );
  t.equal(await status(made.api_key), 200, 'the default key works after the change');
  t.equal(await status(added.body.api_key), 200, 'and so does the new key');
  const after = await adminCall(gw, 'GET', `/admin/accounts/${made.account.id}/keys`);
  t.same(
    after.body.keys.map((k: { id: string; name: string }) => [k.id, k.name]),
    [
      [shown.body.keys[0].id, 'default'],
      [added.body.key.id, 'dashboard'],
    ],
  );
  const revoked = await adminCall(gw, 'DELETE', `/admin/accounts/${made.account.id}/keys/${shown.body.keys[0].id}`);
  t.equal(revoked.status, 204);
  t.equal(await status(made.api_key), 401, 'the default key can be revoked like any other');
  t.equal(
    await raw.hget(accountKey(made.account.id), 'key_hash'),
    hashKey(added.body.api_key),
    "the previous release's field follows the first key",
  );
  // A gateway of the previous release, still running beside this one (a rolling upgrade), serves
  // the account's first key from this release's layout.
  const old = await previousGateway(t, dir, redis.url, 'serve.json');
  await waitFor('the previous release to serve', async () => (await old(added.body.api_key)).status === 200);
  t.same(await old(made.api_key), INVALID, 'and refuses the revoked one');
});

t.test('a gateway of the previous release beside this one serves no key this one refuses', async (t) => {
  const redis = await startRedis(t);
  const dir = buildPrevious();
  const gw = await startGateway(t, { store: redis.store });
  const made = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const id = made.body.account.id as string;
  const first = made.body.api_key as string;
  const second = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys`, { name: 'erp' });
  const old = await previousGateway(t, dir, redis.url, 'beside.json');
  await waitFor('the previous release to serve', async () => (await old(first)).status === 200);

  // The first key rotated out at once: this release answers 401 expired.
  const keys = (await adminCall(gw, 'GET', `/admin/accounts/${id}/keys`)).body.keys;
  const rotated = await adminCall(gw, 'POST', `/admin/accounts/${id}/keys/${keys[0].id}/rotate`, { grace_s: 0 });
  t.equal(rotated.status, 201);
  t.equal((await gw.get(`${SIMPLE}?api_key=${first}`)).status, 401);
  await waitFor('the previous release to refuse the rotated-out key', async () => (await old(first)).status === 401);
  t.same(await old(first), INVALID, 'the rotated-out key is an invalid key there');

  // A key limited to history: this release refuses it prices; so must the previous one.
  const limited = await adminCall(gw, 'PATCH', `/admin/accounts/${id}/keys/${second.body.key.id}`, {
    scopes: ['history'],
  });
  t.equal(limited.status, 200);
  t.equal((await gw.get(`${SIMPLE}?api_key=${second.body.api_key}`)).status, 403);
  let refused: Answer | undefined;
  await waitFor('the previous release to refuse the limited key', async () => {
    refused = await old(second.body.api_key);
    return refused.status !== 200;
  });
  // The previous release checks no scopes: the one field it reads names only a key without limits,
  // so there the limited key is no key at all.
  t.same(refused, INVALID, 'the previous release answers the limited key as an invalid one');
  t.equal((await old(rotated.body.api_key)).status, 200, 'a key without limits still works there');
});
