import { performance } from 'node:perf_hooks';

// A measurement whose round trip took longer than this says too little about the offset.
const MAX_RTT_MS = 50;
// Timers may fire a little early and the offset is known to within half a round trip.
const MARGIN_MS = 5;

const localMs = (): number => performance.timeOrigin + performance.now();

/**
 * Redis' clock as seen from here: the offset of its `TIME` from the local clock. It gives each
 * consume script a deadline in Redis' own clock, by which the caller is still waiting: a script
 * Redis runs later (Redis stalled and then caught up) counts nothing, since its client has already
 * been answered 503 when the command timed out.
 */
export class RedisClock {
  private offsetMs: number | null = null;
  private errorMs = 0;

  constructor(private readonly timeoutMs: number) {}

  /**
   * Measures the offset with one `TIME`; a failed one keeps the last. A slow one (a busy event
   * loop, a gateway started under load) is kept only while none quicker is known: its deadline is
   * early by its error, never late. Ignored, it left consumes with no deadline at all, and a Redis
   * frozen then counted the requests answered 503 (test/scale/redis-stall.test.ts, 1 run in 5 on
   * a busy machine; test/store/redis-clock.test.ts).
   */
  async measure(time: () => Promise<Array<string | number>>): Promise<void> {
    const sent = localMs();
    const [seconds, micros] = await time();
    if (seconds === undefined || micros === undefined) return;
    const received = localMs();
    const rtt = received - sent;
    if (rtt > this.timeoutMs / 2) return;
    if (this.offsetMs !== null && rtt > Math.max(MAX_RTT_MS, this.errorMs * 2)) return;
    this.offsetMs = Number(seconds) * 1000 + Number(micros) / 1000 - (sent + received) / 2;
    this.errorMs = rtt / 2;
  }

  /** Whether a measurement has succeeded: until one does, consumes go without a deadline. */
  get known(): boolean {
    return this.offsetMs !== null;
  }

  /** Whether the offset is known from a quick measurement: until it is, it is measured again often. */
  get precise(): boolean {
    return this.offsetMs !== null && this.errorMs * 2 <= MAX_RTT_MS;
  }

  /** Unix ms in Redis' clock after which a consume sent now must not count; 0 while the offset is unknown. */
  deadline(): number {
    if (this.offsetMs === null) return 0;
    return Math.floor(localMs() + this.offsetMs + this.timeoutMs - this.errorMs - MARGIN_MS);
  }
}
