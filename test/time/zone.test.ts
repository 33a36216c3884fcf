import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import { formatInZone, localToInstant, type Wall, wallAt } from '../../src/time/zone.js';

// What Intl says of an instant, field by field: the reference the remembered offsets must match.
function intlWall(ms: number, zone: string): Wall {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const parts = new Map(f.formatToParts(ms).map(({ type, value }) => [type, Number(value)]));
  const p = (type: Intl.DateTimeFormatPartTypes): number => parts.get(type) ?? Number.NaN;
  return {
    y: p('year'),
    mo: p('month') - 1,
    d: p('day'),
    h: p('hour'),
    mi: p('minute'),
    s: p('second'),
    ms: ((ms % 1000) + 1000) % 1000,
  };
}

// DST both ways, a 30-minute DST (Lord Howe), a 45-minute offset, none, and a zone whose 1890s
// local mean time had seconds in its offset.
const ZONES = [
  'Africa/Johannesburg',
  'Europe/London',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'Europe/Amsterdam',
  'UTC',
];

t.test('a wall time from a remembered hourly offset is the one Intl gives, at and around transitions', async (t) => {
  // The property itself decides, so fast-check sees a failure and shrinks it to the smallest instant.
  const run = fc.check(
    fc.property(
      fc.constantFrom(...ZONES),
      fc.integer({ min: Date.UTC(1880, 0, 1), max: Date.UTC(2060, 0, 1) }),
      (zone, ms) => isDeepStrictEqual(wallAt(ms, zone), intlWall(ms, zone)),
    ),
    { numRuns: 3000 },
  );
  t.notOk(run.failed, run.failed ? (fc.defaultReportMessage(run) ?? 'failed') : '3000 instants agree with Intl');
  // Every minute across the transitions of 2026 in London (29 Mar, 25 Oct) and Lord Howe (5 Apr, 4 Oct).
  for (const [zone, day] of [
    ['Europe/London', Date.UTC(2026, 2, 29)],
    ['Europe/London', Date.UTC(2026, 9, 25)],
    ['Australia/Lord_Howe', Date.UTC(2026, 3, 4, 12)],
    ['Australia/Lord_Howe', Date.UTC(2026, 9, 3, 12)],
  ] as const) {
    let same = 0;
    for (let ms = day - 3 * 3_600_000; ms < day + 6 * 3_600_000; ms += 60_000 + 7)
      if (JSON.stringify(wallAt(ms, zone)) === JSON.stringify(intlWall(ms, zone))) same++;
    t.equal(same, Math.ceil((9 * 3_600_000) / 60_007), `${zone} around ${new Date(day).toISOString()}: every minute`);
  }
  t.match(
    formatInZone(Date.UTC(1890, 5, 1, 12), 'Europe/Amsterdam'),
    /^1890-06-01T12:\d\d:\d\d\+00:\d\d:\d\d$/,
    'LMT seconds kept',
  );
  t.equal(
    localToInstant({ y: 2026, mo: 2, d: 29, h: 1, mi: 30, s: 0, ms: 0 }, 'Europe/London'),
    Date.UTC(2026, 2, 29, 1, 30),
  );
});
