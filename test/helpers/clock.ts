import type { Clock } from '../../src/clock.js';

/** A clock that only moves when told to, firing due timers as it passes them. */
export class ManualClock implements Clock {
  private timers = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;

  constructor(public ms: number) {}

  now = (): number => this.ms;

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.ms + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves to `to`, firing each timer due on the way in time order. */
  advanceTo(to: number): void {
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= to).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.ms = Math.max(this.ms, due[1].at);
      due[1].fn();
    }
    this.ms = to;
  }

  advance(ms: number): void {
    this.advanceTo(this.ms + ms);
  }

  pending(): number {
    return this.timers.size;
  }

  /** The timers due at `at` exactly: one feature's timer told apart from the others' (the key expiry check's minute). */
  pendingAt(at: number): number {
    return [...this.timers.values()].filter((t) => t.at === at).length;
  }
}
