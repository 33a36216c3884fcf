import { type AttemptLedger, AttemptSlots, type Ticket } from './attempts.js';

export type { AttemptLedger, Ticket } from './attempts.js';

/**
 * Invalid-key throttle per client address: after `maxAttempts` invalid keys within a window the
 * address is refused for `blockMs`, so the key space cannot be scanned at full speed. A blocked
 * address may still try one well-formed key every PASS_EVERY_MS from the block's start
 * (`letThrough`), so customers who share the address with a scanner (NAT, an office) get in with a
 * newly issued key.
 *
 * Each instance counts what it sees, so a malformed key blocks at once, and the store counts
 * across instances (`ledger`, through AttemptSlots); a block announced by the store comes in
 * through `block`, so a refusal never reads the store. A key this process cannot vouch for is an
 * attempt before it is looked up (`take`, then `settle`): pipelined or parallel requests cannot
 * have more keys in flight than the limit allows. While `paused` (the store lost its data, so
 * every key is unknown for a while) unknown keys count as nothing.
 * Memory is bounded: expired entries are swept when the table grows, and past `maxEntries` the
 * oldest entries go.
 */
const PASS_EVERY_MS = 1000;

interface Entry {
  count: number;
  windowEnd: number;
  blockedUntil: number;
  /** When a well-formed key may next pass the block. */
  nextPass: number;
}

export class InvalidKeyThrottle {
  private readonly entries = new Map<string, Entry>();
  /** When the last block ends: until then some address may be blocked. */
  private lastBlockEnd = 0;
  private readonly slots: AttemptSlots;

  constructor(
    private readonly opts: { maxAttempts: number; windowMs: number; blockMs: number; maxEntries?: number },
    private readonly now: () => number,
    ledger: AttemptLedger,
    private readonly paused: () => boolean = () => false,
  ) {
    this.slots = new AttemptSlots(ledger, now, (address, ms) => this.block(address, ms));
  }

  /** Whether any address is blocked now: when none is, a request need not work out its address. */
  anyBlocked(): boolean {
    return this.lastBlockEnd > this.now();
  }

  /** Milliseconds the address is still blocked for, or 0. */
  blockedFor(address: string): number {
    const e = this.entries.get(address);
    if (!e) return 0;
    return Math.max(0, e.blockedUntil - this.now());
  }

  /** Whether a well-formed key from a blocked address may go to the store now (at most one per PASS_EVERY_MS). */
  letThrough(address: string): boolean {
    const e = this.entries.get(address);
    const now = this.now();
    if (!e || now < e.nextPass) return false;
    e.nextPass = now + PASS_EVERY_MS;
    return true;
  }

  /**
   * A key from `address` this process cannot vouch for is about to be looked up: the ticket it
   * goes on (now, or once the attempts ahead of it settle), or `throttled`. While the address is
   * blocked only a key `letThrough` gets here (http/metered/key.ts refuses the rest first): it passes.
   */
  take(address: string): Ticket | Promise<Ticket> {
    return this.blockedFor(address) > 0 ? 'passed' : this.slots.take(address);
  }

  /** The attempt on `ticket` is over: `unknown` when the store did not know the key. */
  settle(address: string, ticket: Ticket, unknown: boolean): void {
    const failed = unknown && ticket !== 'throttled' && !this.paused();
    if (failed) this.count(address);
    this.slots.settle(address, ticket, failed);
  }

  /** Records an invalid key from the address that needed no look-up (malformed, a bad signature). */
  fail(address: string): void {
    this.count(address);
    this.slots.report(address);
  }

  /** Refuses the address for `ms` from now (a block announced by another instance). */
  block(address: string, ms: number): void {
    const now = this.now();
    const e = this.entry(address, now);
    // A new block lets the first key through a second in, not at once: a flood's attempts in
    // flight when it began are all it gets meanwhile.
    if (e.blockedUntil <= now) e.nextPass = now + PASS_EVERY_MS;
    e.blockedUntil = Math.max(e.blockedUntil, now + ms);
    this.lastBlockEnd = Math.max(this.lastBlockEnd, e.blockedUntil);
    e.count = 0;
    e.windowEnd = e.blockedUntil;
    this.slots.refuse(address);
  }

  private count(address: string): void {
    const now = this.now();
    const e = this.entry(address, now);
    e.count += 1;
    if (e.count >= this.opts.maxAttempts) this.block(address, this.opts.blockMs);
  }

  /** The address's live entry, or a fresh one. */
  private entry(address: string, now: number): Entry {
    let e = this.entries.get(address);
    if (!e || (e.windowEnd <= now && e.blockedUntil <= now)) {
      if (!e) this.makeRoom(now);
      e = { count: 0, windowEnd: now + this.opts.windowMs, blockedUntil: 0, nextPass: 0 };
      this.entries.set(address, e);
    }
    return e;
  }

  private makeRoom(now: number): void {
    const max = this.opts.maxEntries ?? 10_000;
    if (this.entries.size < max) return;
    for (const [k, e] of this.entries) if (e.windowEnd <= now && e.blockedUntil <= now) this.entries.delete(k);
    // Still full: all entries are live; drop the oldest (Map keeps insertion order).
    for (const k of this.entries.keys()) {
      if (this.entries.size < max) break;
      this.entries.delete(k);
    }
  }
}
