/**
 * FuelSA's answer, `{"petrol":[…],"diesel":[…]}`, as its clients (naileddigital/fuelsa-*) parse
 * it: the .NET client reads `value` into an int and `date` into a DateTime, every other field
 * into a string. Built once per snapshot, every year at once: a request picks its bytes and
 * nothing is serialised per request. No `usage` is spliced in: the shape is the clients'
 * contract, and the allowance travels in the rate headers as on every metered answer.
 */

import type { MeteredBody } from '../../http/core-types.js';
import { compressible } from '../../http/encoding.js';
import type { ErrorKind } from '../../http/error-kinds.js';
import { type PriceSet, REGIONS } from '../../prices/price-set-schema.js';
import type { Snapshot } from '../../prices/snapshot.js';

export const BYYEAR_PREFIX = '/exapi/fuel/byyear/';

const LOCATION = { coastal: 'Coast', inland: 'Reef' } as const;
const OCTANES = ['93', '95'] as const;
// percentage: sulphur by mass, a number as text; the WordPress plugin appends "%" (0.05% for
// 500 ppm, and "50 PPM (0.005%)" on its price table). sulfates: the same with its unit, as
// that table prints it. No client reads sulfates; the .NET model wants a string.
const DIESELS = [
  { ppm: '50', percentage: '0.005', sulfates: '0.005%' },
  { ppm: '500', percentage: '0.05', sulfates: '0.05%' },
] as const;

/**
 * Integer cents of a served rand string ("21.23" → 2123). The official diesel prices carry
 * fractions of a cent; the price data holds them rounded half-up to whole cents already
 * (data/prices/SOURCES.md), so this is exactly what current.php serves, without a float.
 */
const cents = (rand: string): number => Number(rand.replace('.', ''));

/** Items of one set, coastal then inland; a null price has no item. */
function items(set: PriceSet, petrol: string[], diesel: string[]): void {
  const day = set.effective_date;
  // Midnight UTC: the effective date read back in UTC and in South Africa alike.
  const date = `"date":"${day}T00:00:00.000Z"`;
  for (const region of REGIONS) {
    const r = set[region];
    const location = LOCATION[region];
    const id = `${day}-${location.toLowerCase()}`;
    for (const octane of OCTANES) {
      const rand = r[`petrol_${octane}`];
      if (rand === null) continue;
      petrol.push(
        `{"_id":"${id}-petrol-${octane}",${date},"location":"${location}","octane":"${octane}","type":"Unleaded","value":${cents(rand)}}`,
      );
    }
    for (const d of DIESELS) {
      const rand = r[`diesel_${d.ppm}ppm`];
      if (rand === null) continue;
      diesel.push(
        `{"_id":"${id}-diesel-${d.ppm}",${date},"location":"${location}","ppm":"${d.ppm}",` +
          `"percentage":"${d.percentage}","sulfates":"${d.sulfates}","value":${cents(rand)}}`,
      );
    }
  }
}

function bodyOf(sets: readonly PriceSet[]): MeteredBody {
  const petrol: string[] = [];
  const diesel: string[] = [];
  for (const set of sets) items(set, petrol, diesel);
  const body = `{"petrol":[${petrol.join(',')}],"diesel":[${diesel.join(',')}]}`;
  return {
    contentType: 'application/json',
    head: body,
    tail: '',
    withUsage: false,
    bytes: Buffer.byteLength(body),
    compressed: compressible(body, false),
  };
}

const EMPTY = bodyOf([]);

interface Bodies {
  current: MeteredBody | null;
  years: ReadonlyMap<string, MeteredBody>;
}

const built = new WeakMap<Snapshot, Bodies>();

function bodiesOf(snap: Snapshot): Bodies {
  let a = built.get(snap);
  if (a === undefined) {
    const byYear = new Map<string, PriceSet[]>();
    for (const { set } of snap.history) {
      const year = set.effective_date.slice(0, 4);
      byYear.set(year, [...(byYear.get(year) ?? []), set]);
    }
    a = {
      current: snap.current && bodyOf([snap.current.set]),
      years: new Map([...byYear].map(([year, sets]) => [year, bodyOf(sets)])),
    };
    built.set(snap, a);
  }
  return a;
}

/** The set in effect now. */
export const current = (_search: string, snap: Snapshot): MeteredBody | ErrorKind =>
  bodiesOf(snap).current ?? 'unavailable';

const YEAR = /^\d{4}$/;

/** Every set already in effect in the path's year, oldest first; a year without sets: empty lists. */
export function byYear(_search: string, snap: Snapshot, path: string): MeteredBody | ErrorKind {
  const year = path.slice(BYYEAR_PREFIX.length);
  if (year.includes('/')) return 'not_found';
  if (!YEAR.test(year)) return 'invalid_year';
  return bodiesOf(snap).years.get(year) ?? EMPTY;
}
