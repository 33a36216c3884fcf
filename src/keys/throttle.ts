/**
 * Invalid-key throttle per client address: after `maxAttempts` invalid keys within a window the
 * address is refused for `blockMs`, so the key space cannot be scanned at full speed. Per
 * process (each instance throttles what it sees). Memory is bounded: expired entries are swept
 * when the table grows, and past `maxEntries` the oldest entries go.
 */
export class InvalidKeyThrottle {
  private readonly entries = new Map<string, { count: number; windowEnd: number; blockedUntil: number }>();

  constructor(
    private readonly opts: { maxAttempts: number; windowMs: number; blockMs: number; maxEntries?: number },
    private readonly now: () => number,
  ) {}

  /** Milliseconds the address is still blocked for, or 0. */
  blockedFor(address: string): number {
    const e = this.entries.get(address);
    if (!e) return 0;
    return Math.max(0, e.blockedUntil - this.now());
  }

  /** Records an invalid key from the address. */
  fail(address: string): void {
    const now = this.now();
    let e = this.entries.get(address);
    if (!e || (e.windowEnd <= now && e.blockedUntil <= now)) {
      if (!e) this.makeRoom(now);
      e = { count: 0, windowEnd: now + this.opts.windowMs, blockedUntil: 0 };
      this.entries.set(address, e);
    }
    e.count += 1;
    if (e.count >= this.opts.maxAttempts) {
      e.blockedUntil = now + this.opts.blockMs;
      e.count = 0;
      e.windowEnd = e.blockedUntil;
    }
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
