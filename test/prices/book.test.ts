import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { readPriceFile } from '../../src/prices/price-file.js';
import { ROOT } from '../helpers/cli.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { region, priceSet as set } from '../helpers/prices.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

const effectiveDate = async (r: Response) => ((await r.json()) as { effective_date: string }).effective_date;

t.test('the shipped history has 177 valid sets from 2012-01-04 to 2026-09-02, in two files', async (t) => {
  const early = readPriceFile(join(ROOT, 'data/prices/sa-fuel-prices-2012-2022.json'));
  const late = readPriceFile(join(ROOT, 'data/prices/sa-fuel-prices-2023-2026.json'));
  t.equal(early.length, 132);
  t.equal(late.length, 45);
  t.equal(early[0]?.effective_date, '2012-01-04');
  t.equal(early[131]?.effective_date, '2022-12-07');
  t.equal(late[0]?.effective_date, '2023-01-04');
  t.equal(late[44]?.effective_date, '2026-09-02');
  t.equal(late[44]?.coastal.petrol_93, null, 'no coastal 93 published since April 2025');
});

t.test(
  'a fresh store gets the whole shipped history at start, and a restart overwrites no published set',
  async (t) => {
    // Not t.testdir(): tap removes that before the teardown that stops the gateway writing there
    // (a save under way: ENOTEMPTY, and the teardowns after it, the gateway's close, never ran).
    const file = join(tempDir('fpg-book-'), 'store.json');
    const clock = new ManualClock(NOW);
    const first = await startGateway(t, { store: { memory: { file } } }, { clock });
    const sets = await first.app.store.prices.listPriceSets();
    t.equal(sets.length, 177, 'both shipped files, every set');
    t.equal(sets[0]?.effective_date, '2012-01-04');
    const mine = { ...set('2015-03-04', '99.99'), source: 'operator' };
    await first.app.book.publish(mine);
    await first.app.close();
    const second = await startGateway(t, { store: { memory: { file } } }, { clock });
    const again = await second.app.store.prices.listPriceSets();
    t.equal(again.length, 177, 'loading again adds nothing');
    t.equal(
      again.find((s) => s.effective_date === '2015-03-04')?.coastal.petrol_95,
      '99.99',
      'the published set is kept',
    );
  },
);

t.test('a set published for a later date becomes current by itself at 00:01 local on that date', async (t) => {
  const clock = new ManualClock(Date.parse('2026-10-06T12:00:00+02:00'));
  const gw = await startGateway(t, {}, { clock });
  const key = gw.app.demoKeys['business'] as string;
  t.equal(await effectiveDate(await gw.get(`${SIMPLE}?api_key=${key}`)), '2026-09-02');
  await gw.app.store.prices.putPriceSet(set('2026-10-07', '25.55'), false);
  t.equal(gw.app.book.view().scheduled.length, 1, 'scheduled, not yet current');
  clock.advanceTo(Date.parse('2026-10-07T00:00:59+02:00'));
  t.equal(await effectiveDate(await gw.get(`${SIMPLE}?api_key=${key}`)), '2026-09-02', 'still the old set at 00:00:59');
  clock.advanceTo(Date.parse('2026-10-07T00:01:00+02:00'));
  const r = await gw.get(`/fuel-api/api/current.php?api_key=${key}`);
  const body = (await r.json()) as { effective_date: string; data: { coastal: { petrol_95: string } } };
  t.equal(body.effective_date, '2026-10-07');
  t.equal(body.data.coastal.petrol_95, '25.55');
  t.equal(gw.app.book.view().scheduled.length, 0);
});

t.test('the switch timer fires on time without any request', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  await gw.app.store.prices.putPriceSet(set('2026-12-02', '24.00'), false);
  // Other workers (the key expiry check) keep timers of their own on the same clock.
  const at = Date.parse('2026-12-02T00:01:00+02:00');
  t.equal(clock.pendingAt(at), 1, 'one timer armed for the next switch');
  clock.advanceTo(at);
  t.equal(gw.app.book.view().current?.effective_date, '2026-12-02');
  t.equal(clock.pendingAt(at), 0);
});

t.test('a switch far in the future re-arms rather than overflowing the timer', async (t) => {
  const clock = new ManualClock(NOW);
  const gw = await startGateway(t, {}, { clock });
  await gw.app.store.prices.putPriceSet(set('2028-01-05', '30.00'), false);
  clock.advance(2 ** 31 - 1);
  t.equal(gw.app.book.view().current?.effective_date, '2026-09-02');
  t.equal(clock.pendingAt(clock.now() + 2 ** 31 - 1), 1, 're-armed');
  clock.advanceTo(Date.parse('2028-01-05T00:01:00+02:00'));
  t.equal(gw.app.book.view().current?.effective_date, '2028-01-05');
});

t.test('a bad price file refuses to start with the field named', async (t) => {
  const dir = tempDir('fpg-prices-');
  const file = join(dir, 'bad.json');
  writeFileSync(
    file,
    JSON.stringify([{ effective_date: '2026-02-30', coastal: region('21.1'), inland: region('21.10') }]),
  );
  await t.rejects(
    startGateway(t, { prices: { file } }),
    /bad\.json: 0\.effective_date: expected a real calendar date\n.*bad\.json: 0\.coastal\.petrol_95: expected a price/,
  );
  const dup = join(dir, 'dup.json');
  writeFileSync(dup, JSON.stringify([set('2026-01-07', '1.00'), set('2026-01-07', '2.00')]));
  await t.rejects(startGateway(t, { prices: { file: dup } }), /appears twice/);
  const notJson = join(dir, 'x.json');
  writeFileSync(notJson, '{');
  await t.rejects(startGateway(t, { prices: { file: notJson } }), /x\.json: /);
});

t.test('an edited price file is picked up; a broken edit changes nothing', async (t) => {
  const dir = tempDir('fpg-watch-');
  const file = join(dir, 'prices.json');
  writeFileSync(file, JSON.stringify([set('2026-01-07', '21.00')]));
  const gw = await startGateway(t, { prices: { file, watch_file: true } }, { clock: new ManualClock(NOW) });
  const current = () => gw.app.book.view().current?.coastal.petrol_95;
  t.equal(current(), '21.00');
  writeFileSync(file, JSON.stringify([set('2026-01-07', '21.00'), set('2026-02-04', '22.00')]));
  await waitFor('the edit', () => current() === '22.00', 3000);
  writeFileSync(file, '[{"effective_date":"nonsense"}]');
  await waitFor('the broken edit to be read', () => /price file rejected/.test(gw.logs()), 3000);
  t.equal(current(), '22.00', 'the broken edit was refused');
  t.match(gw.logs(), /price file rejected/);
  // Replaced by delete and create (rm + cp, a ConfigMap swap): read once it is back.
  unlinkSync(file);
  // The file is written again only once the watch has found it missing: the path of a replace.
  await waitFor('the watch to find the file gone', () => /cannot watch price file; retrying/.test(gw.logs()), 3000);
  writeFileSync(
    file,
    JSON.stringify([set('2026-01-07', '21.00'), set('2026-02-04', '22.00'), set('2026-03-04', '23.00')]),
  );
  await waitFor('the replaced file', () => current() === '23.00', 3000);
});

t.test('overlapping reloads: a slow earlier reload never overwrites a newer one', async (t) => {
  const { MemoryStore } = await import('../../src/store/memory/memory-store.js');
  const { PriceBook } = await import('../../src/prices/book.js');
  // The real memory store, with the first history read held back until released.
  let release: () => void = () => undefined;
  class SlowFirstRead extends MemoryStore {
    private reads = 0;
    constructor() {
      super();
      const prices = this.prices;
      const list = prices.listPriceSets.bind(prices);
      prices.listPriceSets = async () => {
        const snapshot = await list();
        if (++this.reads === 1) await new Promise<void>((r) => (release = r));
        return snapshot;
      };
    }
  }
  const store = new SlowFirstRead();
  await store.prices.putPriceSet(set('2026-01-07', '21.00'), false);
  const clock = new ManualClock(NOW);
  const book = new PriceBook({
    store,
    options: { zone: 'Africa/Johannesburg', defaultSource: 'DMPR', upstreamOnly: false },
    clock,
    log: (await import('pino')).default({ level: 'silent' }),
  });
  const first = book.load();
  await store.prices.putPriceSet(set('2026-02-04', '22.00'), false);
  await book.load();
  t.equal(book.view().current?.effective_date, '2026-02-04');
  release();
  await first;
  t.equal(book.view().current?.effective_date, '2026-02-04', 'the older read was dropped');
  book.close();
});
