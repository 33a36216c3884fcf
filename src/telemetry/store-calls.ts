/**
 * The hook the Redis counting store calls for each metering script call (one per batch of
 * requests). Each sampled request answered from a call's reply links its span to the call's,
 * since many requests share one call and a span per request would lie about it. The call's span
 * is made only when a sampled request asks for it (`linked`), with the call's start time: a call
 * that answered no sampled request costs one clock read and makes no span.
 */
export interface StoreCallSpan {
  end(error: Error | null): void;
}

type Start = (operation: string, size: number, startedAt: number) => StoreCallSpan;

/** The call whose replies are being handed out now (synchronously), and its span once made. */
let operation = '';
let size = 0;
let startedAt = 0;
let delivering = false;
let span: StoreCallSpan | null = null;

export const storeCalls = {
  /** Makes a call's CLIENT span: set by sdk.ts when traces are on, else null. */
  start: null as Start | null,

  /** When a call is sent: its start time (epoch ms) when traces are on, else 0. */
  sentAt(): number {
    return storeCalls.start === null ? 0 : performance.timeOrigin + performance.now();
  },

  /** The call's replies are being handed out now. */
  delivering(op: string, n: number, at: number): void {
    operation = op;
    size = n;
    startedAt = at;
    delivering = at > 0;
  },

  /** The replies are handed out: ends the call's span if a request asked for one. */
  delivered(error: Error | null): void {
    delivering = false;
    const made = span;
    span = null;
    made?.end(error);
  },

  /** The span of the call being delivered, made on the first ask; null when none is. */
  linked(): StoreCallSpan | null {
    if (!delivering || storeCalls.start === null) return null;
    span ??= storeCalls.start(operation, size, startedAt);
    return span;
  },
};
