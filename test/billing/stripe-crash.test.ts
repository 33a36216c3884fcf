/**
 * A gateway killed -9 right after answering Stripe 200: the events it answered are in the store,
 * and the gateway started after it applies them. Real processes, on the memory store's file and
 * on Redis.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import t from 'tap';
import { gatewayProcess, privateConfig } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { deliver, subscriptionEvent, WEBHOOK_SECRET } from '../helpers/stripe.js';
import { waitFor } from '../helpers/wait.js';

const EVENTS = 40;
const env = { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET };
const billing = { stripe: { plans: { fuel_starter_monthly: 'starter' } } };

interface Admin {
  admin: string;
}
const plans = async (g: Admin, ids: string[]): Promise<string[]> =>
  Promise.all(
    ids.map(
      async (id) =>
        ((await (await fetch(`${g.admin}/admin/accounts/${id}`)).json()) as { account: { plan: string } }).account.plan,
    ),
  );

async function inboxDepth(where: string): Promise<number> {
  if (where.startsWith('redis://')) {
    const redis = new Redis(where);
    try {
      return await redis.hlen('fpg:{stripe}:inbox');
    } finally {
      redis.disconnect();
    }
  }
  const state = JSON.parse(readFileSync(where, 'utf8')) as { stripe?: { inbox: unknown[] } };
  return state.stripe?.inbox.length ?? 0;
}

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: events answered 200 by a gateway killed -9 at once are applied after the restart`, async (t) => {
    const store = kind === 'redis' ? (await startRedis(t)).store : undefined;
    const config = privateConfig({ ...(store ? { store } : {}), log: { access: false }, billing });
    const first = await gatewayProcess(t, config, env);
    const ids: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const r = await fetch(`${first.admin}/admin/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'developer' }),
      });
      ids.push(((await r.json()) as { account: { id: string } }).account.id);
    }
    const now = Math.floor(Date.now() / 1000);
    const events = ids.map((id, i) =>
      subscriptionEvent('created', now, {
        sub: `sub_crash${i}`,
        customer: `cus_crash${process.pid}x${i}`,
        status: 'active',
        lookupKey: 'fuel_starter_monthly',
        periodEnd: now + 30 * 86_400,
        account: id,
      }),
    );
    // Killed the moment the first answer comes: the others are answered, mid-way or not at all.
    let killed = false;
    const answered = await Promise.all(
      events.map((e) =>
        deliver(first.base, e).then(
          (r) => {
            if (r.status === 200 && !killed) {
              killed = true;
              first.child.kill('SIGKILL');
            }
            return r.status === 200;
          },
          () => false,
        ),
      ),
    );
    await first.stop('SIGKILL');
    const got = ids.filter((_, i) => answered[i]);
    t.ok(got.length >= 1, `${got.length} events answered 200 before the kill`);
    // What the store held at the kill: the test proves something only when some work was left.
    const pending = await inboxDepth(
      kind === 'redis' ? (store?.redis.url as string) : join(dirname(config), 'memory-store.json'),
    );
    t.ok(pending >= 1, `${pending} events still in the store's inbox at the kill, to be applied`);
    const second = await gatewayProcess(t, config, env);
    await waitFor(
      'every answered event applied',
      async () => (await plans(second, got)).every((p) => p === 'starter'),
      // Beside the bench (load 14), 39 events took over 15 s to apply.
      20_000,
    );
    t.pass('applied after the restart');
  });
}
