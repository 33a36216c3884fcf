/**
 * The accounts a usage export covers, a page at a time in id order: the accounts there are and
 * the deleted ones whose period records are still kept (their usage history outlives them until
 * retention), merged.
 */
import { patiently } from '../store/patiently.js';
import type { AccountPage, AccountStore, StoredAccount } from '../store/store.js';

/** An account to export; a deleted one has records but no period in progress. */
export interface ExportedAccount {
  account: StoredAccount;
  deleted: boolean;
}

/** Every account of a listing, one by one, reading `size` at a time. */
async function* each(
  list: (after: string | null, size: number) => Promise<AccountPage>,
  deleted: boolean,
  size: number,
): AsyncGenerator<ExportedAccount> {
  let after: string | null = null;
  do {
    const from: string | null = after;
    const page: AccountPage = await patiently(() => list(from, size));
    for (const account of page.accounts) yield { account, deleted };
    after = page.next;
  } while (after !== null);
}

/** One account (already looked up), or every account and every deleted one kept, in id order, `size` a page. */
export async function* accountPages(
  accounts: AccountStore,
  only: ExportedAccount | null,
  size: number,
): AsyncGenerator<ExportedAccount[]> {
  if (only !== null) {
    yield [only];
    return;
  }
  const live = each((after, n) => accounts.listAccounts({}, after, n), false, size);
  const gone = each((after, n) => accounts.listDeletedAccounts(after, n), true, size);
  let a = await live.next();
  let d = await gone.next();
  let page: ExportedAccount[] = [];
  while (!a.done || !d.done) {
    if (d.done || (!a.done && a.value.account.id <= d.value.account.id)) {
      page.push(a.value as ExportedAccount);
      a = await live.next();
    } else {
      page.push(d.value);
      d = await gone.next();
    }
    if (page.length === size) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}
