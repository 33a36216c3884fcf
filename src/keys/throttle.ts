/**
 * Invalid-key throttle per client address: after `maxAttempts` invalid keys within a window the
 * address is refused for `blockMs`, so the key space cannot be scanned at full speed. A blocked
 * address may still try one well-formed key every PASS_EVERY_MS (`letThrough`), so customers who
 * share the address with a scanner (NAT, an office) get in with a newly issued key. Each
 * instance throttles what it sees, and `share` counts the attempts across instances too (the
 * Redis store); a block announced by the store comes in through `block`, so a refusal never
 * reads the store. Attempts are shared in batches, each address's count once per turn of the
 * event loop: a flood's attempts that arrive together cost the store one command, while one
 * request after another is each shared at once, so the limit still holds across gateways (an
 * address spread over N gateways gets at most about limit + N refusals before its block). A
 * longer batch window would loosen that bound by every attempt made inside it.
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
  /** Attempts not yet shared, by address. */
  private unshared = new Map<string, number>();
  private shareTimer: NodeJS.Immediate | undefined;

  constructor(
    private readonly opts: { maxAttempts: number; windowMs: number; blockMs: number; maxEntries?: number },
    private readonly now: () => number,
    private readonly share?: (address: string, attempts: number) => void,
  ) {}

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

  /** Records an invalid key from the address. */
  fail(address: string): void {
    if (this.share) this.later(address);
    const now = this.now();
    const e = this.entry(address, now);
    e.count += 1;
    if (e.count >= this.opts.maxAttempts) {
      e.blockedUntil = now + this.opts.blockMs;
      this.lastBlockEnd = Math.max(this.lastBlockEnd, e.blockedUntil);
      e.count = 0;
      e.windowEnd = e.blockedUntil;
    }
  }

  /** Refuses the address for `ms` from now (a block announced by another instance). */
  block(address: string, ms: number): void {
    const now = this.now();
    const e = this.entry(address, now);
    e.blockedUntil = Math.max(e.blockedUntil, now + ms);
    this.lastBlockEnd = Math.max(this.lastBlockEnd, e.blockedUntil);
    e.count = 0;
    e.windowEnd = e.blockedUntil;
  }

  /** Counts an attempt to be shared with the next batch. */
  private later(address: string): void {
    this.unshared.set(address, (this.unshared.get(address) ?? 0) + 1);
    if (this.shareTimer !== undefined) return;
    this.shareTimer = setImmediate(() => this.flush());
    this.shareTimer.unref();
  }

  private flush(): void {
    const batch = this.unshared;
    this.unshared = new Map();
    this.shareTimer = undefined;
    for (const [address, attempts] of batch) this.share?.(address, attempts);
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
