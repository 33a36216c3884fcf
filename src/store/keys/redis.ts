import { setTimeout as sleep } from 'node:timers/promises';
import type { Result } from 'ioredis';
import { GatewayError } from '../../failures.js';
import type { StoredAccount } from '../accounts/interface.js';
import type { RedisBackend } from '../redis/backend.js';
import { decodeAccount, pairsToRecord } from '../redis/codec.js';
import {
  addKey,
  copyKey,
  type Edited,
  forgetExpired,
  previousReleaseHash,
  revokeKey,
  rotateKey,
  updateKey,
} from './edit.js';
import type { AccountKey, KeyChange, KeyPatch, KeyStore, StoredKey } from './interface.js';
import { MARK_USED, SET_KEYS } from './lua.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgSetKeys(account: string, ...args: string[]): Result<string[] | null, Context>;
    fpgMarkUsed(account: string, keyId: string, day: string): Result<number, Context>;
  }
}

const SCRIPTS = {
  fpgSetKeys: { lua: SET_KEYS, numberOfKeys: 1 },
  fpgMarkUsed: { lua: MARK_USED, numberOfKeys: 1 },
};

// A change is worked out from the account as read and written only if it is still at that
// revision; other changes in between (a consume never changes it) make it read again. Each
// lost attempt means another change was written, so a burst of changes to one account (30
// creations through three gateways) is worked through; a random wait, growing to a bound,
// keeps the losers from meeting again in step: at most about 2.4 s of waiting in all.
const MAX_ATTEMPTS = 40;
const RETRY_WAIT_MS = { first: 2, most: 64 };

/** The keys on Redis: a field of the account's hash, and an index entry per key hash. */
export class RedisKeys implements KeyStore {
  constructor(private readonly b: RedisBackend) {
    b.define(SCRIPTS);
  }

  findByKeyHash(keyHash: string): Promise<AccountKey | null> {
    const { b } = this;
    return b.run(async () => {
      const id = await b.redis.get(b.indexKey(keyHash));
      if (id === null) return null;
      const account = decodeAccount(await b.redis.hgetall(b.accountKey(id)));
      const key = account?.keys.find((k) => k.key_hash === keyHash);
      return account && key ? { account, key: copyKey(key) } : null;
    });
  }

  listKeys(accountId: string): Promise<StoredKey[] | null> {
    const { b } = this;
    return b.run(async () => decodeAccount(await b.redis.hgetall(b.accountKey(accountId)))?.keys ?? null);
  }

  addKey(accountId: string, key: StoredKey): Promise<KeyChange> {
    return this.edit(accountId, (keys) => addKey(keys, accountId, key, Date.now()));
  }

  updateKey(accountId: string, keyId: string, patch: KeyPatch): Promise<KeyChange> {
    return this.edit(accountId, (keys) => updateKey(keys, accountId, keyId, patch));
  }

  rotateKey(accountId: string, keyId: string, next: StoredKey, oldExpiresAt: string): Promise<KeyChange> {
    return this.edit(accountId, (keys) => rotateKey(keys, accountId, keyId, next, oldExpiresAt, Date.now()));
  }

  revoke(accountId: string, keyId: string): Promise<KeyChange> {
    return this.edit(accountId, (keys) => revokeKey(keys, accountId, keyId, Date.now()));
  }

  markUsed(accountId: string, keyId: string, day: string): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.fpgMarkUsed(b.accountKey(accountId), keyId, day);
    });
  }

  async forgetExpired(accountId: string, beforeMs: number): Promise<StoredKey[]> {
    let forgotten: StoredKey[] = [];
    await this.edit(accountId, (keys) => {
      const kept = forgetExpired(keys, beforeMs);
      forgotten = kept.forgotten;
      return forgotten.length === 0 ? null : { keys: kept.keys, key: forgotten[0] as StoredKey };
    });
    return forgotten;
  }

  /**
   * Reads the account, works out its new keys, claims the new key hashes' index entries, and
   * writes the keys if the account is still at the revision read; index entries of removed keys
   * go after (a removed key stops working with the write: lookups check the account's keys).
   * A change that finds nothing to do (null) writes nothing.
   */
  private edit(accountId: string, change: (keys: StoredKey[]) => Edited): Promise<KeyChange>;
  private edit(accountId: string, change: (keys: StoredKey[]) => Edited | null): Promise<KeyChange | null>;
  private edit(accountId: string, change: (keys: StoredKey[]) => Edited | null): Promise<KeyChange | null> {
    const { b } = this;
    const account = b.accountKey(accountId);
    return b.run(async () => {
      for (let attempt = 1; ; attempt++) {
        const current = decodeAccount(await b.redis.hgetall(account));
        if (current === null) throw new GatewayError('NOT_FOUND', `no account with id ${accountId}`);
        const edited = change(current.keys);
        if (edited === null) return null;
        const before = current.keys.map((k) => k.key_hash);
        const after = edited.keys.map((k) => k.key_hash);
        const added = after.filter((h) => !before.includes(h));
        const removed = current.keys.filter((k) => !after.includes(k.key_hash));
        const claimed: string[] = [];
        for (const h of added) {
          if ((await b.redis.set(b.indexKey(h), accountId, 'NX')) === null) {
            if (claimed.length > 0) await b.redis.del(...claimed);
            throw new GatewayError('CONFLICT', `key hash ${h} is in use`);
          }
          claimed.push(b.indexKey(h));
        }
        const message = JSON.stringify({
          type: 'account',
          id: accountId,
          keyHashes: [...new Set([...before, ...after])],
        });
        const fields = await b.redis.fpgSetKeys(
          account,
          b.channel,
          String(current.revision),
          JSON.stringify(edited.keys.map(({ rotated_to: _apart, ...k }) => k)),
          message,
          previousReleaseHash(edited.keys),
          JSON.stringify(newSuccessors(current.keys, edited.keys)),
          ...removed.map((k) => k.id),
        );
        if (fields === null) {
          if (claimed.length > 0) await b.redis.del(...claimed);
          if (attempt === MAX_ATTEMPTS) throw new GatewayError('CONFLICT', `account ${accountId} kept changing`);
          await sleep(Math.random() * Math.min(RETRY_WAIT_MS.most, RETRY_WAIT_MS.first * 2 ** attempt));
          continue;
        }
        for (const k of removed) await b.redis.del(b.indexKey(k.key_hash));
        const updated = decodeAccount(pairsToRecord(fields)) as StoredAccount;
        const result: KeyChange = { account: updated, key: copyKey(edited.key) };
        if (edited.previous !== undefined) result.previous = copyKey(edited.previous);
        return result;
      }
    });
  }
}

/** The successors a change notes (a rotation's), by the id of the key each replaces. */
function newSuccessors(before: StoredKey[], after: StoredKey[]): Record<string, string> {
  const noted = new Map(before.map((k) => [k.id, k.rotated_to]));
  return Object.fromEntries(
    after.flatMap((k) =>
      k.rotated_to !== undefined && noted.get(k.id) !== k.rotated_to ? [[k.id, k.rotated_to]] : [],
    ),
  );
}
