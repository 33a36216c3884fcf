import { createHash } from 'node:crypto';
import type { Result } from 'ioredis';
import type { RedisBackend } from '../redis/backend.js';
import {
  byRequest,
  type Member,
  type MemberRole,
  type OnceKind,
  type PortalStore,
  type Session,
  type SessionLife,
  type SignUp,
} from './interface.js';
import {
  COUNT_LINK,
  END_SESSIONS,
  MARK_SIGN_IN,
  REMOVE_MEMBER,
  START_SESSION,
  TAKE,
  TAKE_FIELD,
  USE_SESSION,
} from './lua.js';
import { RedisPasskeys } from './passkeys-redis.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgRemoveMember(members: string, email: string): Result<number, Context>;
    fpgMarkSignIn(members: string, email: string, at: string): Result<number, Context>;
    fpgCountLink(count: string, max: number, windowMs: number): Result<number, Context>;
    fpgTake(key: string): Result<string | null, Context>;
    fpgTakeField(key: string, field: string): Result<string | null, Context>;
    fpgStartSession(key: string, json: string, idleMs: number): Result<number, Context>;
    fpgUseSession(key: string, idleMs: number, absoluteMs: number, switchTo: string): Result<string | null, Context>;
    fpgEndSessions(key: string, absoluteMs: number): Result<number, Context>;
  }
}

const SCRIPTS = {
  fpgRemoveMember: { lua: REMOVE_MEMBER, numberOfKeys: 1 },
  fpgMarkSignIn: { lua: MARK_SIGN_IN, numberOfKeys: 1 },
  fpgCountLink: { lua: COUNT_LINK, numberOfKeys: 1 },
  fpgTake: { lua: TAKE, numberOfKeys: 1 },
  fpgTakeField: { lua: TAKE_FIELD, numberOfKeys: 1 },
  fpgStartSession: { lua: START_SESSION, numberOfKeys: 1 },
  fpgUseSession: { lua: USE_SESSION, numberOfKeys: 1 },
  fpgEndSessions: { lua: END_SESSIONS, numberOfKeys: 1 },
};

/** An address in a key name: hashed, so that no `{` in it picks a Cluster slot and no byte of it needs escaping. */
const personOf = (email: string): string => createHash('sha256').update(email).digest('base64url');

/**
 * The portal on Redis. Keys:
 *   fpg:{acct:ID}:members            hash email → JSON {role, added_at, last_sign_in_at?}, in the account's slot
 *   fpg:person:P:accounts            set of the account ids the person P (hashed address) belongs
 *                                    to: written by its own command, before the member and
 *                                    removed after it, so an entry may outlive its membership
 *                                    (reading skips those)
 *   fpg:person:P:ended               when their sessions were last all ended (Redis' clock, ms)
 *   fpg:person:P:links               links sent within the hour
 *   fpg:signups                      hash id → JSON sign-up, those waiting for an operator (one
 *                                    key: an operator's list, read whole)
 *   fpg:signin:HASH                  a sign-in link's address, until it is used or expires
 *   fpg:session:HASH                 a session (JSON), expiring when idle
 *   fpg:once:KIND:HASH               a value held for one take (a sealed first key, a challenge)
 *   passkeys: see passkeys-redis.ts
 * Every script touches one key (lua.ts), so the Cluster needs nothing more.
 */
export class RedisPortal extends RedisPasskeys implements PortalStore {
  constructor(b: RedisBackend) {
    super(b);
    b.define(SCRIPTS);
  }

  addMember(m: Member): Promise<boolean> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.sadd(this.personKey(m.email, 'accounts'), m.account_id);
      const value = JSON.stringify({ role: m.role, added_at: m.added_at });
      return (await b.redis.hsetnx(this.membersKey(m.account_id), m.email, value)) === 1;
    });
  }

  removeMember(accountId: string, email: string): Promise<'removed' | 'absent' | 'last_owner'> {
    const { b } = this;
    return b.run(async () => {
      const r = await b.redis.fpgRemoveMember(this.membersKey(accountId), email);
      if (r === -1) return 'last_owner';
      await b.redis.srem(this.personKey(email, 'accounts'), accountId);
      return r === 1 ? 'removed' : 'absent';
    });
  }

  markSignIn(accountId: string, email: string, at: string): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.fpgMarkSignIn(this.membersKey(accountId), email, at);
    });
  }

  members(accountId: string): Promise<Member[]> {
    const { b } = this;
    return b.run(async () => {
      const all = await b.redis.hgetall(this.membersKey(accountId));
      return Object.entries(all)
        .map(([email, raw]) => member(accountId, email, raw))
        .sort((x, y) => (x.email < y.email ? -1 : 1));
    });
  }

  memberships(email: string): Promise<Member[]> {
    const { b } = this;
    return b.run(async () => {
      const ids = (await b.redis.smembers(this.personKey(email, 'accounts'))).sort();
      const out: Member[] = [];
      for (const id of ids) {
        const raw = await b.redis.hget(this.membersKey(id), email);
        if (raw !== null) out.push(member(id, email, raw));
      }
      return out;
    });
  }

  addSignUp(s: SignUp): Promise<boolean> {
    const { b } = this;
    return b.run(async () => (await b.redis.hsetnx(this.signUpsKey(), s.id, JSON.stringify(s))) === 1);
  }

  signUps(): Promise<SignUp[]> {
    const { b } = this;
    return b.run(async () =>
      Object.values(await b.redis.hgetall(this.signUpsKey()))
        .map((raw) => JSON.parse(raw) as SignUp)
        .sort(byRequest),
    );
  }

  takeSignUp(id: string): Promise<SignUp | null> {
    const { b } = this;
    return b.run(async () => {
      const raw = await b.redis.fpgTakeField(this.signUpsKey(), id);
      return raw === null ? null : (JSON.parse(raw) as SignUp);
    });
  }

  countLink(email: string, max: number, windowMs: number): Promise<boolean> {
    const { b } = this;
    return b.run(async () => (await b.redis.fpgCountLink(this.personKey(email, 'links'), max, windowMs)) === 1);
  }

  putSignInToken(tokenHash: string, email: string, ttlMs: number): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.set(this.key('signin', tokenHash), email, 'PX', ttlMs);
    });
  }

  takeSignInToken(tokenHash: string): Promise<string | null> {
    const { b } = this;
    return b.run(() => b.redis.fpgTake(this.key('signin', tokenHash)));
  }

  holdOnce(kind: OnceKind, hash: string, value: string, ttlMs: number): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.set(`${this.b.options.key_prefix}once:${kind}:${hash}`, value, 'PX', ttlMs);
    });
  }

  takeOnce(kind: OnceKind, hash: string): Promise<string | null> {
    const { b } = this;
    return b.run(() => b.redis.fpgTake(`${this.b.options.key_prefix}once:${kind}:${hash}`));
  }

  startSession(tokenHash: string, s: Omit<Session, 'started_ms'>, life: SessionLife): Promise<Session> {
    const { b } = this;
    return b.run(async () => {
      const fields = { email: s.email, account_id: s.account_id, csrf_token: s.csrf_token };
      const started = await b.redis.fpgStartSession(
        this.key('session', tokenHash),
        JSON.stringify(fields),
        life.idleMs,
      );
      return { ...fields, started_ms: started };
    });
  }

  useSession(tokenHash: string, life: SessionLife): Promise<Session | null> {
    return this.use(tokenHash, life, '');
  }

  switchSession(tokenHash: string, accountId: string, life: SessionLife): Promise<Session | null> {
    return this.use(tokenHash, life, accountId);
  }

  endSession(tokenHash: string): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.del(this.key('session', tokenHash));
    });
  }

  endSessions(email: string, life: SessionLife): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.fpgEndSessions(this.personKey(email, 'ended'), life.absoluteMs);
    });
  }

  /** The session script, then the person's end mark: two keys of two slots, so two commands. */
  private use(tokenHash: string, life: SessionLife, switchTo: string): Promise<Session | null> {
    const { b } = this;
    return b.run(async () => {
      const key = this.key('session', tokenHash);
      const raw = await b.redis.fpgUseSession(key, life.idleMs, life.absoluteMs, switchTo);
      if (raw === null) return null;
      const s = JSON.parse(raw) as Session;
      const ended = await b.redis.get(this.personKey(s.email, 'ended'));
      if (ended !== null && s.started_ms <= Number(ended)) {
        await b.redis.del(key);
        return null;
      }
      return { email: s.email, account_id: s.account_id, csrf_token: s.csrf_token, started_ms: s.started_ms };
    });
  }

  private signUpsKey(): string {
    return `${this.b.options.key_prefix}signups`;
  }

  private membersKey(accountId: string): string {
    return `${this.b.options.key_prefix}{acct:${accountId}}:members`;
  }

  private personKey(email: string, what: 'accounts' | 'ended' | 'links'): string {
    return `${this.b.options.key_prefix}person:${personOf(email)}:${what}`;
  }

  private key(kind: 'signin' | 'session', tokenHash: string): string {
    return `${this.b.options.key_prefix}${kind}:${tokenHash}`;
  }
}

function member(accountId: string, email: string, raw: string): Member {
  const { role, added_at, last_sign_in_at } = JSON.parse(raw) as {
    role: MemberRole;
    added_at: string;
    last_sign_in_at?: string;
  };
  return {
    account_id: accountId,
    email,
    role,
    added_at,
    ...(last_sign_in_at === undefined ? {} : { last_sign_in_at }),
  };
}
