import {
  byRequest,
  type Member,
  type OnceKind,
  type PortalStore,
  type Session,
  type SessionLife,
  type SignUp,
} from './interface.js';
import { MemoryPasskeys } from './passkeys-memory.js';

interface Held {
  session: Session;
  idleUntilMs: number;
}

/**
 * The portal in the embedded store: members in the shared data (kept in the state file with the
 * accounts), links and sessions in this process only (a restart signs everyone out). Each call
 * is one synchronous step, so atomic.
 */
export class MemoryPortal extends MemoryPasskeys implements PortalStore {
  private readonly tokens = new Map<string, { email: string; untilMs: number }>();
  private readonly links = new Map<string, { n: number; untilMs: number }>();
  private readonly sessions = new Map<string, Held>();
  private readonly once = new Map<string, { value: string; untilMs: number }>();

  async addMember(member: Member): Promise<boolean> {
    let members = this.data.members.get(member.account_id);
    if (members === undefined) {
      members = new Map();
      this.data.members.set(member.account_id, members);
    }
    if (members.has(member.email)) return false;
    members.set(member.email, { ...member });
    await this.data.save();
    return true;
  }

  async removeMember(accountId: string, email: string): Promise<'removed' | 'absent' | 'last_owner'> {
    const members = this.data.members.get(accountId);
    const member = members?.get(email);
    if (members === undefined || member === undefined) return 'absent';
    const owners = [...members.values()].filter((m) => m.role === 'owner').length;
    if (member.role === 'owner' && owners <= 1) return 'last_owner';
    members.delete(email);
    if (members.size === 0) this.data.members.delete(accountId);
    await this.data.save();
    return 'removed';
  }

  async markSignIn(accountId: string, email: string, at: string): Promise<void> {
    const member = this.data.members.get(accountId)?.get(email);
    if (member === undefined) return;
    member.last_sign_in_at = at;
    await this.data.save();
  }

  async members(accountId: string): Promise<Member[]> {
    const members = [...(this.data.members.get(accountId)?.values() ?? [])];
    return members.map((m) => ({ ...m })).sort((a, b) => (a.email < b.email ? -1 : 1));
  }

  async memberships(email: string): Promise<Member[]> {
    const out: Member[] = [];
    for (const members of this.data.members.values()) {
      const m = members.get(email);
      if (m !== undefined) out.push({ ...m });
    }
    return out.sort((a, b) => (a.account_id < b.account_id ? -1 : 1));
  }

  async addSignUp(signUp: SignUp): Promise<boolean> {
    if (this.data.signups.has(signUp.id)) return false;
    this.data.signups.set(signUp.id, { ...signUp });
    await this.data.save();
    return true;
  }

  async signUps(): Promise<SignUp[]> {
    return [...this.data.signups.values()].map((s) => ({ ...s })).sort(byRequest);
  }

  async takeSignUp(id: string): Promise<SignUp | null> {
    const signUp = this.data.signups.get(id);
    if (signUp === undefined) return null;
    this.data.signups.delete(id);
    await this.data.save();
    return signUp;
  }

  async countLink(email: string, max: number, windowMs: number): Promise<boolean> {
    const now = this.data.now();
    const held = this.links.get(email);
    const current = held !== undefined && held.untilMs > now ? held : { n: 0, untilMs: now + windowMs };
    if (current.n >= max) return false;
    this.links.set(email, { n: current.n + 1, untilMs: current.untilMs });
    this.sweep(now);
    return true;
  }

  async putSignInToken(tokenHash: string, email: string, ttlMs: number): Promise<void> {
    this.tokens.set(tokenHash, { email, untilMs: this.data.now() + ttlMs });
  }

  async takeSignInToken(tokenHash: string): Promise<string | null> {
    const held = this.tokens.get(tokenHash);
    this.tokens.delete(tokenHash);
    return held !== undefined && held.untilMs > this.data.now() ? held.email : null;
  }

  async holdOnce(kind: OnceKind, hash: string, value: string, ttlMs: number): Promise<void> {
    const now = this.data.now();
    this.once.set(`${kind}:${hash}`, { value, untilMs: now + ttlMs });
    this.sweep(now);
  }

  async takeOnce(kind: OnceKind, hash: string): Promise<string | null> {
    const held = this.once.get(`${kind}:${hash}`);
    this.once.delete(`${kind}:${hash}`);
    return held !== undefined && held.untilMs > this.data.now() ? held.value : null;
  }

  async startSession(tokenHash: string, s: Omit<Session, 'started_ms'>, life: SessionLife): Promise<Session> {
    const now = this.data.now();
    const session = { ...s, started_ms: now };
    this.sessions.set(tokenHash, { session, idleUntilMs: now + life.idleMs });
    this.sweep(now);
    return { ...session };
  }

  async useSession(tokenHash: string, life: SessionLife): Promise<Session | null> {
    return this.use(tokenHash, life, null);
  }

  async switchSession(tokenHash: string, accountId: string, life: SessionLife): Promise<Session | null> {
    return this.use(tokenHash, life, accountId);
  }

  async endSession(tokenHash: string): Promise<void> {
    this.sessions.delete(tokenHash);
  }

  async endSessions(email: string): Promise<void> {
    for (const [hash, held] of this.sessions) if (held.session.email === email) this.sessions.delete(hash);
  }

  private use(tokenHash: string, life: SessionLife, accountId: string | null): Session | null {
    const now = this.data.now();
    const held = this.sessions.get(tokenHash);
    if (held === undefined) return null;
    const endMs = held.session.started_ms + life.absoluteMs;
    if (held.idleUntilMs <= now || endMs <= now) {
      this.sessions.delete(tokenHash);
      return null;
    }
    if (accountId !== null) held.session = { ...held.session, account_id: accountId };
    held.idleUntilMs = Math.min(now + life.idleMs, endMs);
    return { ...held.session };
  }

  /** Forgets what ran out (counts, links, idle sessions), so what is seen once does not stay in memory. */
  private sweep(now: number): void {
    if (this.links.size + this.tokens.size + this.sessions.size + this.once.size < 1000) return;
    for (const [k, v] of this.once) if (v.untilMs <= now) this.once.delete(k);
    for (const [k, v] of this.sessions) if (v.idleUntilMs <= now) this.sessions.delete(k);
    for (const [k, v] of this.links) if (v.untilMs <= now) this.links.delete(k);
    for (const [k, v] of this.tokens) if (v.untilMs <= now) this.tokens.delete(k);
  }
}
