import type { Test } from 'tap';
import type { Store } from '../../../src/store/store.js';
import { accountsContract } from './accounts.js';
import { billingContract } from './billing.js';
import { coordinationContract } from './coordination.js';
import { countingContract } from './counting.js';
import { deletedContract } from './deleted.js';
import { deliveriesContract } from './deliveries.js';
import { eventsContract } from './events.js';
import { grantsContract } from './grants.js';
import { keysContract } from './keys.js';
import { ledgerContract } from './ledger.js';
import { limitsContract } from './limits.js';
import { portalContract } from './portal.js';
import { pricesContract } from './prices.js';
import { stripeContract } from './stripe.js';

/**
 * The store contract: one suite per concern, each run unchanged against every Store
 * implementation (memory, standalone Redis, Cluster). `make` returns a fresh, empty store.
 */
export function storeContract(t: Test, make: () => Promise<Store>): void {
  accountsContract(t, make);
  keysContract(t, make);
  countingContract(t, make);
  ledgerContract(t, make);
  limitsContract(t, make);
  grantsContract(t, make);
  deletedContract(t, make);
  pricesContract(t, make);
  coordinationContract(t, make);
  eventsContract(t, make);
  deliveriesContract(t, make);
  billingContract(t, make);
  portalContract(t, make);
  stripeContract(t, make);
}
