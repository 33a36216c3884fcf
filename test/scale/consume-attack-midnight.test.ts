/**
 * Two gateways whose clocks are 2 s apart, under load across midnight of the configured zone, the
 * script cache flushed and the consume connections killed as it passes: every 200 is counted on
 * its gateway's day (the export per day is within the requests whose day was ambiguous: sent
 * before midnight, answered after), the days sum to the 200s, and the limited account stops at its
 * limit.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { addDays, dayOf, dayStart } from '../../src/time/days.js';
import { type GatewayProcess, gatewayProcess, storeTimeouts } from '../helpers/cli.js';
import { getter } from '../helpers/get.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { scaled, sleep } from '../helpers/wait.js';

const ZONE = 'Africa/Johannesburg';
const PRELOAD = fileURLToPath(new URL('../helpers/shifted-clock.mjs', import.meta.url));
const SKEW_MS = 2000;
// Between one worker's requests: eight workers send a few hundred a second, hundreds each side of
// each midnight and the small account past its limit within a few seconds, where unpaced they
// sent as many as the CPU allowed for the whole lead as well: four fifths of this file's CPU.
const PACE_MS = 25;

t.test('two gateways 2 s apart across midnight under load and faults: each day exact', async (t) => {
  const redis = await startRedis(t);
  const realStart = Date.now();
  const midnight = dayStart(addDays(dayOf(realStart, ZONE), 1), ZONE) as number;
  // Gateway A reaches midnight this long after the start, B SKEW_MS later.
  const shiftA = midnight - realStart - scaled(8000);
  const shifts = [shiftA, shiftA - SKEW_MS];
  const file = join(tempDir('fpg-midnight-'), 'gateway.yaml');
  writeFileSync(
    file,
    JSON.stringify({
      store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } },
      log: { access: false },
      limits: { invalid_key_throttle: { max_attempts: 1_000_000 } },
    }),
  );
  const gateways = (await Promise.all(
    shifts.map((shift) =>
      gatewayProcess(t, file, { NODE_OPTIONS: `--import=${PRELOAD}`, FPG_TEST_CLOCK_SHIFT_MS: String(shift) }),
    ),
  )) as GatewayProcess[];
  const create = async (body: object): Promise<string> => {
    const r = await fetch(`${(gateways[0] as GatewayProcess).admin}/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return ((await r.json()) as { api_key: string }).api_key;
  };
  const keys = [
    await create({ plan: 'business', limit: 1_000_000, label: 'big' }),
    await create({ plan: 'starter', limit: 400, label: 'small' }),
  ];
  const certain = new Map<string, number>();
  let ambiguous = 0;
  let total = 0;
  const statuses: Record<number, number> = {};
  const dayAt = (g: number): string => dayOf(Date.now() + (shifts[g] as number), ZONE);
  const endAt = midnight - shiftA + SKEW_MS + scaled(1500);
  let n = 0;
  const http = getter();
  t.teardown(http.close);
  const send = async (g: number, key: string): Promise<number> => {
    const sentDay = dayAt(g);
    const r = await http.get(`${(gateways[g] as GatewayProcess).base}/fuel-api/api/simple-current.php`, {
      'X-API-Key': key,
    });
    const answeredDay = dayAt(g);
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status === 200) {
      total++;
      if (sentDay === answeredDay) certain.set(sentDay, (certain.get(sentDay) ?? 0) + 1);
      else ambiguous++;
    }
    return r.status;
  };
  const worker = async (): Promise<void> => {
    while (Date.now() < endAt) {
      const i = n++;
      await send(i % 2, keys[Math.floor(i / 2) % 2] as string);
      await sleep(PACE_MS);
    }
  };
  // The load from shortly before A's midnight (the lead before it covers the gateways' start):
  // earlier, every request would be of the one day.
  await sleep(Math.max(0, midnight - shiftA - scaled(1500) - Date.now()));
  const load = Promise.all(Array.from({ length: 8 }, worker));
  // As A passes midnight, then as B does: the script cache flushed and the consume connections killed.
  for (const at of [midnight - shiftA, midnight - shiftA + SKEW_MS]) {
    await sleep(Math.max(0, at - Date.now() - 50));
    await redis.cli('SCRIPT', 'FLUSH');
    await redis.cli('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => '');
  }
  await load;
  // A busy machine may not have brought the small account to its limit in the window (352 of 400
  // beside the bench): it is then brought there on both gateways, after both midnights, so that
  // the limit is proved to hold over what the faults left behind.
  for (let i = 0; (statuses[429] ?? 0) === 0 && i < 1000; i++) await send(i % 2, keys[1] as string);
  t.comment(
    `statuses ${JSON.stringify(statuses)}; per day ${JSON.stringify(Object.fromEntries(certain))}; ambiguous ${ambiguous}`,
  );
  const before = dayOf(midnight - 1, ZONE);
  const after = dayOf(midnight, ZONE);
  const r = await fetch(`${(gateways[1] as GatewayProcess).admin}/admin/usage?from=${before}&to=${after}&format=json`);
  const rows = ((await r.json()) as { rows: Array<{ date: string; requests: number; label: string }> }).rows;
  const perDay = new Map<string, number>();
  for (const row of rows) perDay.set(row.date, (perDay.get(row.date) ?? 0) + row.requests);
  t.equal(
    [...perDay.values()].reduce((s, v) => s + v, 0),
    total,
    'the days sum to the 200s',
  );
  for (const day of [before, after]) {
    const got = perDay.get(day) ?? 0;
    const sure = certain.get(day) ?? 0;
    t.ok(got >= sure && got <= sure + ambiguous, `${day}: ${got} within ${sure}..${sure + ambiguous}`);
  }
  const small = rows.filter((row) => row.label === 'small').reduce((s, row) => s + row.requests, 0);
  t.ok(small <= 400, `the small account is within its limit (${small})`);
  t.ok((statuses[429] ?? 0) > 0, 'the small account was refused past its limit');
});
