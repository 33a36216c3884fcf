import type { Alerts, Threshold } from './interface.js';

/** Takes the thresholds `used` has reached off `alerts` and returns them. */
export function dropReached(alerts: Alerts, used: number): Threshold[] {
  if (used < alerts.next) return [];
  const crossed = alerts.pending.filter((t) => t.count <= used);
  const rest = alerts.pending.filter((t) => t.count > used);
  alerts.pending = rest;
  alerts.next = rest[0]?.count ?? Infinity;
  return crossed;
}
