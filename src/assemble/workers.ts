import type { Logger } from 'pino';
import { startBilling } from '../billing/start.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { Store } from '../store/store.js';
import { startKeyExpiryCheck } from '../webhooks/key-expiry.js';
import { WebhookWorker } from '../webhooks/worker.js';
import type { Cleanups } from './cleanups.js';

export interface WorkersOptions {
  config: Config;
  store: Store;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  cleanups: Cleanups;
}

/** The background workers: webhook delivery, the key expiry check and the billing exporters, started. */
export function buildWorkers(o: WorkersOptions): { delivery: WebhookWorker; exporters: string[] } {
  const { config, store, metrics, clock, log, cleanups } = o;
  const delivery = new WebhookWorker({
    events: store.events,
    accounts: store.accounts,
    counting: store.counting,
    coordination: store.coordination,
    capabilities: store.capabilities,
    config,
    metrics,
    log: log.child({ component: 'webhooks' }),
    now: clock.now,
  });
  delivery.start();
  cleanups.push(
    startKeyExpiryCheck(store, config, clock, log.child({ component: 'key-expiry' }), () => delivery.kick()),
  );
  // Cleanups run last first: this one after the listeners have drained (SIGTERM answers at
  // once with `Connection: close`), before the store closes, so attempts under way are recorded.
  cleanups.push(() => delivery.stop());
  const billing = startBilling({
    accounts: store.accounts,
    coordination: store.coordination,
    billing: store.billing,
    config,
    metrics,
    log,
    now: clock.now,
  });
  cleanups.push(() => billing.stop());
  return { delivery, exporters: billing.names };
}
