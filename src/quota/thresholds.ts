import type { ThresholdContext } from '../events/event.js';
import type { Alerts, Threshold } from '../store/store.js';

/**
 * The counts at which `usage.threshold` is raised for a limit: one per distinct percent, at
 * ceil(limit·p/100) (at least 1), in the order a growing count reaches them. Above 100 a count
 * is reached only when overage lets usage run past the limit.
 */
export function thresholdsFor(limit: number, percents: readonly number[]): Threshold[] {
  return [...new Set(percents)]
    .map((percent) => ({ count: Math.max(1, Math.ceil((limit * percent) / 100)), percent }))
    .sort((a, b) => a.count - b.count || a.percent - b.percent);
}

/** What a consume spec carries for an account's period: undefined when no threshold applies. */
export function alertsFor(limit: number, percents: readonly number[], context: ThresholdContext): Alerts | undefined {
  const pending = thresholdsFor(limit, percents);
  if (pending.length === 0) return undefined;
  return { pending, next: (pending[0] as Threshold).count, context };
}
