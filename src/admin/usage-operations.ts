import type { Config } from '../config/config-schema.js';
import { GatewayError } from '../failures.js';
import type { AccountStore, CountingStore } from '../store/store.js';
import type { ExportedAccount } from './export-accounts.js';
import { type UsageExport, usageExport } from './usage-export.js';
import type { ExportQuery } from './usage-query.js';

export interface UsageOperationsDeps {
  /**
   * Accounts (AccountStore: the one asked for, or every page) and their period records
   * (CountingStore).
   */
  accounts: AccountStore;
  counting: CountingStore;
  config: Config;
  now: () => number;
}

/** Usage exports, for `GET /admin/usage[/periods]` and `usage export|periods` alike. */
export class UsageOperations {
  private readonly accounts: AccountStore;
  private readonly counting: CountingStore;
  private readonly config: Config;
  private readonly now: () => number;

  constructor(deps: UsageOperationsDeps) {
    this.accounts = deps.accounts;
    this.counting = deps.counting;
    this.config = deps.config;
    this.now = deps.now;
  }

  /**
   * Daily rows (`days`) or period rows, for a query the entry's schema (`exportInput`) has
   * checked: the account is looked up here, so an unknown one is a 404 before anything is
   * written; the rows are written by the caller.
   */
  async usageExport(kind: 'days' | 'periods', q: ExportQuery): Promise<UsageExport> {
    let only: ExportedAccount | null = null;
    if (q.account !== null) {
      const live = await this.accounts.getAccount(q.account);
      const gone = live === null ? await this.accounts.getDeletedAccount(q.account) : null;
      if (live !== null) only = { account: live, deleted: false };
      else if (gone !== null) only = { account: gone, deleted: true };
      else throw new GatewayError('NOT_FOUND', `no account with id ${q.account}`);
    }
    return usageExport(kind, q, only, { accounts: this.accounts, counting: this.counting }, this.config, this.now);
  }
}
