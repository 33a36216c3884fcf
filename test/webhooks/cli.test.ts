import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { gatewayProcess, runCli } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

t.test('webhooks add|list|test|deliveries|rotate-secret|remove run against the shared store', async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t);
  const config = join(tempDir('fpg-cli-webhooks-'), 'redis.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      store: redis.store,
      log: { access: false },
      webhooks: { allow_private_addresses: true, allow_http: true, poll_interval_ms: 100 },
    }),
  );
  const cli = async (...args: string[]) => {
    const r = await runCli(['webhooks', ...args, '--config', config]);
    return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as any) : null };
  };
  const gw = await gatewayProcess(t, config);

  const added = await cli('add', receiver.url, '--events', 'prices.published,usage.threshold', '--description', 'crm');
  t.equal(added.code, 0, added.stderr);
  t.match(added.json, {
    id: /^wh_/,
    url: receiver.url,
    events: ['prices.published', 'usage.threshold'],
    secret: /^whsec_/,
  });
  const id = added.json.id as string;
  t.notOk(added.stderr.includes(added.json.secret), 'the audit line on stderr holds no secret');
  t.match(added.stderr, /webhook.create/);

  const listed = await cli('list');
  t.same(
    listed.json.webhooks.map((w: { id: string }) => w.id),
    [id],
  );
  t.notOk(listed.stdout.includes('whsec_'), 'no secret in the list');

  const tested = await cli('test', id);
  t.equal(tested.code, 0, tested.stderr);
  await waitFor(
    'the running gateway delivers the CLI test event',
    () => receiver.verified(added.json.secret).length === 1,
  );
  t.equal(receiver.got[0]?.headers['webhook-id'], tested.json.event_id);
  await waitFor('recorded', async () => (await cli('deliveries', id)).json.deliveries[0]?.state === 'delivered');
  t.match((await cli('deliveries', id, '--limit', '5')).json.deliveries, [
    { event_id: tested.json.event_id, type: 'webhook.test', attempts: 1, last_status: 204, next_attempt: null },
  ]);

  const rotated = await cli('rotate-secret', id);
  t.match(rotated.json, { id, secret: /^whsec_/, previous_secret_expires_at: String });
  t.equal((await cli('remove', id)).code, 0);
  t.same((await cli('list')).json.webhooks, []);
  const missing = await cli('remove', id);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /NOT_FOUND: no webhook with id/);
  const bad = await cli('add', 'https://127.0.0.1/x', '--events', 'nope');
  t.equal(bad.code, 1);
  t.match(bad.stderr, /BAD_REQUEST: events/);
  t.equal(gw.child.exitCode, null);
});
