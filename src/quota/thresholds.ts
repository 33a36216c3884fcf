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

// The thresholds of a limit and a plan's percents, shared by every cached account that has them
// (`Alerts.pending` is replaced, never changed in place), for up to this many distinct ones.
const SHARED_MAX = 10_000;
const shared = new Map<string, readonly Threshold[]>();

export function sharedThresholds(limit: number, percents: readonly number[]): readonly Threshold[] {
  const key = `${limit}:${percents.join(',')}`;
  const known = shared.get(key);
  if (known !== undefined) return known;
  const made = thresholdsFor(limit, percents);
  if (shared.size < SHARED_MAX) shared.set(key, made);
  return made;
}

/** What a consume spec carries for an account's period: undefined when no threshold applies. */
export function alertsFor(limit: number, percents: readonly number[], context: ThresholdContext): Alerts | undefined {
  const pending = sharedThresholds(limit, percents);
  if (pending.length === 0) return undefined;
  return { pending, next: (pending[0] as Threshold).count, context };
}
