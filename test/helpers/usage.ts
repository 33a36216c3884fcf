import { allowanceFor } from '../../src/quota/allowance.js';
import type { TestGateway } from './gateway.js';

/** Requests the account has counted in its current period, as the store holds it. */
export async function counted(gw: TestGateway, accountId: string): Promise<number> {
  const account = await gw.app.store.accounts.getAccount(accountId);
  if (!account) throw new Error('no account');
  const { period } = allowanceFor(account, gw.config.plans, gw.config.time_zone, Date.now());
  return gw.app.store.counting.usage(accountId, period.id);
}

/** Requests used in the period as usage.php tells the key's holder (asking is not counted). */
export async function used(gw: TestGateway, key: string): Promise<number> {
  const r = await gw.get('/fuel-api/api/usage.php', { headers: { 'X-API-Key': key } });
  return ((await r.json()) as { usage: { requests_used: number } }).usage.requests_used;
}

/**
 * The successes of requests sent one at a time until one is refused 429: what the failures
 * before gave back. Which of 300 requests at once get through depends on how soon the refunds of
 * the failures land, which a busy machine changes; the total cannot.
 */
export async function successesUntilRefused(get: (key: string) => Promise<Response>, key: string): Promise<number> {
  let successes = 0;
  for (let sent = 0; sent < 1000; sent++) {
    const r = await get(key);
    await r.arrayBuffer();
    if (r.status === 429) return successes;
    if (r.status === 200) successes++;
  }
  throw new Error('never refused: the limit does not hold');
}

/**
 * What 300 requests at once through a flaky origin may be answered: a success, the origin's 503,
 * a 504 when a request waited past the timeout for one of the gateway's `upstream.max_sockets`
 * origin connections (a busy machine), or the limit. None but the success is counted.
 */
export const ORIGIN_FAILED_OR_LIMIT = [200, 503, 504, 429];
