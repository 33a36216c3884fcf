import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import type { Period } from '../../src/quota/period.js';
import { monthlyPeriod, trialPeriod } from '../../src/quota/period.js';
import { formatInZone, isValidTimeZone, localTimeToMs } from '../../src/time/zone.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const JHB = 'Africa/Johannesburg';
const LON = 'Europe/London';
const NY = 'America/New_York';
const LHI = 'Australia/Lord_Howe'; // half-hour DST shift
const P = (iso: string): number => {
  const ms = Date.parse(iso);
  assert.ok(Number.isFinite(ms), `bad fixture ${iso}`);
  return ms;
};

/** startedAt of `n` consecutive periods, walking from the one containing nowMs. */
function starts(next: (nowMs: number) => Period, nowMs: number, n: number): string[] {
  const out: string[] = [];
  for (let p = next(nowMs); out.length < n; p = next(p.endMs)) out.push(p.startedAt);
  return out;
}

// ---------------------------------------------------------------------------
// Independent reading of local wall-clock fields, used to check the implementation.
const testFormatters = new Map<string, Intl.DateTimeFormat>();
interface Fields {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
}
function fields(ms: number, zone: string): Fields {
  let f = testFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    testFormatters.set(zone, f);
  }
  const parts = f.formatToParts(ms);
  const get = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value);
  return { y: get('year'), mo: get('month') - 1, d: get('day'), h: get('hour'), mi: get('minute'), s: get('second') };
}
/** local wall time (second precision) read as if UTC */
const wallUtc = (ms: number, zone: string): number => {
  const f = fields(ms, zone);
  return Date.UTC(f.y, f.mo, f.d, f.h, f.mi, f.s);
};
const offsetAt = (ms: number, zone: string): number => wallUtc(ms, zone) - (ms - (((ms % 1000) + 1000) % 1000));
const localDayNumber = (ms: number, zone: string): number => {
  const f = fields(ms, zone);
  return Date.UTC(f.y, f.mo, f.d) / DAY;
};
const daysInMonth = (y: number, mo: number): number => new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();

/**
 * A period start must show `expectedWall` on the local clock. It may differ only by being
 * pushed forward across a spring-forward gap (by exactly the gap); in an overlap it must
 * be the earlier instant unless it is the anchor itself.
 */
function assertStartWall(startMs: number, expectedWall: number, zone: string, isAnchor: boolean): void {
  const actual = wallUtc(startMs, zone);
  if (actual === expectedWall) {
    if (isAnchor) return;
    const o = offsetAt(startMs, zone);
    const oBefore = offsetAt(startMs - 6 * HOUR, zone);
    if (oBefore > o) {
      const earlier = startMs - (oBefore - o);
      assert.notEqual(wallUtc(earlier, zone), expectedWall, 'ambiguous wall time must use the earlier instant');
    }
    return;
  }
  const gap = actual - expectedWall;
  assert.ok(gap > 0 && gap <= 2 * HOUR, `start ${formatInZone(startMs, zone)} is off by ${gap}ms`);
  assert.equal(
    offsetAt(startMs, zone) - offsetAt(startMs - gap, zone),
    gap,
    `start ${formatInZone(startMs, zone)} differs from the wall time without a spring-forward gap`,
  );
}

function assertWellFormed(p: Period): void {
  assert.ok(p.startMs < p.endMs);
  assert.equal(p.id, String(p.startMs));
  assert.equal(Date.parse(p.startedAt), p.startMs);
  assert.equal(Date.parse(p.endsAt), p.endMs);
  assert.match(p.startedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
  assert.match(p.endsAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
}

// ---------------------------------------------------------------------------
t.test('trial periods in Johannesburg (+02:00, no DST)', async (t) => {
  const anchor = P('2026-11-04T09:30:00+02:00');

  t.test('first period runs 14 calendar days from the anchor', async (t) => {
    const p = trialPeriod(anchor, anchor + 3 * DAY, JHB);
    t.same(p, {
      kind: 'trial',
      id: String(anchor),
      startMs: anchor,
      endMs: anchor + 14 * DAY,
      startedAt: '2026-11-04T09:30:00+02:00',
      endsAt: '2026-11-18T09:30:00+02:00',
    });
  });

  t.test('crossing the boundary between two requests: endMs-1 is period 1, endMs is period 2', async (t) => {
    const first = trialPeriod(anchor, anchor, JHB);
    const before = trialPeriod(anchor, first.endMs - 1, JHB);
    const at = trialPeriod(anchor, first.endMs, JHB);
    t.same(before, first);
    t.equal(at.startMs, first.endMs);
    t.not(at.id, before.id);
    t.equal(at.startedAt, '2026-11-18T09:30:00+02:00');
    t.equal(at.endsAt, '2026-12-02T09:30:00+02:00');
  });

  t.test('now before the anchor gives the first period', async (t) => {
    t.same(trialPeriod(anchor, anchor - 365 * DAY, JHB), trialPeriod(anchor, anchor, JHB));
  });

  t.test('a far-away now jumps straight to its window', async (t) => {
    const p = trialPeriod(anchor, anchor + 1000 * DAY, JHB);
    t.equal(p.startMs, anchor + 71 * 14 * DAY);
    t.equal(p.endMs, anchor + 72 * 14 * DAY);
  });

  t.test('custom window length', async (t) => {
    const p = trialPeriod(anchor, anchor + 8 * DAY, JHB, 7);
    t.equal(p.startedAt, '2026-11-11T09:30:00+02:00');
    t.equal(p.endsAt, '2026-11-18T09:30:00+02:00');
  });

  t.test('milliseconds of the anchor are kept in startMs but dropped from startedAt', async (t) => {
    const p = trialPeriod(anchor + 250, anchor + 20 * DAY, JHB);
    t.equal(p.startMs, anchor + 250 + 14 * DAY);
    t.equal(p.startedAt, '2026-11-18T09:30:00+02:00');
  });
});

t.test('monthly cycles clamp to the month end without the clamp sticking', async (t) => {
  const cycles = (anchorIso: string, n: number, zone = JHB): string[] =>
    starts((now) => monthlyPeriod(P(anchorIso), now, zone), P(anchorIso), n);

  t.test('anchor 31 Jan: cycle ends 28 Feb in a non-leap year (2027), next ends 31 Mar', async (t) => {
    const first = monthlyPeriod(P('2027-01-31T10:00:00+02:00'), P('2027-02-10T00:00:00+02:00'), JHB);
    t.equal(first.startedAt, '2027-01-31T10:00:00+02:00');
    t.equal(first.endsAt, '2027-02-28T10:00:00+02:00');
    const second = monthlyPeriod(P('2027-01-31T10:00:00+02:00'), first.endMs, JHB);
    t.equal(second.startedAt, '2027-02-28T10:00:00+02:00');
    t.equal(second.endsAt, '2027-03-31T10:00:00+02:00');
  });

  t.test('anchor 31 Jan: 29 Feb in a leap year (2028), then 31 Mar', async (t) => {
    t.same(cycles('2028-01-31T10:00:00+02:00', 4), [
      '2028-01-31T10:00:00+02:00',
      '2028-02-29T10:00:00+02:00',
      '2028-03-31T10:00:00+02:00',
      '2028-04-30T10:00:00+02:00',
    ]);
  });

  t.test('anchor on the 31st through 30-day months', async (t) => {
    t.same(cycles('2027-03-31T23:59:59+02:00', 4), [
      '2027-03-31T23:59:59+02:00',
      '2027-04-30T23:59:59+02:00',
      '2027-05-31T23:59:59+02:00',
      '2027-06-30T23:59:59+02:00',
    ]);
  });

  t.test('anchor on the 30th', async (t) => {
    t.same(cycles('2027-01-30T00:00:00+02:00', 3), [
      '2027-01-30T00:00:00+02:00',
      '2027-02-28T00:00:00+02:00',
      '2027-03-30T00:00:00+02:00',
    ]);
  });

  t.test('anchor on the 29th in a non-leap and a leap year', async (t) => {
    t.same(cycles('2027-01-29T08:00:00+02:00', 3), [
      '2027-01-29T08:00:00+02:00',
      '2027-02-28T08:00:00+02:00',
      '2027-03-29T08:00:00+02:00',
    ]);
    t.same(cycles('2028-01-29T08:00:00+02:00', 3), [
      '2028-01-29T08:00:00+02:00',
      '2028-02-29T08:00:00+02:00',
      '2028-03-29T08:00:00+02:00',
    ]);
  });

  t.test('anchor 29 Feb 2028: 29 Mar next, 28 Feb in 2029', async (t) => {
    const anchor = P('2028-02-29T12:00:00+02:00');
    t.same(cycles('2028-02-29T12:00:00+02:00', 2), ['2028-02-29T12:00:00+02:00', '2028-03-29T12:00:00+02:00']);
    const p = monthlyPeriod(anchor, P('2029-03-01T00:00:00+02:00'), JHB);
    t.equal(p.startedAt, '2029-02-28T12:00:00+02:00');
    t.equal(p.endsAt, '2029-03-29T12:00:00+02:00');
  });

  t.test('year-end crossing (Dec → Jan)', async (t) => {
    t.same(cycles('2026-12-31T18:00:00+02:00', 3), [
      '2026-12-31T18:00:00+02:00',
      '2027-01-31T18:00:00+02:00',
      '2027-02-28T18:00:00+02:00',
    ]);
    const p = monthlyPeriod(P('2026-12-15T09:00:00+02:00'), P('2027-01-02T00:00:00+02:00'), JHB);
    t.equal(p.startedAt, '2026-12-15T09:00:00+02:00');
    t.equal(p.endsAt, '2027-01-15T09:00:00+02:00');
  });

  t.test('now before the anchor gives the first cycle', async (t) => {
    const anchor = P('2027-01-31T10:00:00+02:00');
    const p = monthlyPeriod(anchor, anchor - 400 * DAY, JHB);
    t.equal(p.kind, 'monthly');
    t.equal(p.startMs, anchor);
    t.equal(p.endsAt, '2027-02-28T10:00:00+02:00');
  });

  t.test('crossing the cycle boundary between two requests', async (t) => {
    const anchor = P('2027-01-31T10:00:00+02:00');
    const p = monthlyPeriod(anchor, P('2027-02-28T09:59:59.999+02:00'), JHB);
    const q = monthlyPeriod(anchor, P('2027-02-28T10:00:00+02:00'), JHB);
    t.equal(p.id, String(anchor));
    t.equal(q.startMs, p.endMs);
    t.not(q.id, p.id);
  });

  t.test('a cycle decades after the anchor', async (t) => {
    const p = monthlyPeriod(P('2001-01-31T10:00:00+02:00'), P('2096-02-29T11:00:00+02:00'), JHB);
    t.equal(p.startedAt, '2096-02-29T10:00:00+02:00');
    t.equal(p.endsAt, '2096-03-31T10:00:00+02:00');
  });
});

t.test('Europe/London across DST keeps the local wall-clock time', async (t) => {
  t.test('monthly anchor at 01:30 on 31 March switches between +01:00 and +00:00', async (t) => {
    const anchor = P('2026-03-31T01:30:00+01:00');
    t.same(
      starts((now) => monthlyPeriod(anchor, now, LON), anchor, 13),
      [
        '2026-03-31T01:30:00+01:00',
        '2026-04-30T01:30:00+01:00',
        '2026-05-31T01:30:00+01:00',
        '2026-06-30T01:30:00+01:00',
        '2026-07-31T01:30:00+01:00',
        '2026-08-31T01:30:00+01:00',
        '2026-09-30T01:30:00+01:00',
        '2026-10-31T01:30:00+00:00',
        '2026-11-30T01:30:00+00:00',
        '2026-12-31T01:30:00+00:00',
        '2027-01-31T01:30:00+00:00',
        '2027-02-28T01:30:00+00:00',
        '2027-03-31T01:30:00+01:00',
      ],
    );
    const october = monthlyPeriod(anchor, P('2026-10-15T00:00:00Z'), LON);
    t.equal(october.endMs - october.startMs, 31 * DAY + HOUR, 'cycle spanning the October change is 1h longer');
    const march = monthlyPeriod(anchor, P('2027-03-15T00:00:00Z'), LON);
    t.equal(march.endMs - march.startMs, 31 * DAY - HOUR, 'cycle spanning the March change is 1h shorter');
  });

  t.test('trial spanning the last Sunday of March is 1h shorter', async (t) => {
    const p = trialPeriod(P('2026-03-20T09:00:00+00:00'), P('2026-03-30T00:00:00Z'), LON);
    t.equal(p.startedAt, '2026-03-20T09:00:00+00:00');
    t.equal(p.endsAt, '2026-04-03T09:00:00+01:00');
    t.equal(p.endMs - p.startMs, 14 * DAY - HOUR);
  });

  t.test('trial spanning the last Sunday of October is 1h longer', async (t) => {
    const p = trialPeriod(P('2026-10-20T09:00:00+01:00'), P('2026-10-26T00:00:00Z'), LON);
    t.equal(p.startedAt, '2026-10-20T09:00:00+01:00');
    t.equal(p.endsAt, '2026-11-03T09:00:00+00:00');
    t.equal(p.endMs - p.startMs, 14 * DAY + HOUR);
  });

  t.test('01:30 on 2026-03-29 (spring-forward gap) is shifted forward by the gap to 02:30 BST', async (t) => {
    const anchor = P('2026-03-15T01:30:00+00:00');
    t.same(
      starts((now) => trialPeriod(anchor, now, LON), anchor, 3),
      [
        '2026-03-15T01:30:00+00:00',
        '2026-03-29T02:30:00+01:00',
        '2026-04-12T01:30:00+01:00', // the shift does not carry over
      ],
    );
  });

  t.test('a monthly start in the gap (31 Mar 2024 was the last Sunday) is shifted forward too', async (t) => {
    const anchor = P('2024-01-31T01:30:00+00:00');
    t.same(
      starts((now) => monthlyPeriod(anchor, now, LON), anchor, 4),
      [
        '2024-01-31T01:30:00+00:00',
        '2024-02-29T01:30:00+00:00',
        '2024-03-31T02:30:00+01:00',
        '2024-04-30T01:30:00+01:00',
      ],
    );
  });

  t.test('an ambiguous 01:30 on 2026-10-25 (fall back) uses the earlier instant, +01:00', async (t) => {
    const anchor = P('2026-10-11T01:30:00+01:00');
    t.same(
      starts((now) => trialPeriod(anchor, now, LON), anchor, 3),
      ['2026-10-11T01:30:00+01:00', '2026-10-25T01:30:00+01:00', '2026-11-08T01:30:00+00:00'],
    );
  });

  t.test('an anchor at the later occurrence of an ambiguous time still starts the first period', async (t) => {
    const anchor = P('2026-10-25T01:30:00+00:00');
    const p = trialPeriod(anchor, anchor, LON);
    t.equal(p.startMs, anchor);
    t.equal(p.startedAt, '2026-10-25T01:30:00+00:00');
    t.equal(p.endsAt, '2026-11-08T01:30:00+00:00');
  });

  t.test('America/New_York gap at 02:30 on 2026-03-08 resolves to 03:30 EDT', async (t) => {
    const anchor = P('2026-03-01T02:30:00-05:00');
    t.same(
      starts((now) => trialPeriod(anchor, now, NY, 7), anchor, 3),
      ['2026-03-01T02:30:00-05:00', '2026-03-08T03:30:00-04:00', '2026-03-15T02:30:00-04:00'],
    );
  });
});

t.test('formatInZone writes local time with its offset at second precision', async (t) => {
  const cases: [string, string, string][] = [
    ['2026-11-04T07:30:00Z', JHB, '2026-11-04T09:30:00+02:00'],
    ['2026-01-15T12:00:00Z', LON, '2026-01-15T12:00:00+00:00'],
    ['2026-07-15T12:00:00Z', LON, '2026-07-15T13:00:00+01:00'],
    ['2026-07-15T12:00:00Z', 'UTC', '2026-07-15T12:00:00+00:00'],
    ['2026-01-15T12:00:00Z', NY, '2026-01-15T07:00:00-05:00'],
    ['2026-07-15T12:00:00Z', NY, '2026-07-15T08:00:00-04:00'],
    ['2026-01-01T03:00:00Z', NY, '2025-12-31T22:00:00-05:00'],
    ['2026-01-15T12:00:00Z', 'Asia/Kolkata', '2026-01-15T17:30:00+05:30'],
    ['2026-07-15T12:00:00Z', LHI, '2026-07-15T22:30:00+10:30'],
    ['2026-01-15T12:00:00Z', LHI, '2026-01-15T23:00:00+11:00'],
    ['2026-01-14T22:00:00Z', JHB, '2026-01-15T00:00:00+02:00'],
    ['2026-11-04T07:30:00.999Z', JHB, '2026-11-04T09:30:00+02:00'],
  ];
  for (const [utc, zone, expected] of cases) t.equal(formatInZone(P(utc), zone), expected, `${utc} in ${zone}`);
  t.equal(formatInZone(-1, 'UTC'), '1969-12-31T23:59:59+00:00', 'truncates toward the earlier second');
  t.equal(
    formatInZone(P('1900-01-01T00:00:00Z'), 'Africa/Monrovia'),
    '1899-12-31T23:16:52-00:43:08',
    'LMT offset with seconds',
  );
});

t.test('localTimeToMs converts a local wall time with the same DST rules', async (t) => {
  t.equal(localTimeToMs('2026-11-04T00:01:00', JHB), P('2026-11-04T00:01:00+02:00'));
  t.equal(localTimeToMs('2026-11-04T00:01', JHB), P('2026-11-04T00:01:00+02:00'), 'seconds optional');
  t.equal(localTimeToMs('2026-11-04T00:01:00.5', JHB), P('2026-11-04T00:01:00.500+02:00'));
  t.equal(localTimeToMs('2026-07-01T12:00:00', NY), P('2026-07-01T12:00:00-04:00'));
  t.equal(localTimeToMs('2026-03-29T01:30:00', LON), P('2026-03-29T02:30:00+01:00'), 'gap: shifted forward');
  t.equal(localTimeToMs('2026-10-25T01:30:00', LON), P('2026-10-25T01:30:00+01:00'), 'overlap: earlier instant');
  t.equal(localTimeToMs('2026-10-25T02:00:00', LON), P('2026-10-25T02:00:00+00:00'), 'just after the overlap');
  t.equal(localTimeToMs('2026-03-29T00:59:59', LON), P('2026-03-29T00:59:59+00:00'), 'just before the gap');
  for (const bad of [
    '2026-02-29T00:00',
    '2026-13-01T00:00',
    '2026-00-10T00:00',
    '2026-01-01T24:00',
    '2026-01-01',
    'soon',
  ]) {
    t.throws(() => localTimeToMs(bad, JHB), RangeError, bad);
  }
  t.throws(() => localTimeToMs('2026-01-01T00:00', 'Mars/Olympus'), RangeError);
});

t.test('isValidTimeZone accepts IANA zones only', async (t) => {
  t.equal(isValidTimeZone(JHB), true);
  t.equal(isValidTimeZone(LON), true);
  t.equal(isValidTimeZone('UTC'), true);
  t.equal(isValidTimeZone('Mars/Olympus'), false);
  t.equal(isValidTimeZone(''), false);
  t.equal(isValidTimeZone('+02:00'), false);
  t.equal(isValidTimeZone(undefined as unknown as string), false, 'non-strings from untyped config');
});

t.test('zone names are matched case-insensitively and many spellings do not break the formatter cache', async (t) => {
  // 12 letters: bit j of i upper-cases letter j, so every spelling is distinct
  const spellings = Array.from({ length: 700 }, (_, i) =>
    'europe/london'.replace(/[a-z]/g, (c, at: number) => ((i >> (at > 6 ? at - 1 : at)) & 1 ? c.toUpperCase() : c)),
  );
  t.equal(new Set(spellings).size, 700);
  t.ok(spellings.every(isValidTimeZone));
  t.equal(formatInZone(P('2026-07-15T12:00:00Z'), spellings[699] ?? LON), '2026-07-15T13:00:00+01:00');
});

t.test('invalid input is rejected with RangeError', async (t) => {
  const now = Date.now();
  t.throws(() => trialPeriod(now, now, 'Mars/Olympus'), RangeError);
  t.throws(() => monthlyPeriod(now, now, 'Mars/Olympus'), RangeError);
  t.throws(() => trialPeriod(now, now, JHB, 0), RangeError);
  t.throws(() => trialPeriod(now, now, JHB, 1.5), RangeError);
  t.throws(() => trialPeriod(now, Number.NaN, JHB), RangeError);
  t.throws(() => monthlyPeriod(Number.POSITIVE_INFINITY, now, JHB), RangeError);
});

// ---------------------------------------------------------------------------
// Property-based tests
const ZONES = [JHB, LON, NY, LHI] as const;
const MIN_S = Date.UTC(2000, 0, 1) / 1000;
const MAX_S = Date.UTC(2099, 0, 1) / 1000;
const RUNS = 300;

type AnchorInput =
  | { kind: 'instant'; ms: number }
  // a local time in the small hours, where DST transitions happen, to hit gaps and overlaps
  | { kind: 'wall'; y: number; mo: number; d: number; h: number; mi: number; s: number };
type NowInput = { kind: 'instant'; ms: number } | { kind: 'sinceAnchor'; ms: number };

const anchorArb: fc.Arbitrary<AnchorInput> = fc.oneof(
  fc.integer({ min: MIN_S, max: MAX_S }).map((s) => ({ kind: 'instant' as const, ms: s * 1000 })),
  fc.record({
    kind: fc.constant('wall' as const),
    y: fc.integer({ min: 2000, max: 2098 }),
    mo: fc.integer({ min: 0, max: 11 }),
    d: fc.integer({ min: 1, max: 31 }),
    h: fc.integer({ min: 0, max: 3 }),
    mi: fc.integer({ min: 0, max: 59 }),
    s: fc.integer({ min: 0, max: 59 }),
  }),
);
const nowArb: fc.Arbitrary<NowInput> = fc.oneof(
  fc.integer({ min: MIN_S * 1000, max: MAX_S * 1000 }).map((ms) => ({ kind: 'instant' as const, ms })),
  fc.integer({ min: 0, max: 3 * 366 * DAY }).map((ms) => ({ kind: 'sinceAnchor' as const, ms })),
);

function anchorIn(a: AnchorInput, zone: string): number {
  if (a.kind === 'instant') return a.ms;
  const local = Date.UTC(a.y, a.mo, a.d, a.h, a.mi, a.s);
  return local - offsetAt(local, zone); // whatever instant this lands on is a valid anchor
}
const nowFor = (n: NowInput, anchorMs: number): number => (n.kind === 'instant' ? n.ms : anchorMs + n.ms);

function assertContains(p: Period, anchorMs: number, nowMs: number): void {
  if (nowMs >= anchorMs)
    assert.ok(p.startMs <= nowMs && nowMs < p.endMs, `${nowMs} not in ${p.startedAt}..${p.endsAt}`);
  else assert.equal(p.startMs, anchorMs);
}

t.test(
  'property: monthly cycles contain now, are contiguous and start on min(anchorDay, daysInMonth) at the anchor time',
  async (t) => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), anchorArb, nowArb, (zone, anchorInput, nowIn) => {
        const anchor = anchorIn(anchorInput, zone);
        const now = nowFor(nowIn, anchor);
        const a = fields(anchor, zone);
        const anchorTime = Date.UTC(1970, 0, 1, a.h, a.mi, a.s);
        const monthNumber = (ms: number): number => {
          const f = fields(ms, zone);
          return f.y * 12 + f.mo;
        };
        const checkStart = (p: Period): void => {
          assertWellFormed(p);
          const f = fields(p.startMs, zone);
          const expected = Date.UTC(f.y, f.mo, Math.min(a.d, daysInMonth(f.y, f.mo))) + anchorTime;
          assertStartWall(p.startMs, expected, zone, p.startMs === anchor);
        };

        let p = monthlyPeriod(anchor, now, zone);
        assertContains(p, anchor, now);
        assert.deepEqual(monthlyPeriod(anchor, p.endMs - 1, zone), p);
        assert.ok(monthNumber(p.startMs) >= monthNumber(anchor));
        checkStart(p);
        // a year of cycles passes both DST changes
        for (let i = 0; i < 13; i++) {
          const next = monthlyPeriod(anchor, p.endMs, zone);
          assert.equal(next.startMs, p.endMs, 'contiguous');
          assert.notEqual(next.id, p.id);
          assert.equal(monthNumber(next.startMs), monthNumber(p.startMs) + 1, 'one cycle per month');
          checkStart(next);
          p = next;
        }
      }),
      { numRuns: RUNS },
    );
    t.pass(`${RUNS} runs`);
  },
);

t.test(
  'property: trial windows contain now, are contiguous and start `days` local calendar days apart at the anchor time',
  async (t) => {
    const daysArb = fc.oneof(fc.constant(14), fc.constant(7), fc.integer({ min: 1, max: 60 }));
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), anchorArb, nowArb, daysArb, (zone, anchorInput, nowIn, days) => {
        const anchor = anchorIn(anchorInput, zone);
        const now = nowFor(nowIn, anchor);
        const a = fields(anchor, zone);
        const anchorTime = Date.UTC(1970, 0, 1, a.h, a.mi, a.s);
        const anchorDay = localDayNumber(anchor, zone);

        let p = trialPeriod(anchor, now, zone, days);
        assertContains(p, anchor, now);
        assert.deepEqual(trialPeriod(anchor, p.endMs - 1, zone, days), p);
        for (let i = 0; i < 12; i++) {
          assertWellFormed(p);
          const day = localDayNumber(p.startMs, zone);
          assert.equal((day - anchorDay) % days, 0, 'starts on a multiple of `days` after the anchor date');
          assertStartWall(p.startMs, day * DAY + anchorTime, zone, p.startMs === anchor);
          if (zone === JHB) assert.equal(p.endMs - p.startMs, days * DAY, 'no DST: fixed length');
          const next = trialPeriod(anchor, p.endMs, zone, days);
          assert.equal(next.startMs, p.endMs, 'contiguous');
          assert.notEqual(next.id, p.id);
          assert.equal(localDayNumber(next.startMs, zone) - day, days, '`days` calendar days apart');
          p = next;
        }
      }),
      { numRuns: RUNS },
    );
    t.pass(`${RUNS} runs`);
  },
);

t.test('property: formatInZone output parses back to the same second', async (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom(...ZONES, 'Asia/Kolkata', 'UTC'),
      fc.integer({ min: MIN_S * 1000, max: MAX_S * 1000 }),
      (zone, ms) => {
        const s = formatInZone(ms, zone);
        assert.match(s, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
        assert.equal(Date.parse(s), ms - (ms % 1000));
      },
    ),
    { numRuns: RUNS },
  );
  t.pass(`${RUNS} runs`);
});

t.test('property: localTimeToMs inverts formatInZone, picking the earlier instant of an overlap', async (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...ZONES, 'Asia/Kolkata'), fc.integer({ min: MIN_S, max: MAX_S }), (zone, s) => {
      const ms = s * 1000;
      const local = formatInZone(ms, zone).slice(0, 19);
      const back = localTimeToMs(local, zone);
      if (back !== ms) {
        assert.ok(back < ms, 'only an overlap may map back to a different instant, and then the earlier one');
        assert.equal(formatInZone(back, zone).slice(0, 19), local);
      }
    }),
    { numRuns: RUNS },
  );
  t.pass(`${RUNS} runs`);
});
