/**
 * The hook the Redis counting store calls for each metering script call (one per batch of
 * requests): null unless traces are on (sdk.ts sets it). Each request answered from a call's
 * reply links its span to the call's (`delivering`), since many requests share one call and a
 * span per request would lie about it.
 */
export interface StoreCallSpan {
  end(error: Error | null): void;
}

export const storeCalls: {
  /** Starts the CLIENT span of one script call of `size` requests. */
  start: ((operation: string, size: number) => StoreCallSpan) | null;
  /** The call whose replies are being handed out now (synchronously), else null. */
  delivering: StoreCallSpan | null;
} = { start: null, delivering: null };
