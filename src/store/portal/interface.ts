/** What a member may do in an account's portal: an owner manages its members too. */
export type MemberRole = 'owner' | 'developer';

/** A person's place in an account: the account's portal lets them in by this. */
export interface Member {
  account_id: string;
  /** Lower case: one person, one spelling. */
  email: string;
  role: MemberRole;
  /** ISO time. */
  added_at: string;
  /** When they last signed in to this account (ISO); absent before the first time. */
  last_sign_in_at?: string;
}

/** A new address waiting for an operator (`portal.signup: approval`) before it gets an account. */
export interface SignUp {
  /** Named by the address (the caller derives it): an address waits once. */
  id: string;
  email: string;
  /** ISO time of its first request. */
  requested_at: string;
}

/** Oldest first; one second's requests by address. */
export const byRequest = (a: SignUp, b: SignUp): number =>
  a.requested_at === b.requested_at ? (a.email < b.email ? -1 : 1) : a.requested_at < b.requested_at ? -1 : 1;

/** A signed-in person, as the store keeps it under the hash of their session token. */
export interface Session {
  email: string;
  /** The account they act for now (they may belong to several). */
  account_id: string;
  /** Sent back by the page with every change (X-CSRF-Token): the cookie alone changes nothing. */
  csrf_token: string;
  /** When it began (store clock, ms). */
  started_ms: number;
}

/** A person's passkey (a WebAuthn credential): they sign in with it instead of an emailed link. */
export interface Passkey {
  /** The credential's id (base64url), as the authenticator names it: one person's only. */
  id: string;
  /** Whose it is, lower case. */
  email: string;
  /** Its COSE public key, base64url. */
  public_key: string;
  /** The authenticator's signature counter last seen (0: it keeps none). */
  counter: number;
  transports: string[];
  name: string;
  /** ISO times. */
  created_at: string;
  last_used_at?: string;
}

/** What the store holds for one take: a sealed secret to show once, a passkey ceremony's challenge. */
export type OnceKind = 'first_key' | 'challenge';

/** How long a session lasts: `idleMs` after its last use, and never more than `absoluteMs` after it began. */
export interface SessionLife {
  idleMs: number;
  absoluteMs: number;
}

/**
 * The customer portal's state: who belongs to which account, the sign-in links in flight and the
 * sessions. Secrets (link tokens, session tokens) are never stored, only their hashes (the
 * caller hashes them). Times are the store's own clock. Proven for every backend by
 * test/store/contract/portal.ts.
 */
export interface PortalStore {
  /** Adds the member; false when the address already belongs to the account (nothing changes). */
  addMember(member: Member): Promise<boolean>;
  /**
   * Removes the member: 'removed', 'absent', or 'last_owner' (refused, so an account always has
   * an owner).
   */
  removeMember(accountId: string, email: string): Promise<'removed' | 'absent' | 'last_owner'>;
  /** Writes when the member last signed in to the account; nothing when they are not a member. */
  markSignIn(accountId: string, email: string, at: string): Promise<void>;
  /** The account's members, by address. */
  members(accountId: string): Promise<Member[]>;
  /** The accounts an address belongs to, by account id. */
  memberships(email: string): Promise<Member[]>;
  /** Files a sign-up; false when one with its id waits already (nothing changes). */
  addSignUp(signUp: SignUp): Promise<boolean>;
  /** The sign-ups waiting, oldest first. */
  signUps(): Promise<SignUp[]>;
  /** Takes a waiting sign-up off the list (to approve or reject it): a second take gets null. */
  takeSignUp(id: string): Promise<SignUp | null>;
  /**
   * Counts one sign-in link for `email` in a window of `windowMs` from the first; false (and not
   * counted) once `max` were sent in it.
   */
  countLink(email: string, max: number, windowMs: number): Promise<boolean>;
  /** Keeps a sign-in link's token hash for `ttlMs`, naming the address it was sent to. */
  putSignInToken(tokenHash: string, email: string, ttlMs: number): Promise<void>;
  /** The address of a link still valid, which is then used up: a second take gets null. */
  takeSignInToken(tokenHash: string): Promise<string | null>;
  /** Keeps `value` under `hash` for `ttlMs`, for one take (the caller seals a secret first). */
  holdOnce(kind: OnceKind, hash: string, value: string, ttlMs: number): Promise<void>;
  /** The value held, which is then gone: a second take, or a take after its time, gets null. */
  takeOnce(kind: OnceKind, hash: string): Promise<string | null>;
  /** Adds a passkey; false when a passkey with its credential id exists (anyone's): nothing changes. */
  addPasskey(passkey: Passkey): Promise<boolean>;
  /** The passkey with this credential id, or null. */
  passkey(id: string): Promise<Passkey | null>;
  /** A person's passkeys, oldest first. */
  passkeys(email: string): Promise<Passkey[]>;
  /**
   * Records a sign-in with the passkey: its counter moves to `counter` only above the one kept
   * (or both 0, an authenticator that counts nothing); false otherwise (a replay or a clone).
   */
  usePasskey(id: string, counter: number, at: string): Promise<boolean>;
  /** Removes a passkey of this person; false when they have none with this id. */
  removePasskey(email: string, id: string): Promise<boolean>;
  /** Starts a session under its token's hash; `started_ms` is set by the store. */
  startSession(tokenHash: string, session: Omit<Session, 'started_ms'>, life: SessionLife): Promise<Session>;
  /**
   * The session, its idle time started again; null when it ended (idle, too old, signed out, or
   * every session of its person ended after it began).
   */
  useSession(tokenHash: string, life: SessionLife): Promise<Session | null>;
  /** Moves the session to another account of its person. */
  switchSession(tokenHash: string, accountId: string, life: SessionLife): Promise<Session | null>;
  /** Ends one session. */
  endSession(tokenHash: string): Promise<void>;
  /** Ends every session of the person begun until now, on every gateway. */
  endSessions(email: string, life: SessionLife): Promise<void>;
}
