/**
 * What the gateway's code sees of tracing: these interfaces only. The OpenTelemetry SDK behind
 * them (sdk.ts) is imported only when `telemetry.traces.enabled` (start.ts): with traces off,
 * `ListenerContext.tracing` is null, a request pays one null check, and no SDK module is loaded.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';

/** What a request's SERVER span is given when it is answered. */
export interface RequestFacts {
  method: string;
  /** The route's path or pattern (`http.route`); null: no route matched. */
  route: string | null;
  /** The request target's path, without the query. */
  path: string;
  status: number;
  client: string;
  plan: string | null;
  /** X-Cache of a pass-through answer. */
  cache: string | null;
}

/** A sampled request's SERVER span (an unsampled request has none: null). */
export interface RequestSpan {
  /** How the request ended when not served: an error kind (error-kinds.ts); null: served. */
  outcome: string | null;
  /** The trace id, for exemplars. */
  readonly traceId: string;
  /** A CLIENT span for one try of the origin; `traceparent` and `tracestate` are set on `to`. */
  originTry(to: ClientRequest, url: string): OriginSpan;
  end(facts: RequestFacts): void;
}

export interface OriginSpan {
  /** `status` 0: no answer (`error` says why). */
  end(status: number, error?: string): void;
}

/** A CLIENT span of an outgoing delivery (webhook, billing) or poll not tied to a request. */
export interface ClientCall {
  end(status: number, error?: string): void;
}

export interface Tracing {
  /** `telemetry.exemplars`: a sampled request's trace id is kept on its latency bucket. */
  readonly exemplars: boolean;
  /**
   * Decides whether a request is sampled and starts its span if so; null when not.
   * `fromTrustedProxy`: whether its peer is one of `server.trusted_proxies`, whose `traceparent` is
   * continued; asked only when it matters (the core knows the proxies, this layer does not).
   */
  request(req: IncomingMessage, fromTrustedProxy: () => boolean): RequestSpan | null;
  /** A CLIENT span of one outgoing HTTP call (webhook or billing delivery, origin poll). */
  call(name: string, url: string, attributes: Record<string, string | number>): ClientCall;
  /** Spans dropped so far because the export queue was full. */
  dropped(): number;
  shutdown(): Promise<void>;
}
