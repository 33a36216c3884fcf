import type { PriceSet } from '../../../src/prices/price-set-schema.js';
import type { ConsumeSpec, StoredAccount } from '../../../src/store/store.js';
import { storedKey } from '../../helpers/accounts.js';
import { waitFor as waitUntil } from '../../helpers/wait.js';

export { hashOf, storedKey } from '../../helpers/accounts.js';

/** What every contract suite closes when a test ends. */
export interface Closable {
  close(): Promise<void>;
}

/** The ledger's day of a test's consumes, when the test is not about days. */
export const DAY = '2026-11-25';

export const waitFor = (cond: () => boolean, ms = 2000) => waitUntil('the store events', cond, ms);

let seq = 0;

/** A fresh account, unique across the processes that share one Redis. */
export const account = (over: Partial<StoredAccount> = {}): StoredAccount => {
  seq++;
  return {
    id: `acct_test${process.pid}_${seq}_${Math.random().toString(36).slice(2, 8)}`,
    status: 'active',
    plan: 'developer',
    limit: null,
    anchor: '2026-11-01T00:00:00+02:00',
    label: 'contract',
    created_at: '2026-11-01T00:00:00.000Z',
    revision: 1,
    keys: [storedKey()],
    ...over,
  };
};

export const spec = (a: StoredAccount, over: Partial<ConsumeSpec> = {}): ConsumeSpec => ({
  accountId: a.id,
  revision: a.revision,
  periodId: '1000',
  limit: 3,
  expireAtMs: Date.now() + 60_000,
  ...over,
});

export const priceSet = (date: string, p95 = '21.00'): PriceSet => ({
  effective_date: date,
  updated_at: `${date} 00:01:00`,
  coastal: {
    zone: null,
    price_basis: 'official_regional_reference',
    petrol_93: null,
    petrol_95: p95,
    diesel_50ppm: '20.00',
    diesel_500ppm: '19.90',
  },
  inland: {
    zone: null,
    price_basis: 'official_regional_reference',
    petrol_93: '21.50',
    petrol_95: '21.60',
    diesel_50ppm: null,
    diesel_500ppm: '20.10',
  },
});
