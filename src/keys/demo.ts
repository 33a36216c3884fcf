import type { Config } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { createAccount } from './accounts.js';

// Plans without a default limit (enterprise) need one to exist; a demo gets this.
const DEMO_LIMIT = 100_000;

/** What the start did about demo accounts. */
export interface DemoAccounts {
  /** Keys of the demo accounts created at this start, by plan: empty unless the store had no account. */
  keys: Record<string, string>;
  /**
   * When the store already had accounts (a restart on the same state file): the id of the
   * developer demo account from an earlier start, or null when there is none.
   */
  earlierDeveloperId: string | null;
}

/**
 * One demo account per plan, created only in a store that has no account at all: a restart on
 * the same memory-store file must not add four more each time. Their keys are stored hashed, so
 * a restart cannot show them again; it finds the earlier developer demo account instead, whose
 * key the operator can rotate to get a working one.
 */
export async function ensureDemoAccounts(store: Store, plans: Config['plans'], now: number): Promise<DemoAccounts> {
  const keys: Record<string, string> = {};
  if (!(await hasAnyAccount(store))) {
    for (const [plan, p] of Object.entries(plans)) {
      const limit = p.limit === undefined ? DEMO_LIMIT : null;
      keys[plan] = (
        await createAccount(store, plans, { plan, label: demoLabel(plan), status: 'active', limit }, now)
      ).api_key;
    }
    return { keys, earlierDeveloperId: null };
  }
  return { keys, earlierDeveloperId: await findDemo(store, 'developer') };
}

const demoLabel = (plan: string): string => `demo ${plan}`;

async function hasAnyAccount(store: Store): Promise<boolean> {
  // A page may be empty while `next` is not null (the store bounds one call's work): follow it.
  let after: string | null = null;
  do {
    const page = await store.listAccounts({}, after, 1);
    if (page.accounts.length > 0) return true;
    after = page.next;
  } while (after !== null);
  return false;
}

/** The active demo account of `plan` from an earlier start (label match is by substring, so exact here). */
async function findDemo(store: Store, plan: string): Promise<string | null> {
  let after: string | null = null;
  do {
    const page = await store.listAccounts({ plan, status: 'active', label: demoLabel(plan) }, after, 100);
    const found = page.accounts.find((a) => a.label === demoLabel(plan));
    if (found) return found.id;
    after = page.next;
  } while (after !== null);
  return null;
}
