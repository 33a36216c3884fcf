/**
 * Whether a FuelSA answer says what our own answers say: every price of the sets current.php or
 * historical.php serves, to the cent, nulls left out, oldest set first; read by the checks of
 * fuelsa-clients.ts (the .NET schema) and decoded by PHP as FuelSA's PHP client does.
 */
import type { Test } from 'tap';
import type { TestGateway } from '../helpers/gateway.js';
import { clientProblems, type FuelsaResult, hasPhp, phpDecode } from './fuelsa-clients.js';

const OURS = '/fuel-api/api/current.php';
// Checked once: every answer is decoded by PHP when it is here.
const PHP = hasPhp();

type Region = Record<'petrol_93' | 'petrol_95' | 'diesel_50ppm' | 'diesel_500ppm', string | null>;
interface OurSet {
  effective_date: string;
  coastal: Region;
  inland: Region;
}

const LOCATION = { coastal: 'Coast', inland: 'Reef' } as const;
const PERCENTAGE: Record<string, string> = { '50': '0.005', '500': '0.05' };
const cents = (rand: string): number => Number(rand.replace('.', ''));

/**
 * The lines fuelsa-decode.php should print for our sets, worked out from our own answers: every
 * price that is not null, in rand as the plugin shows it, on the effective date in either zone.
 */
function expectedLines(sets: OurSet[]): { petrol: string[]; diesel: string[] } {
  const petrol: string[] = [];
  const diesel: string[] = [];
  for (const s of sets) {
    for (const region of ['coastal', 'inland'] as const) {
      const r = s[region];
      const at = `${s.effective_date}|${s.effective_date}`;
      for (const octane of ['93', '95'] as const) {
        const rand = r[`petrol_${octane}`];
        if (rand !== null)
          petrol.push(
            `${s.effective_date}|petrol|${LOCATION[region]}|${octane}|Unleaded|${cents(rand)}|R${rand}|${at}`,
          );
      }
      for (const ppm of ['50', '500'] as const) {
        const rand = r[`diesel_${ppm}ppm`];
        if (rand !== null)
          diesel.push(
            `${s.effective_date}|diesel|${LOCATION[region]}|${ppm}|${PERCENTAGE[ppm]}|${cents(rand)}|R${rand}|${at}`,
          );
      }
    }
  }
  return { petrol, diesel };
}

/** The same lines read from a FuelSA answer in JavaScript, in its order (effective date first, for sorting by set). */
function answerLines(a: FuelsaResult): { petrol: string[]; diesel: string[] } {
  const day = (d: string): string => d.slice(0, 10);
  return {
    petrol: a.petrol.map(
      (i) =>
        `${day(i.date)}|petrol|${i.location}|${i.octane}|${i.type}|${i.value}|R${(i.value / 100).toFixed(2)}|${day(i.date)}|${day(i.date)}`,
    ),
    diesel: a.diesel.map(
      (i) =>
        `${day(i.date)}|diesel|${i.location}|${i.ppm}|${i.percentage}|${i.value}|R${(i.value / 100).toFixed(2)}|${day(i.date)}|${day(i.date)}`,
    ),
  };
}

/** Checks one FuelSA answer against the clients and against our own sets; returns it parsed. */
export async function checkAgainst(t: Test, body: string, sets: OurSet[], label: string): Promise<FuelsaResult> {
  t.same(clientProblems(body), [], `${label}: what the .NET client deserializes`);
  const a = JSON.parse(body) as FuelsaResult;
  t.same(Object.keys(a), ['petrol', 'diesel'], `${label}: FuelSA's shape`);
  for (const i of a.petrol) t.same(Object.keys(i).sort(), ['_id', 'date', 'location', 'octane', 'type', 'value']);
  for (const i of a.diesel)
    t.same(Object.keys(i).sort(), ['_id', 'date', 'location', 'percentage', 'ppm', 'sulfates', 'value']);
  for (const i of [...a.petrol, ...a.diesel])
    t.match(i.date, /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/, 'midnight UTC on the effective date');
  const want = expectedLines(sets);
  const got = answerLines(a);
  t.same(got.petrol, want.petrol, `${label}: petrol to the cent, nulls left out, oldest first`);
  t.same(got.diesel, want.diesel, `${label}: diesel to the cent, nulls left out, oldest first`);
  if (await PHP) {
    const lines = await phpDecode(body);
    const strip = (l: string[]) => l.map((x) => x.slice(11));
    t.same(lines, [...strip(want.petrol), ...strip(want.diesel)], `${label}: decoded by PHP as the PHP client does`);
  } else t.comment('php-cli is not installed: the PHP decoding is not checked');
  return a;
}

export async function ourCurrent(gw: TestGateway, key: string): Promise<OurSet> {
  const r = await gw.get(OURS, { headers: { 'X-API-Key': key } });
  const b = (await r.json()) as { effective_date: string; data: Omit<OurSet, 'effective_date'> };
  return { effective_date: b.effective_date, ...b.data };
}

export async function ourYear(gw: TestGateway, key: string, year: number): Promise<OurSet[]> {
  const r = await gw.get(`/fuel-api/api/historical.php?from=${year}-01&to=${year}-12`, {
    headers: { 'X-API-Key': key },
  });
  return ((await r.json()) as { results: OurSet[] }).results;
}
