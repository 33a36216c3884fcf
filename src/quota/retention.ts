import type { Config } from '../config/config-schema.js';
import { DAY_MS } from '../time/zone.js';

/**
 * How long after its end a period's counter, days and record are kept: `usage.retention_days`,
 * or `store.counter_retention_days` when that is longer. One expiry for all three, since a
 * record without its count would be no invoice line.
 */
export function retentionMs(config: Pick<Config, 'store' | 'usage'>): number {
  return Math.max(config.store.counter_retention_days, config.usage.retention_days) * DAY_MS;
}
