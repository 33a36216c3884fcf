import type { Logger } from 'pino';
import type { Config } from '../config/config-schema.js';
import type { AccountStore, BillingStore, CoordinationStore } from '../store/store.js';
import { BillingExporter, type BillingMetrics } from './exporter.js';
import { sendersFor } from './senders.js';

/** The configured exporters, started (a no-op without any); `names` for the admin operations. */
export function startBilling(o: {
  accounts: AccountStore;
  coordination: CoordinationStore;
  billing: BillingStore;
  config: Config;
  metrics: BillingMetrics;
  log: Logger;
  now: () => number;
}): { names: string[]; stop(): Promise<void> } {
  const { config, metrics, log, now } = o;
  const senders = sendersFor(config.billing.exporters, process.env, config.webhooks.allow_private_addresses);
  const exporter = new BillingExporter({
    deps: { accounts: o.accounts, billing: o.billing, coordination: o.coordination },
    cfg: config.billing,
    senders,
    metrics,
    log: log.child({ component: 'billing' }),
    now,
  });
  exporter.start();
  return { names: senders.map((s) => s.name), stop: () => exporter.stop() };
}
