import type { Account, AccountFilter } from './interface.js';

/**
 * Whether an account passes a listing's filter. Both stores filter with this one function (the
 * Redis store after reading each account), so they agree by construction. The label is compared
 * as plain text: characters such as `.*(` mean themselves.
 */
export function matchesFilter(account: Account, filter: AccountFilter): boolean {
  if (filter.status !== undefined && account.status !== filter.status) return false;
  if (filter.plan !== undefined && account.plan !== filter.plan) return false;
  if (filter.label !== undefined && !account.label.toLowerCase().includes(filter.label.toLowerCase())) return false;
  return true;
}
