import type { PeriodRecord } from '../store/store.js';

/**
 * Requests by day within `from`..`to` (YYYY-MM-DD, both included), summed over the periods a day
 * belongs to (a period that starts at 10:29 shares its first day with the one before), oldest
 * first, with the plan of the latest period counted on that day.
 */
export function dayTotals(
  records: PeriodRecord[],
  from: string,
  to: string,
): Map<string, { requests: number; plan: string }> {
  const out = new Map<string, { requests: number; plan: string }>();
  for (const r of records) {
    for (const [day, n] of r.days) {
      if (day < from || day > to) continue;
      const seen = out.get(day);
      // Records come oldest first: a shared day ends with the later period's plan.
      out.set(day, { requests: (seen?.requests ?? 0) + n, plan: r.plan });
    }
  }
  return new Map([...out].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
}
