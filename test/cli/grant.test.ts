import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { gatewayProcess, runCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

t.test(
  'accounts grant ID N --note T readmits a used-up account on a running gateway; accounts grants lists it',
  async (t) => {
    const redis = await startRedis(t);
    const config = join(tempDir('fpg-cli-grant-'), 'redis.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } },
        log: { access: false },
      }),
    );
    const cli = async (...args: string[]) => {
      const r = await runCli([...args, '--config', config]);
      return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as any) : null };
    };
    const gw = await gatewayProcess(t, config);
    const created = await cli('accounts', 'create', '--plan', 'starter', '--limit', '1');
    t.equal(created.code, 0, created.stderr);
    const id = created.json.account.id as string;
    const get = () => fetch(`${gw.base}${SIMPLE}?api_key=${created.json.api_key}`);
    t.equal((await get()).status, 200);
    t.equal((await get()).status, 429, 'used up');

    const granted = await cli('accounts', 'grant', id, '2', '--note', 'invoice 1042');
    t.equal(granted.code, 0, granted.stderr);
    t.match(granted.json, { grant: { id: /^grant_/, requests: 2, note: 'invoice 1042' } });
    t.match(granted.stderr, /"action":"account.grant"/, 'the audit line, on stderr');
    const next = await get();
    t.equal(next.status, 200, 'the running gateway admits the next request');
    t.match(((await next.json()) as { usage: unknown }).usage, { requests_used: 2, request_limit: 3 });

    const listed = await cli('accounts', 'grants', id);
    t.same(listed.json, { grants: [granted.json.grant] });

    const bad = await cli('accounts', 'grant', id, 'many');
    t.equal(bad.code, 1);
    t.match(bad.stderr, /^BAD_REQUEST: requests: /m, 'names the field');
    const stray = await cli('accounts', 'grant', id, '2', '--label', 'x');
    t.equal(stray.code, 2, 'an option the verb does not take');
    const missing = await cli('accounts', 'grant', id);
    t.equal(missing.code, 1, 'no number of requests');
    t.same((await cli('accounts', 'grants', id)).json.grants.length, 1, 'nothing more was granted');
  },
);
