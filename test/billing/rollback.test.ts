import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { type BillingReceiver, startCloudEventsReceiver, startStripeReceiver } from '../helpers/billing-receivers.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const STRIPE_KEY = 'rk_test_billing_rollback_0123456789';
const CE_TOKEN = 'ce-token-rollback-0123456789';
process.env.STRIPE_API_KEY = STRIPE_KEY;
process.env.CLOUDEVENTS_TOKEN = CE_TOKEN;
// An interval's pass, plus a busy machine's margin.
const PASS_MS = 30_000;

/** Each identifier the receiver got, with every distinct content it came with. */
function contentsById(r: BillingReceiver, kind: 'stripe' | 'ce'): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (id: string, content: string): void => void out.set(id, (out.get(id) ?? new Set()).add(content));
  for (const { body, problems } of r.requests) {
    if (problems.length > 0) continue;
    if (kind === 'stripe') {
      const form = new URLSearchParams(body);
      add(String(form.get('identifier')), `${form.get('payload[value]')}@${form.get('timestamp')}`);
    } else
      for (const e of JSON.parse(body) as Array<{ id: string; time: string; data: { requests: number } }>)
        add(e.id, `${e.data.requests}@${e.time}`);
  }
  return out;
}

t.test(
  'after Redis is restored from a backup, the spans written again get new ids: no id comes with two contents, every served request is billed, and the rollback is logged',
  async (t) => {
    const dir = tempDir('fpg-rollback-');
    const redis = await startRedis(t, ['--dir', dir, '--dbfilename', 'dump.rdb']);
    const stripe = await startStripeReceiver(STRIPE_KEY);
    const ce = await startCloudEventsReceiver(CE_TOKEN);
    t.teardown(() => Promise.all([stripe.close(), ce.close()]));
    const gw = await startGateway(t, {
      store: redis.store,
      log: { access: false },
      // The receivers are on loopback, which the exporters reach only when private addresses are allowed.
      webhooks: { allow_private_addresses: true },
      billing: {
        interval_s: 5,
        timeout_ms: 10_000,
        exporters: [
          { type: 'stripe', event_name: 'fuel_api_requests', api_base: stripe.url },
          { type: 'cloudevents', url: `${ce.url}/api/v1/events`, source: 'fuel-gateway' },
        ],
      },
    });
    const created = await adminCall(gw, 'POST', '/admin/accounts', {
      plan: 'starter',
      external_ids: { stripe_customer: 'cus_Rollback1' },
    });
    const key = created.body.api_key as string;
    const id = created.body.account.id as string;
    const served = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200);
    };
    const billed = (n: number) => (): boolean =>
      stripe.totals().cus_Rollback1 === n && ce.totals()[id] === n && stripe.requests.length >= 1;

    await served(5);
    await waitFor('the first 5 to be billed', billed(5), PASS_MS);
    // The backup: the ledger at 5, each exporter's cursor past 5.
    await waitFor(
      'the events to be settled',
      async () => (await redis.cli('keys', '*billing*:open')).trim() === '',
      PASS_MS,
    );
    await redis.cli('save');
    await copyFile(join(dir, 'dump.rdb'), join(dir, 'backup.rdb'));

    await served(7);
    await waitFor('the next 7 to be billed', billed(12), PASS_MS);

    // The restore: Redis stopped, the backup put back, Redis started on it.
    await redis.stop();
    await copyFile(join(dir, 'backup.rdb'), join(dir, 'dump.rdb'));
    await redis.start();
    await waitFor('the gateway to count again', async () => (await gw.get(`${SIMPLE}?api_key=${key}`)).status === 200);
    await served(6);
    t.equal(
      (await adminCall(gw, 'GET', `/admin/accounts/${id}`)).body.usage.requests_used,
      12,
      'the ledger went back to 5, and counted the 7 served since',
    );

    // 7 requests served before the restore, 7 after: the receivers must bill all 19.
    await waitFor('the 7 served after the restore to be billed too', billed(19), PASS_MS);
    for (const [name, r] of [
      ['stripe', stripe],
      ['ce', ce],
    ] as const) {
      const repeated = [...contentsById(r, name)].filter(([, contents]) => contents.size > 1);
      t.same(repeated, [], `${name}: no id was sent with two different contents`);
    }
    t.match(gw.logs(), /"level":40[^\n]*billing[^\n]*went back/, 'the rollback is logged as a warning');
  },
);
