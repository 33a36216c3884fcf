import type { Config } from '../config/config-schema.js';
import type { AccountStore, KeyStore, StoredAccount, StoredKey } from '../store/store.js';
import { createAccount, rotateKey } from './accounts.js';

// Plans without a default limit (enterprise) need one to exist; a demo gets this.
const DEMO_LIMIT = 100_000;

/** What the start did about demo accounts. */
export interface DemoAccounts {
  /**
   * Working keys of demo accounts, by plan: every plan's at the first start (a store with no
   * account); on a later start the developer demo account's, rotated at this start.
   */
  keys: Record<string, string>;
}

/**
 * One demo account per plan, created only in a store that has no account at all: a restart on
 * the same memory-store file must not add four more each time. Their keys are stored hashed, so
 * a restart cannot show them again: it rotates the developer demo account's key instead (it is a
 * demo; its old key stops working), creating that one account if the store has none, so that
 * every start prints a key that works.
 */
export async function ensureDemoAccounts(
  accounts: AccountStore,
  keyStore: KeyStore,
  plans: Config['plans'],
  now: number,
): Promise<DemoAccounts> {
  const keys: Record<string, string> = {};
  if (!(await hasAnyAccount(accounts))) {
    for (const plan of Object.keys(plans)) keys[plan] = await createDemo(accounts, plans, plan, now);
    return { keys };
  }
  const earlier = await findDemo(accounts, 'developer');
  if (earlier !== null) keys['developer'] = await rotateDemo(keyStore, earlier, now);
  else if (plans['developer'] !== undefined) keys['developer'] = await createDemo(accounts, plans, 'developer', now);
  return { keys };
}

async function createDemo(accounts: AccountStore, plans: Config['plans'], plan: string, now: number): Promise<string> {
  const limit = plans[plan]?.limit === undefined ? DEMO_LIMIT : null;
  return (await createAccount(accounts, plans, { plan, label: demoLabel(plan), status: 'active', limit }, now)).api_key;
}

const demoLabel = (plan: string): string => `demo ${plan}`;

/** The demo account's newest key, rotated with no grace (it is a demo: the old key stops). */
async function rotateDemo(keys: KeyStore, account: StoredAccount, now: number): Promise<string> {
  const key = account.keys.at(-1) as StoredKey;
  return (await rotateKey(keys, account.id, key.id, 0, now)).api_key;
}

async function hasAnyAccount(accounts: AccountStore): Promise<boolean> {
  // A page may be empty while `next` is not null (the store bounds one call's work): follow it.
  let after: string | null = null;
  do {
    const page = await accounts.listAccounts({}, after, 1);
    if (page.accounts.length > 0) return true;
    after = page.next;
  } while (after !== null);
  return false;
}

/** The active demo account of `plan` from an earlier start (label match is by substring, so exact here). */
async function findDemo(accounts: AccountStore, plan: string): Promise<StoredAccount | null> {
  let after: string | null = null;
  do {
    const page = await accounts.listAccounts({ plan, status: 'active', label: demoLabel(plan) }, after, 100);
    const found = page.accounts.find((a) => a.label === demoLabel(plan));
    if (found) return found;
    after = page.next;
  } while (after !== null);
  return null;
}
