import { type AttemptChange, type AttemptGrant, RESERVATION_MS, type ThrottleRule } from './interface.js';

interface Count {
  invalid: number;
  reserved: number;
  /** When `reserved` last grew: reservations older than RESERVATION_MS are forgotten. */
  grewAt: number;
  /** The count ends here, or, once blocked, the block does. */
  untilMs: number;
  blocked: boolean;
}

const MAX_ADDRESSES = 10_000;

/**
 * The invalid-key attempts of each address in one process, as the Redis script counts them
 * across instances (coordination/lua.ts INVALID_KEY): this process is the whole deployment.
 * Memory is bounded: expired counts are swept when the table is full, then the oldest go.
 */
export class MemoryAttempts {
  private readonly counts = new Map<string, Count>();

  constructor(
    private readonly now: () => number,
    private readonly announceBlock: (address: string, ms: number) => void,
  ) {}

  change(address: string, rule: ThrottleRule, change: AttemptChange): AttemptGrant {
    const now = this.now();
    let c = this.counts.get(address);
    if (c !== undefined && c.untilMs <= now) {
      this.counts.delete(address);
      c = undefined;
    }
    if (c?.blocked) return { granted: 0, room: false, blockedMs: c.untilMs - now };
    if (c === undefined) {
      this.makeRoom(now);
      c = { invalid: 0, reserved: 0, grewAt: now, untilMs: now + rule.windowMs, blocked: false };
      this.counts.set(address, c);
    }
    c.invalid += change.failed + change.unreserved;
    if (now - c.grewAt > RESERVATION_MS) c.reserved = 0;
    c.reserved = Math.max(0, c.reserved - change.released - change.failed);
    if (c.invalid >= rule.maxAttempts) {
      this.counts.set(address, { invalid: 0, reserved: 0, grewAt: now, untilMs: now + rule.blockMs, blocked: true });
      this.announceBlock(address, rule.blockMs);
      return { granted: 0, room: false, blockedMs: rule.blockMs };
    }
    const granted = Math.min(change.want, Math.max(0, rule.maxAttempts - c.invalid - c.reserved));
    if (granted > 0) c.grewAt = now;
    c.reserved += granted;
    return { granted, room: c.invalid + c.reserved < rule.maxAttempts, blockedMs: 0 };
  }

  private makeRoom(now: number): void {
    if (this.counts.size < MAX_ADDRESSES) return;
    for (const [k, c] of this.counts) if (c.untilMs <= now) this.counts.delete(k);
    for (const k of this.counts.keys()) {
      if (this.counts.size < MAX_ADDRESSES) break;
      this.counts.delete(k);
    }
  }
}
