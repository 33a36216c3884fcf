/**
 * usage-history.php: the account's requests by day and its periods over a range of days,
 * without counting. The key is judged as on usage.php (an invalid key counts towards the
 * invalid-key throttle); the range is checked once the key is known, as on the metered routes.
 */

import type { Exchange } from '../../http/core-types.js';
import { fail, rateFields, send, uncounted } from '../../http/metered/pipeline.js';
import { dayTotals } from '../../quota/day-totals.js';
import type { AccountEntry, CountedResult } from '../../quota/meter.js';
import { type Usage, usageObject } from '../../quota/usage.js';
import { addDays, type DayRange, dayOf, dayRange } from '../../time/days.js';
import { formatInZone } from '../../time/zone.js';

const JSON_TYPE = 'application/json';

export interface HistoryOptions {
  zone: string;
  retentionDays: number;
}

/**
 * The range of a query, or null: each of `from` and `to` exactly once, real dates, `from` not
 * after `to`, at most MAX_RANGE_DAYS, and `from` within retention (no earlier than today minus
 * `usage.retention_days`).
 */
export function historyRange(search: string, o: HistoryOptions, now: number): DayRange | null {
  const q = new URLSearchParams(search);
  for (const name of new Set(q.keys())) if (q.getAll(name).length > 1) return null;
  const range = dayRange(q.get('from'), q.get('to'), o.zone);
  if (range === null || range.from < addDays(dayOf(now, o.zone), -o.retentionDays)) return null;
  return range;
}

export function usageHistory(x: Exchange, search: string, o: HistoryOptions): void {
  uncounted(x, search, (x, counted) => answer(x, counted, search, o));
}

async function answer(x: Exchange, { entry, used }: CountedResult, search: string, o: HistoryOptions): Promise<void> {
  const { clock, meter, headers: lists } = x.services;
  const range = historyRange(search, o, clock.now());
  if (range === null) return fail(x, 'invalid_range');
  const records = await meter.periods(entry, range.fromMs, range.toMs);
  const totals = dayTotals(records, range.from, range.to);
  const days: Array<{ date: string; requests: number }> = [];
  for (let d = range.from; d <= range.to; d = addDays(d, 1))
    days.push({ date: d, requests: totals.get(d)?.requests ?? 0 });
  const body = JSON.stringify({
    success: true,
    from: range.from,
    to: range.to,
    days,
    periods: periods(entry, used, records, range, o.zone),
  });
  const headers = lists.counted200(JSON_TYPE, Buffer.byteLength(body), rateFields(entry, used, clock.now()));
  send(x, 200, headers, body);
}

/** The periods' usage objects, oldest first; the period in progress even before its first request. */
function periods(
  entry: AccountEntry,
  used: number,
  records: Awaited<ReturnType<Exchange['services']['meter']['periods']>>,
  range: DayRange,
  zone: string,
): Usage[] {
  const out = records.map(
    (r): Usage => ({
      plan_type: r.plan,
      requests_used: r.used,
      request_limit: r.limit + r.granted,
      requests_remaining: Math.max(0, r.limit + r.granted - r.used),
      request_period: r.kind,
      period_started_at: formatInZone(r.startMs, zone),
      period_ends_at: formatInZone(r.endMs, zone),
    }),
  );
  const current = entry.allowance.period;
  if (current.startMs < range.toMs && current.endMs > range.fromMs && !records.some((r) => r.periodId === current.id))
    out.push(usageObject(entry.allowance, used));
  return out;
}
