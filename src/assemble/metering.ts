import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import { InvalidKeyThrottle } from '../keys/throttle.js';
import { Meter } from '../quota/meter.js';
import { retentionMs } from '../quota/retention.js';
import type { AttemptChange, AttemptGrant, Store } from '../store/store.js';

export interface MeteringOptions {
  config: Config;
  store: Store;
  clock: Clock;
}

/** The meter (keys, counting) and the invalid-key throttle, shared across instances when the store is. */
export function buildMetering(o: MeteringOptions): { meter: Meter; throttle: InvalidKeyThrottle } {
  const { config, store, clock } = o;
  const t = config.limits.invalid_key_throttle;
  const rule = { maxAttempts: t.max_attempts, windowMs: t.window_s * 1000, blockMs: t.block_s * 1000 };
  const { coordination } = store;
  // Counted by the store, so N instances behind a balancer do not give a scanner N times the tries.
  const ledger = (address: string, change: AttemptChange): Promise<AttemptGrant> =>
    coordination.invalidKeyAttempts(address, rule, change);
  // A key unknown because the store lost its data is no sign of a scanner, for as long as an
  // operator may take to restore the accounts; then the throttle counts again, restored or not.
  const pauseMs = t.paused_after_data_loss_s * 1000;
  const paused = (): boolean => {
    const since = store.msSinceDataLoss();
    return since !== null && since < pauseMs;
  };
  const throttle = new InvalidKeyThrottle(rule, clock.now, ledger, paused);
  coordination.subscribe((event) => {
    if (event.type === 'blocked') throttle.block(event.address, event.ms);
  });
  const meter = new Meter({
    accounts: store.accounts,
    counting: store.counting,
    coordination: store.coordination,
    plans: config.plans,
    zone: config.time_zone,
    now: clock.now,
    cache: config.limits.account_cache,
    retentionMs: retentionMs(config),
    keyWarningMs: config.keys.expiry_warning_days * 86_400_000,
    attempts: throttle,
  });
  return { meter, throttle };
}
