import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { gatewayProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

const run = promisify(execFile);

interface Listed {
  accounts: Array<{ id: string; plan: string; label: string }>;
}

t.test(
  'every start on the same memory-store file prints a curl line that works, for the same demo account',
  async (t) => {
    // Not t.testdir(): tap removes that before the teardown that stops the gateway writing there.
    const dir = tempDir('fpg-demo-restart-');
    const config = join(dir, 'gateway.yaml');
    writeFileSync(config, JSON.stringify({ store: { memory: { file: 'state.json' } }, log: { access: false } }));
    const seen: Array<{ developer: string; count: number; key: string }> = [];
    for (const start of [1, 2, 3]) {
      const gw = await gatewayProcess(t, config);
      const [, line = '', key = ''] = await gw.waitFor(/^ {2}(curl '[^'\n]*api_key=([^'\n]+)')$/m);
      // The line exactly as printed, as one would paste it into a shell.
      const { stdout } = await run('sh', ['-c', `${line.trim()} -s -o /dev/null -w '%{http_code}'`]);
      t.equal(stdout, '200', `start ${start}: the printed line answers 200 (${line.trim()})`);
      const list = (await (await fetch(`${gw.admin}/admin/accounts?limit=100`)).json()) as Listed;
      const developer = list.accounts.filter((a) => a.plan === 'developer');
      t.equal(developer.length, 1, `start ${start}: one developer demo account`);
      seen.push({ developer: developer[0]?.id ?? '', count: list.accounts.length, key });
      t.equal(await gw.stop(), 0);
    }
    t.same(new Set(seen.map((s) => s.developer)).size, 1, 'the same demo account each time');
    t.same(
      seen.map((s) => s.count),
      [4, 4, 4],
      'no more demo accounts than one per plan',
    );
    t.equal(new Set(seen.map((s) => s.key)).size, 3, 'a new key each start (the old one is stored hashed only)');
  },
);

interface Audited {
  audit?: { action: string; from: string; account_id?: string; key_id?: string; previous_key_id?: string };
}

/** The audit lines a gateway child has written so far. */
const auditLines = (output: string): NonNullable<Audited['audit']>[] =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('"audit"'))
    .map((l) => (JSON.parse(l) as Audited).audit)
    .filter((a) => a !== undefined);

const status = async (base: string, key: string): Promise<number> => {
  const r = await fetch(`${base}/fuel-api/api/simple-current.php`, { headers: { 'x-api-key': key } });
  await r.arrayBuffer();
  return r.status;
};

t.test(
  "a later start replaces only the gateway's demo key, audits each change, and tops up a used-up trial",
  async (t) => {
    // Not t.testdir(): tap removes that before the teardown that stops the gateway writing there.
    const dir = tempDir('fpg-demo-restart-');
    const config = join(dir, 'gateway.yaml');
    writeFileSync(config, JSON.stringify({ store: { memory: { file: 'state.json' } }, log: { access: false } }));

    const first = await gatewayProcess(t, config);
    const [, firstKey = ''] = await first.waitFor(/api_key=([^'\n]+)'/);
    const list = (await (await fetch(`${first.admin}/admin/accounts?plan=developer`)).json()) as Listed;
    const id = list.accounts[0]?.id ?? '';
    t.ok(
      auditLines(first.output()).some((a) => a.action === 'account.create' && a.account_id === id),
      'the first start audits the demo accounts it creates',
    );
    // The user's own key on the demo account, made after the gateway's.
    const added = await fetch(`${first.admin}/admin/accounts/${id}/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'second' }),
    });
    t.equal(added.status, 201);
    const second = ((await added.json()) as { api_key: string }).api_key;
    // The trial's 100 requests, used up.
    let used = 0;
    while ((await status(first.base, firstKey)) === 200) used++;
    t.equal(used, 100, 'the trial allows 100 requests');
    t.equal(await status(first.base, second), 429, 'the account is used up');
    t.equal(await first.stop(), 0);

    const next = await gatewayProcess(t, config);
    const [, line = '', nextKey = ''] = await next.waitFor(/^ {2}(curl '[^'\n]*api_key=([^'\n]+)')$/m);
    const { stdout } = await run('sh', ['-c', `${line.trim()} -s -o /dev/null -w '%{http_code}'`]);
    t.equal(stdout, '200', 'the line printed after the trial was used up answers 200');
    t.equal(await status(next.base, firstKey), 401, 'the key printed before no longer works, as the start says');
    t.match(next.output(), /the earlier one no longer works/);
    t.equal(await status(next.base, second), 200, 'the key the user added still works');
    const keys = (await (await fetch(`${next.admin}/admin/accounts/${id}/keys`)).json()) as {
      keys: Array<{ id: string; name: string; expired: boolean }>;
    };
    const secondId = keys.keys.find((k) => k.name === 'second')?.id;
    t.ok(
      keys.keys.some((k) => k.name === 'second' && !k.expired),
      'the key named "second" is live',
    );
    const audit = auditLines(next.output());
    const rotation = audit.find((a) => a.action === 'key.rotate');
    t.ok(rotation, 'the replacement of the demo key is audited');
    t.not(rotation?.previous_key_id, secondId, 'what was replaced is not the user key');
    t.equal(rotation?.from, 'demo', 'from names the start');
    t.ok(
      audit.some((a) => a.action === 'account.grant' && a.account_id === id && a.from === 'demo'),
      'the top-up of the used-up trial is audited',
    );
    t.equal(nextKey === firstKey, false);

    // The user revokes the gateway's demo key: the next start adds one, and leaves "second" alone.
    const demoKey = keys.keys.find((k) => k.name !== 'second' && !k.expired);
    const revoked = await fetch(`${next.admin}/admin/accounts/${id}/keys/${demoKey?.id}`, { method: 'DELETE' });
    t.equal(revoked.status, 204);
    t.equal(await next.stop(), 0);

    const third = await gatewayProcess(t, config);
    const [, thirdKey = ''] = await third.waitFor(/api_key=([^'\n]+)'/);
    t.equal(await status(third.base, thirdKey), 200, 'the line printed after the demo key was revoked works');
    t.equal(await status(third.base, second), 200, 'the key the user added still works');
    t.notMatch(third.output(), /no longer works/, 'no claim that an earlier key stopped: none was touched');
    t.ok(
      auditLines(third.output()).some((a) => a.action === 'key.create' && a.account_id === id && a.from === 'demo'),
      'the new demo key is audited',
    );
    t.equal(await third.stop(), 0);
  },
);
