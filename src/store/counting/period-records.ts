import type { PeriodRecord, PlanChange } from './interface.js';
import { DAYLESS } from './ledger-lua.js';

const DAY_FIELD = /^\d{4}-\d{2}-\d{2}$/;

/** Oldest first: the order every reader of the ledger gets. */
export const byStart = (a: PeriodRecord, b: PeriodRecord): number => a.startMs - b.startMs;

/**
 * The PERIODS script's reply (lua.ts) as records: `{id, used, n, field, value, …}` per period.
 */
export function decodePeriods(reply: Array<string | number>): PeriodRecord[] {
  const out: PeriodRecord[] = [];
  for (let i = 0; i < reply.length; ) {
    const periodId = String(reply[i]);
    const used = Number(reply[i + 1]);
    const n = Number(reply[i + 2]);
    const fields = new Map<string, string>();
    const counts = new Map<string, number>();
    const marks: Array<[day: string, v: number, s: number]> = [];
    let old = 0;
    for (let j = i + 3; j < i + 3 + n; j += 2) {
      const field = String(reply[j]);
      const value = String(reply[j + 1]);
      if (DAY_FIELD.test(field)) {
        counts.set(field, (counts.get(field) ?? 0) + Number(value));
        old += Number(value);
      } else if (field.startsWith('@') && DAY_FIELD.test(field.slice(1))) {
        const [v, s] = value.split(' ');
        marks.push([field.slice(1), Number(v), Number(s)]);
      } else fields.set(field, value);
    }
    i += 3 + n;
    // A marked day counts to the next mark, the last to the ledger's count (ledger-lua.ts).
    marks.sort((a, b) => (a[0] < b[0] ? -1 : 1));
    const ledger = used + Number(fields.get(DAYLESS) ?? 0);
    marks.forEach(([day, v, s], k) => {
      const [, nv, ns] = marks[k + 1] ?? [day, ledger, old];
      counts.set(day, (counts.get(day) ?? 0) + nv - v - (ns - s));
    });
    // A day whose count a refund took back to zero is left out.
    const days = [...counts].filter((d) => d[1] > 0).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    out.push({
      periodId,
      plan: fields.get('plan') ?? '',
      kind: fields.get('kind') === 'trial' ? 'trial' : 'monthly',
      limit: Number(fields.get('limit') ?? 0),
      granted: Number(fields.get('granted') ?? 0),
      startMs: Number(fields.get('start') ?? 0),
      endMs: Number(fields.get('end') ?? 0),
      used,
      days,
      changes: decodeChanges(fields.get('changes') ?? ''),
    });
  }
  return out.sort(byStart);
}

/** Lines of `AT LIMIT USED PLAN` (RECORD_CHANGE in lua.ts). */
function decodeChanges(text: string): PlanChange[] {
  const out: PlanChange[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+) (\d+) (\d+) (.*)$/.exec(line);
    if (m) out.push({ atMs: Number(m[1]), limit: Number(m[2]), used: Number(m[3]), plan: m[4] as string });
  }
  return out;
}
