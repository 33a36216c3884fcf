import { createHash } from 'node:crypto';
import type { Result } from 'ioredis';
import type { RedisBackend } from '../redis/backend.js';
import type { Passkey } from './interface.js';
import { oldestFirst } from './passkeys-memory.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgAddPasskey(key: string, ...fields: string[]): Result<number, Context>;
    fpgUsePasskey(key: string, counter: number, at: string): Result<number, Context>;
    fpgRemovePasskey(key: string, email: string): Result<number, Context>;
  }
}

/** Writes the passkey's fields (ARGV: field, value, …) unless KEYS[1] exists. 1 added, 0 there already. */
const ADD = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/** Moves the counter to ARGV[1] when above the one kept, or both 0; ARGV[2] the time. 1 used, 0 refused. */
const USE = `
local kept = redis.call('HGET', KEYS[1], 'counter')
if not kept then return 0 end
local n, k = tonumber(ARGV[1]), tonumber(kept)
if n > k or (n == 0 and k == 0) then
  redis.call('HSET', KEYS[1], 'counter', ARGV[1], 'last_used_at', ARGV[2])
  return 1
end
return 0
`;

/** Deletes KEYS[1] when it is the person ARGV[1]'s. */
const REMOVE = `
if redis.call('HGET', KEYS[1], 'email') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

const SCRIPTS = {
  fpgAddPasskey: { lua: ADD, numberOfKeys: 1 },
  fpgUsePasskey: { lua: USE, numberOfKeys: 1 },
  fpgRemovePasskey: { lua: REMOVE, numberOfKeys: 1 },
};

/**
 * Passkeys on Redis. Keys:
 *   fpg:passkey:ID                   hash: the passkey's fields (transports as JSON), one key per
 *                                    credential, so every script touches one key
 *   fpg:person:P:passkeys            set of the person's credential ids (P: the hashed address),
 *                                    written before the passkey and cleared after it (reading
 *                                    skips an id whose passkey is gone)
 */
export class RedisPasskeys {
  constructor(protected readonly b: RedisBackend) {
    b.define(SCRIPTS);
  }

  addPasskey(p: Passkey): Promise<boolean> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.sadd(this.personPasskeys(p.email), p.id);
      const fields = Object.entries({ ...p, transports: JSON.stringify(p.transports) }).flatMap(([k, v]) => [
        k,
        String(v),
      ]);
      return (await b.redis.fpgAddPasskey(this.passkeyKey(p.id), ...fields)) === 1;
    });
  }

  passkey(id: string): Promise<Passkey | null> {
    const { b } = this;
    return b.run(async () => passkeyOf(await b.redis.hgetall(this.passkeyKey(id))));
  }

  passkeys(email: string): Promise<Passkey[]> {
    const { b } = this;
    return b.run(async () => {
      const out: Passkey[] = [];
      for (const id of await b.redis.smembers(this.personPasskeys(email))) {
        const p = passkeyOf(await b.redis.hgetall(this.passkeyKey(id)));
        if (p !== null && p.email === email) out.push(p);
      }
      return out.sort(oldestFirst);
    });
  }

  usePasskey(id: string, counter: number, at: string): Promise<boolean> {
    const { b } = this;
    return b.run(async () => (await b.redis.fpgUsePasskey(this.passkeyKey(id), counter, at)) === 1);
  }

  removePasskey(email: string, id: string): Promise<boolean> {
    const { b } = this;
    return b.run(async () => {
      const removed = (await b.redis.fpgRemovePasskey(this.passkeyKey(id), email)) === 1;
      if (removed) await b.redis.srem(this.personPasskeys(email), id);
      return removed;
    });
  }

  private passkeyKey(id: string): string {
    return `${this.b.options.key_prefix}passkey:${id}`;
  }

  private personPasskeys(email: string): string {
    const person = createHash('sha256').update(email).digest('base64url');
    return `${this.b.options.key_prefix}person:${person}:passkeys`;
  }
}

function passkeyOf(h: Record<string, string>): Passkey | null {
  if (h['id'] === undefined) return null;
  return {
    id: h['id'],
    email: h['email'] ?? '',
    public_key: h['public_key'] ?? '',
    counter: Number(h['counter']),
    transports: JSON.parse(h['transports'] ?? '[]') as string[],
    name: h['name'] ?? '',
    created_at: h['created_at'] ?? '',
    ...(h['last_used_at'] === undefined ? {} : { last_used_at: h['last_used_at'] }),
  };
}
