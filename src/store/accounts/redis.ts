import type { Result } from 'ioredis';
import { GatewayError } from '../../failures.js';
import { recordMeta } from '../counting/lua.js';
import type { RedisBackend } from '../redis/backend.js';
import { decodeAccount, encodeAccount, encodePatch, pairsToRecord } from '../redis/codec.js';
import { matchesFilter } from './filter.js';
import type {
  AccountFilter,
  AccountPage,
  AccountPatch,
  AccountStore,
  Grant,
  GrantLedger,
  StoredAccount,
} from './interface.js';
import { CREATE_ACCOUNT, DELETE_ACCOUNT, GRANT, SEED_ACCOUNTS, UPDATE_ACCOUNT } from './lua.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgCreateAccount(account: string, channel: string, message: string, ...fields: string[]): Result<number, Context>;
    fpgUpdateAccount(account: string, channel: string, id: string, patch: string): Result<string[] | null, Context>;
    fpgDeleteAccount(
      account: string,
      periods: string,
      deleted: string,
      channel: string,
      id: string,
    ): Result<[number, string[]] | null, Context>;
    fpgGrant(account: string, days: string, ...args: string[]): Result<string[] | null, Context>;
    fpgSeedAccounts(numberOfKeys: number, ...keysAndArgs: string[]): Result<number, Context>;
  }
}

const SCRIPTS = {
  fpgCreateAccount: { lua: CREATE_ACCOUNT, numberOfKeys: 1 },
  fpgUpdateAccount: { lua: UPDATE_ACCOUNT, numberOfKeys: 1 },
  fpgDeleteAccount: { lua: DELETE_ACCOUNT, numberOfKeys: 3 },
  fpgGrant: { lua: GRANT, numberOfKeys: 2 },
  // Its key count comes first: one call carries many accounts.
  fpgSeedAccounts: { lua: SEED_ACCOUNTS },
};

// A listing reads the index in chunks and each account of a chunk; it stops after this many
// index entries even when the page is not full, so a filter that matches little stays cheap.
const LIST_CHUNK = 200;
const LIST_MAX_EXAMINED = 5000;
// Accounts per call of seedAccounts' script.
const SEED_BATCH = 500;

/** The accounts on Redis: a hash per account, an index from key hash to id, and the listing's index. */
export class RedisAccounts implements AccountStore {
  constructor(private readonly b: RedisBackend) {
    b.define(SCRIPTS);
  }

  findByKeyHash(keyHash: string): Promise<StoredAccount | null> {
    const { b } = this;
    return b.run(async () => {
      const id = await b.redis.get(b.indexKey(keyHash));
      if (id === null) return null;
      const account = decodeAccount(await b.redis.hgetall(b.accountKey(id)));
      // A removed key's index entry outlives the change by one command: the account itself
      // says which keys it has.
      return account?.keys.some((k) => k.key_hash === keyHash) ? account : null;
    });
  }

  getAccount(id: string): Promise<StoredAccount | null> {
    const { b } = this;
    return b.run(async () => decodeAccount(await b.redis.hgetall(b.accountKey(id))));
  }

  createAccount(account: StoredAccount): Promise<void> {
    const { b } = this;
    const hashes = account.keys.map((k) => k.key_hash);
    const message = JSON.stringify({ type: 'account', id: account.id, keyHashes: hashes });
    return b.run(async () => {
      const claimed: string[] = [];
      for (const h of hashes) {
        if ((await b.redis.set(b.indexKey(h), account.id, 'NX')) === null) {
          if (claimed.length > 0) await b.redis.del(...claimed);
          throw new GatewayError('CONFLICT', `an account with key hash ${h} already exists`);
        }
        claimed.push(b.indexKey(h));
      }
      // Listed before it exists, so no account is ever missing from the listing; an entry whose
      // account was never written is skipped there. Kept on refusal: the id's account exists.
      await b.redis.zadd(b.accountIndex, 0, account.id);
      // Only a definite refusal removes the key-hash entry: after a timeout the account may exist,
      // and an entry naming an account with another key hash finds nothing anyway.
      if (
        (await b.redis.fpgCreateAccount(b.accountKey(account.id), b.channel, message, ...encodeAccount(account))) === 0
      ) {
        for (const index of claimed) await b.redis.del(index);
        throw new GatewayError('CONFLICT', `account ${account.id} already exists`);
      }
    });
  }

  /**
   * Writes new accounts in bulk as `createAccount` writes each (key-hash index, listing index,
   * account hash), SEED_BATCH accounts per script call: 200,000 in seconds, where a call each
   * took minutes and an ioredis pipeline spent most of its time on per-command work. For the
   * bench's `--accounts`, before gateways serve them: nothing is announced, since no gateway can
   * hold an account that did not exist. Standalone Redis only (a script stays within one slot).
   */
  seedAccounts(accounts: readonly StoredAccount[]): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      // Every call is sent before the first reply is read: Redis runs one while the next is encoded.
      const calls: Promise<void>[] = [];
      for (let at = 0; at < accounts.length; at += SEED_BATCH) {
        const batch = accounts.slice(at, at + SEED_BATCH);
        const keys = [b.accountIndex];
        const args: string[] = [];
        for (const account of batch) {
          const fields = encodeAccount(account);
          keys.push(b.accountKey(account.id), ...account.keys.map((k) => b.indexKey(k.key_hash)));
          args.push(String(account.keys.length), String(fields.length), account.id, ...fields);
        }
        calls.push(
          b.redis.fpgSeedAccounts(keys.length, ...keys, ...args).then((written) => {
            if (written !== batch.length)
              throw new GatewayError(
                'CONFLICT',
                `account ${batch[written]?.id} or one of its key hashes already exists`,
              );
          }),
        );
      }
      await Promise.all(calls);
    });
  }

  updateAccount(id: string, patch: AccountPatch): Promise<StoredAccount | null> {
    const { b } = this;
    return b.run(async () => {
      const fields = await b.redis.fpgUpdateAccount(
        b.accountKey(id),
        b.channel,
        id,
        JSON.stringify(encodePatch(patch)),
      );
      if (fields === null) return null;
      const updated = decodeAccount(pairsToRecord(fields));
      if (!updated) throw new Error(`account ${id} came back unreadable`);
      return updated;
    });
  }

  listAccounts(filter: AccountFilter, after: string | null, limit: number): Promise<AccountPage> {
    const { b } = this;
    return b.run(async () => {
      const accounts: StoredAccount[] = [];
      let last = after;
      for (let examined = 0; examined < LIST_MAX_EXAMINED; ) {
        const ids = await b.redis.zrangebylex(
          b.accountIndex,
          last === null ? '-' : `(${last}`,
          '+',
          'LIMIT',
          0,
          LIST_CHUNK,
        );
        // Each account is its own command, routed to its node on a Cluster (auto-pipelined).
        const records = await Promise.all(ids.map((id) => b.redis.hgetall(b.accountKey(id))));
        for (const [i, id] of ids.entries()) {
          const account = decodeAccount(records[i] as Record<string, string>);
          if (account === null || !matchesFilter(account, filter)) {
            last = id;
            continue;
          }
          // One match past a full page: there is more, so the page ends with a cursor.
          if (accounts.length === limit) return { accounts, next: (accounts[limit - 1] as StoredAccount).id };
          accounts.push(account);
          last = id;
        }
        if (ids.length < LIST_CHUNK) return { accounts, next: null };
        examined += ids.length;
      }
      return { accounts, next: last };
    });
  }

  addGrant(id: string, grant: Grant, ledger: GrantLedger): Promise<StoredAccount | null> {
    const { b } = this;
    const r = ledger.record;
    return b.run(async () => {
      const fields = await b.redis.fpgGrant(
        b.accountKey(id),
        b.daysKey(id, grant.period_id),
        b.channel,
        id,
        JSON.stringify(grant),
        String(grant.requests),
        String(ledger.dropBeforeMs),
        String(ledger.limit),
        String(ledger.expireAtMs),
        recordMeta(grant.period_id, r.kind, r.startMs, r.endMs, r.plan),
      );
      return fields === null ? null : decodeAccount(pairsToRecord(fields));
    });
  }

  deleteAccount(id: string): Promise<StoredAccount | null> {
    const { b } = this;
    return b.run(async () => {
      // Indexed before, as a new account is: an export never misses an account kept as deleted.
      await b.redis.zadd(b.deletedIndex, 0, id);
      const reply = await b.redis.fpgDeleteAccount(b.accountKey(id), b.periodsKey(id), b.deletedKey(id), b.channel, id);
      if (reply === null) return null;
      const [kept, fields] = reply;
      const deleted = decodeAccount(pairsToRecord(fields));
      // The keys stopped working with the script (findByKeyHash checks the account); these only tidy up.
      for (const k of deleted?.keys ?? []) await b.redis.del(b.indexKey(k.key_hash));
      await b.redis.zrem(b.accountIndex, id);
      if (kept === 0) await b.redis.zrem(b.deletedIndex, id);
      return deleted;
    });
  }

  getDeletedAccount(id: string): Promise<StoredAccount | null> {
    const { b } = this;
    return b.run(async () => decodeAccount(await b.redis.hgetall(b.deletedKey(id))));
  }

  listDeletedAccounts(after: string | null, limit: number): Promise<AccountPage> {
    const { b } = this;
    return b.run(async () => {
      const ids = await b.redis.zrangebylex(b.deletedIndex, after === null ? '-' : `(${after}`, '+', 'LIMIT', 0, limit);
      const records = await Promise.all(ids.map((id) => b.redis.hgetall(b.deletedKey(id))));
      const accounts: StoredAccount[] = [];
      for (const [i, id] of ids.entries()) {
        const account = decodeAccount(records[i] as Record<string, string>);
        if (account !== null) accounts.push(account);
        // Neither the account nor what was kept of it: its records expired (or it had none), for
        // good, since ids are never reused. An entry of a delete under way still has its account.
        else if ((await b.redis.exists(b.accountKey(id))) === 0) await b.redis.zrem(b.deletedIndex, id);
      }
      return { accounts, next: ids.length < limit ? null : (ids[ids.length - 1] as string) };
    });
  }
}
