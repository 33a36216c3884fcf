/**
 * The operator's usage exports (`GET /admin/usage`, `GET /admin/usage/periods`, CLI `usage
 * export|periods`), streamed: accounts are read a page at a time, the ledger of a page in one
 * pipelined batch, and each page's rows are written before the next page is read, waiting for
 * the reader to drain. Memory stays bounded by one page, whatever the number of accounts.
 */
import type { Config } from '../config/config-schema.js';
import { allowanceFor } from '../quota/allowance.js';
import { dayTotals } from '../quota/day-totals.js';
import { patiently } from '../store/patiently.js';
import type { AccountStore, CountingStore, PeriodRecord, StoredAccount } from '../store/store.js';
import type { DayRange } from '../time/days.js';
import { formatInZone } from '../time/zone.js';
import { accountPages, type ExportedAccount } from './export-accounts.js';
import type { ExportQuery } from './usage-query.js';

// Accounts per page: the ledger reads of one page go to the store as one pipelined batch.
const PAGE = 200;

const DAY_COLUMNS = ['account_id', 'label', 'plan', 'date', 'requests'] as const;
const PERIOD_COLUMNS = [
  'account_id',
  'label',
  'plan',
  'period_started_at',
  'period_ends_at',
  'request_limit',
  'requests_used',
  'granted_requests',
  'overage_requests',
] as const;

export interface DayRow {
  account_id: string;
  label: string;
  plan: string;
  date: string;
  requests: number;
}

export interface PeriodRow {
  account_id: string;
  label: string;
  plan: string;
  period_started_at: string;
  period_ends_at: string;
  /** Before grants: the plan's or the account's. */
  request_limit: number;
  requests_used: number;
  /** Requests granted in the period (top-ups). */
  granted_requests: number;
  /** Requests counted past the limit plus the grants in force when counted (overage, each plan of the period's); 0 when none. */
  overage_requests: number;
  /** JSON only, and only for a period whose plan or limit changed while it ran. */
  plan_changes?: Array<{ changed_at: string; plan: string; request_limit: number; requests_used: number }>;
}

/** Where an export is written: a response or a file. */
export interface Sink {
  write(chunk: string): boolean;
  once(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  removeListener(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  readonly destroyed: boolean;
}

export interface UsageExport {
  contentType: string;
  /** The file name a CSV export is offered as (`usage-FROM-TO.csv`, `usage-periods-FROM-TO.csv`); null for JSON. */
  filename: string | null;
  /** Writes the whole export; rejects when the sink closes first. */
  writeTo(sink: Sink): Promise<void>;
}

/** An operation's answer that is an export, written as it is read rather than as one JSON document. */
export const isExport = (v: unknown): v is UsageExport => typeof v === 'object' && v !== null && 'writeTo' in v;

export function dayRows(a: StoredAccount, records: PeriodRecord[], range: DayRange): DayRow[] {
  const rows: DayRow[] = [];
  for (const [date, { requests, plan }] of dayTotals(records, range.from, range.to))
    if (requests > 0) rows.push({ account_id: a.id, label: a.label ?? '', plan, date, requests });
  return rows;
}

/**
 * One row per period overlapping the range: its record, or the period in progress (which has no
 * record until its first request) with a count of 0. A deleted account has no period in progress.
 */
export function periodRows(
  { account: a, deleted }: ExportedAccount,
  records: PeriodRecord[],
  range: DayRange,
  config: Config,
  now: number,
): PeriodRow[] {
  const zone = config.time_zone;
  const all = [...records];
  const current = deleted ? null : currentPeriod(a, config, now);
  if (
    current &&
    current.startMs < range.toMs &&
    current.endMs > range.fromMs &&
    !records.some((r) => r.periodId === current.periodId)
  )
    all.push(current);
  return all.map((r) => ({
    account_id: a.id,
    label: a.label ?? '',
    plan: r.plan,
    period_started_at: formatInZone(r.startMs, zone),
    period_ends_at: formatInZone(r.endMs, zone),
    request_limit: r.limit,
    requests_used: r.used,
    granted_requests: r.granted,
    overage_requests: overageOf(r),
    ...(r.changes.length > 0 && {
      plan_changes: r.changes.map((c) => ({
        changed_at: formatInZone(c.atMs, zone),
        plan: c.plan,
        request_limit: c.limit,
        requests_used: c.used,
      })),
    }),
  }));
}

/**
 * Requests counted past the limit (plus the period's grants) in force when they were counted,
 * plan by plan when the plan changed mid-period; or past the period's final limit when that is
 * more (a limit lowered below the count).
 */
function overageOf(r: PeriodRecord): number {
  let before = 0;
  let over = 0;
  for (const { limit, used } of [...r.changes, { limit: r.limit, used: r.used }]) {
    over += Math.max(0, used - Math.max(before, limit + r.granted));
    before = Math.max(before, used);
  }
  return Math.max(over, r.used - r.limit - r.granted);
}

/** The account's period now, as a record with nothing counted; null when its plan is not configured. */
function currentPeriod(a: StoredAccount, config: Config, now: number): PeriodRecord | null {
  try {
    const al = allowanceFor(a, config.plans, config.time_zone, now);
    const p = al.period;
    return {
      periodId: p.id,
      plan: al.plan,
      kind: p.kind,
      limit: al.limit - al.granted,
      granted: al.granted,
      startMs: p.startMs,
      endMs: p.endMs,
      used: 0,
      days: [],
      changes: [],
    };
  } catch {
    return null;
  }
}

const CSV_SPECIAL = /[",\r\n]/;
// A cell a spreadsheet would read as a formula (OWASP "CSV injection": an account label such as
// =HYPERLINK(...)) is made text: a leading ' and quotes. Only CSV: JSON keeps the label exactly.
// LibreOffice drops leading control characters (a NUL included) and spaces before it looks for a
// formula, so any cell starting with one is treated the same: labels stored before the admin API
// refused control characters are still exported safely.
const FORMULA_START = /^\s*[=+\-@]/;
const startsWithControl = (v: string): boolean => {
  const c = v.charCodeAt(0);
  return c <= 0x1f || c === 0x7f;
};
function csvField(v: string | number): string {
  if (typeof v === 'number') return String(v);
  const text = startsWithControl(v) || FORMULA_START.test(v) ? `'${v}` : v;
  return text === v && !CSV_SPECIAL.test(v) ? v : `"${text.replaceAll('"', '""')}"`;
}

function csvLine(columns: readonly string[], row: object): string {
  const r = row as Record<string, string | number>;
  return `${columns.map((c) => csvField(r[c] as string | number)).join(',')}\r\n`;
}

/** Resolves once the sink takes more; rejects when it closes or fails first (the reader went away). */
function drained(sink: Sink): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      sink.removeListener('close', gone);
      sink.removeListener('error', gone);
      resolve();
    };
    const gone = (): void => {
      sink.removeListener('drain', done);
      reject(new Error('the export was closed before it ended'));
    };
    sink.once('drain', done);
    sink.once('close', gone);
    sink.once('error', gone);
  });
}

async function put(sink: Sink, chunk: string): Promise<void> {
  if (sink.destroyed) throw new Error('the export was closed before it ended');
  if (!sink.write(chunk)) await drained(sink);
}

/**
 * An export of daily rows (`kind` days) or period rows, ready to be written. `only` is the
 * account asked for, already looked up (an unknown one is a 404 before anything is written).
 */
export function usageExport(
  kind: 'days' | 'periods',
  q: ExportQuery,
  only: ExportedAccount | null,
  store: { accounts: AccountStore; counting: CountingStore },
  config: Config,
  now: () => number,
): UsageExport {
  const columns = kind === 'days' ? DAY_COLUMNS : PERIOD_COLUMNS;
  const json = q.format === 'json';
  return {
    contentType: json ? 'application/json' : 'text/csv; charset=utf-8',
    // Each export its own name, so the two of one range saved side by side do not overwrite each other.
    filename: json ? null : `usage-${kind === 'days' ? '' : 'periods-'}${q.range.from}-${q.range.to}.csv`,
    async writeTo(sink) {
      const { range } = q;
      const head = json
        ? `{"from":${JSON.stringify(range.from)},"to":${JSON.stringify(range.to)},"rows":[`
        : `${columns.join(',')}\r\n`;
      await put(sink, head);
      let first = true;
      for await (const accounts of accountPages(store.accounts, only, PAGE)) {
        const ids = accounts.map((a) => a.account.id);
        const ledgers = await patiently(() => store.counting.periodRecords(ids, range.fromMs, range.toMs));
        let chunk = '';
        for (const [i, a] of accounts.entries()) {
          const records = ledgers[i] ?? [];
          const rows =
            kind === 'days' ? dayRows(a.account, records, range) : periodRows(a, records, range, config, now());
          for (const row of rows) {
            if (json) {
              chunk += (first ? '' : ',') + JSON.stringify(row);
              first = false;
            } else chunk += csvLine(columns, row);
          }
        }
        if (chunk !== '') await put(sink, chunk);
      }
      if (json) await put(sink, ']}');
    },
  };
}
