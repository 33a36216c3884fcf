import type { Logger } from 'pino';
import type { Operations } from '../admin/operations.js';
import { StripeApply } from '../billing/stripe-apply.js';
import { StripeMirror } from '../billing/stripe-mirror.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import type { StripeWebhookDeps } from '../features/stripe-webhook/index.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { Store } from '../store/store.js';
import type { Cleanups } from './cleanups.js';

/**
 * The Stripe mirror (docs/billing.md "Plans bought in Stripe"), started when the webhook's
 * signing secret is in the environment (STRIPE_WEBHOOK_SECRET): the webhook route's deps, and
 * the mirror that applies what it stores through the admin API's account change.
 */
export function buildStripe(o: {
  config: Config;
  store: Pick<Store, 'stripe' | 'accounts' | 'coordination'>;
  ops: Pick<Operations, 'accounts'>;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  cleanups: Cleanups;
  env?: NodeJS.ProcessEnv;
}): StripeWebhookDeps | null {
  const secret = (o.env ?? process.env).STRIPE_WEBHOOK_SECRET ?? '';
  if (secret === '') return null;
  const { store, clock } = o;
  const log = o.log.child({ component: 'stripe' });
  const metric = (r: Parameters<Metrics['stripe']>[0]): void => o.metrics.stripe(r);
  const apply = new StripeApply({
    stripe: store.stripe,
    accounts: store.accounts,
    change: async (id, patch, from) => {
      await o.ops.accounts.patchAccount(id, patch, from);
    },
    cfg: o.config.billing.stripe,
    metric,
    log,
    now: clock.now,
  });
  const mirror = new StripeMirror(apply, {
    stripe: store.stripe,
    coordination: store.coordination,
    log,
    now: clock.now,
  });
  mirror.start();
  o.cleanups.push(() => mirror.stop());
  return {
    secret,
    metric,
    inbox: async ({ id, type, body }) => {
      const now = clock.now();
      const fresh = await store.stripe.stripeReceive({ id, type, body, received_ms: now, attempts: 0, due_ms: now });
      if (fresh) mirror.kick();
      return fresh;
    },
  };
}
