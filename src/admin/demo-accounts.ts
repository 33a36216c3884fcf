import type { Config } from '../config/config-schema.js';
import { liveKeys } from '../keys/accounts.js';
import type { AccountStore, StoredAccount } from '../store/store.js';
import type { Operations } from './operations.js';

// Plans without a default limit (enterprise) need one to exist; a demo gets this.
const DEMO_LIMIT = 100_000;

/** `from` in the audit lines of what a start does to its demo accounts. */
export const DEMO_FROM = 'demo';

/**
 * The name of the key the gateway makes for a demo account: the one key a later start replaces.
 * It says so to whoever lists the account's keys; keys the user adds have other names.
 */
export const DEMO_KEY_NAME = 'demo (replaced at every start)';

/** What the start did about demo accounts. */
export interface DemoAccounts {
  /**
   * Working keys of demo accounts, by plan: every plan's at the first start (a store with no
   * account); on a later start the developer demo account's, made at this start.
   */
  keys: Record<string, string>;
  /** A later start: whether the key it replaced stopped working (else it added one, touching none). */
  replaced: boolean;
  /** Requests granted at this start because the demo account's allowance was used up (0: none). */
  granted: number;
}

/**
 * One demo account per plan, created only in a store that has no account at all: a restart on
 * the same memory-store file must not add four more each time. Their keys are stored hashed, so
 * a restart cannot show them again: it replaces the developer demo account's own key (the one
 * named DEMO_KEY_NAME; the user's keys are left alone), or adds one when the user has revoked or
 * renamed it, and tops up the account's allowance when it is used up, so that every start prints
 * a line that works. Each change goes through the admin operations, so each is audited.
 */
export async function ensureDemoAccounts(
  ops: Operations,
  accounts: AccountStore,
  plans: Config['plans'],
  now: number,
): Promise<DemoAccounts> {
  const keys: Record<string, string> = {};
  if (!(await hasAnyAccount(accounts))) {
    for (const plan of Object.keys(plans)) keys[plan] = await createDemo(ops, plans, plan);
    return { keys, replaced: false, granted: 0 };
  }
  const earlier = await findDemo(accounts, 'developer');
  if (earlier === null) {
    if (plans['developer'] !== undefined) keys['developer'] = await createDemo(ops, plans, 'developer');
    return { keys, replaced: false, granted: 0 };
  }
  const own = liveKeys(earlier, now)
    .filter((k) => k.name === DEMO_KEY_NAME)
    .at(-1);
  keys['developer'] =
    own === undefined
      ? (await ops.keys.create(earlier.id, { name: DEMO_KEY_NAME }, DEMO_FROM)).api_key
      : (await ops.keys.rotateWith(earlier.id, own.id, 0, DEMO_FROM)).api_key;
  return { keys, replaced: own !== undefined, granted: await topUp(ops, plans, earlier) };
}

async function createDemo(ops: Operations, plans: Config['plans'], plan: string): Promise<string> {
  const limit = plans[plan]?.limit === undefined ? DEMO_LIMIT : null;
  const input = { plan, label: demoLabel(plan), status: 'active' as const, limit };
  return (await ops.accounts.createAccount(input, DEMO_FROM, DEMO_KEY_NAME)).api_key;
}

/** A used-up demo account gets its allowance again for the current period, as a grant. */
async function topUp(ops: Operations, plans: Config['plans'], account: StoredAccount): Promise<number> {
  const { usage } = await ops.accounts.showAccount(account.id);
  if (usage.requests_remaining > 0) return 0;
  const requests = account.limit ?? plans[usage.plan_type]?.limit ?? DEMO_LIMIT;
  await ops.accounts.grant(account.id, { requests, note: 'demo: used up, topped up at start' }, DEMO_FROM);
  return requests;
}

const demoLabel = (plan: string): string => `demo ${plan}`;

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
