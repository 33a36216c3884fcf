/**
 * The shapes the server core and the features share: a route as a feature hands it over, the
 * request in flight, the services a handler uses and the core's own state (built once). They refer
 * to one another (a route's handler takes the request, which knows its route), so they live in one
 * module that imports nothing of http/ but types: the rest of the core and every feature import
 * these, and no import runs back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { KeyHashes } from '../keys/key-hashes.js';
import type { InvalidKeyThrottle } from '../keys/throttle.js';
import type { AccessLog } from '../log/access.js';
import type { StoreOutageLog } from '../log/outage.js';
import type { Metrics, RouteMetrics } from '../metrics/gateway-metrics.js';
import type { PriceBook } from '../prices/book.js';
import type { Snapshot } from '../prices/snapshot.js';
import type { AnsweredAccount, HeldAccount, Meter } from '../quota/meter.js';
import type { KeyScope } from '../store/store.js';
import type { RequestSpan, Tracing } from '../telemetry/tracing.js';
import type { TrustedProxies } from './client.js';
import type { Compressed } from './encoding.js';
import type { ErrorKind } from './error-kinds.js';
import type { EntityTags } from './etag.js';
import type { PathItem } from './openapi.js';
import type { Target } from './request.js';
import type { HeaderLists } from './response-headers.js';

/**
 * The body a metered route sends once the request is counted, `head + usage + tail`, built
 * before the count (by `prepare`, once per price set and query).
 */
export interface MeteredBody {
  contentType: string;
  head: string;
  tail: string;
  /** Whether the per-request `usage` object goes between head and tail. */
  withUsage: boolean;
  /** UTF-8 length of head and tail (the usage object is ASCII: its length is its byte count). */
  bytes: number;
  /** Its compressed forms, for an answer of at least 1 KiB (encoding.ts `compressible`); null: sent as it is. */
  compressed: Compressed | null;
}

/** A route the core's metered pipeline (metered/index.ts) answers: key, throttle, prices, meter, answer. */
export interface MeteredRoute {
  kind: 'metered';
  /** Label for metrics and logs. */
  name: string;
  /**
   * Validates the query (the raw text after `?`, parsed only by routes that read it) and, for a
   * pattern route, the path, and picks the body; an error kind refuses the request before it
   * is counted.
   */
  prepare(search: string, snapshot: Snapshot, path: string, accept?: string): MeteredBody | ErrorKind;
  /**
   * Whether its answer has more than one media type, chosen by the request's `Accept` too (handed
   * to `prepare`): the history routes' CSV. Only these read the header.
   */
  negotiates?: boolean;
  /**
   * A request header (lower case) that carries the key too, beside `X-API-Key` and `api_key`:
   * FuelSA's clients send theirs in `key`.
   */
  keyHeader?: string;
  /**
   * Whether its answers carry the served price set's ETag and a matching If-None-Match gets a
   * 304 (etag.ts): the current endpoints.
   */
  conditional?: boolean;
}

/** A route its feature answers itself, with the core's pipeline API (metered/pipeline.ts) as it needs it. */
export interface HandlerRoute {
  kind: 'handler';
  /** Label for metrics and logs. */
  name: string;
  /** Answers a request whose path, CORS and method the core has already checked. */
  handle(x: Exchange, target: Target): void;
  /** The methods it answers (others get 405 naming these); absent: GET and HEAD. */
  methods?: readonly string[];
}

export type Route = MeteredRoute | HandlerRoute;

/**
 * What a feature hands the core (like a fastify route: path, handler, schema). The composition
 * root (app.ts) collects them from every feature and gives them to the listener.
 */
export interface RouteDef {
  /** An exact path; with `pattern`, an exact path or a prefix ending in `*`. */
  path: string;
  /**
   * Tried in order after the exact paths, and takes any exact path it covers (the pass-through's
   * `upstream.proxy_paths`).
   */
  pattern?: boolean;
  /** The path the API document lists it under, when not `path` (a pattern with a path parameter). */
  openapiPath?: string;
  /** How it is answered; null: described in the API document but not served here (404). */
  route: Route | null;
  /** Its entry in the OpenAPI document; none: not described (the page's assets, pass-through). */
  openapi?: PathItem;
  /** The key scope a route that takes a key needs (docs/api.md); the API document names it. */
  scope?: KeyScope;
}

/**
 * What a request's steps read of its route, built once when the listener is built (fastify's
 * per-route Context) and never changed: its metrics, its access-log line, its options.
 */
export interface RouteContext {
  readonly metrics: RouteMetrics;
  /** The access log's URL for `PATH?api_key=K`, the usual request (null for patterns and no route). */
  readonly plainKeyUrl: string | null;
  /** `MeteredRoute.keyHeader`: the other request header that carries the key, if any. */
  readonly keyHeader: string | undefined;
  /** `RouteDef.scope` as its bit (keys/gate.ts SCOPE_BIT); 0 for a route that takes no key. */
  readonly scope: number;
}

/** A served route in the route table: its context, and how it is answered. */
export interface RouteEntry extends RouteContext {
  /** The path, or the pattern of a pattern route. */
  readonly path: string;
  readonly route: Route;
}

export type InvalidKeyReason = 'missing' | 'malformed' | 'unknown' | 'throttled';

/**
 * The services a route's handler may use, as an unkey handler lists its services: it takes what
 * it needs by destructuring (`const { meter, clock } = x.services`). Built once per listener.
 */
export interface Services {
  meter: Meter;
  book: PriceBook;
  /** The ETag of what a snapshot serves. */
  etags: EntityTags;
  throttle: InvalidKeyThrottle;
  clock: Clock;
  headers: HeaderLists;
  log: Logger;
  /** False for a while after a request failed for the store, until one succeeds (/readyz). */
  storeReady(): boolean;
  /** Whether the store lost its data since start (/readyz says so). */
  storeDataLost(): boolean;
}

/**
 * The core's own state and settings, worked out once when the listener is built
 * (listener-context.ts): read by http/ alone, never by a feature (test/architecture/layers.test.ts).
 * Two fields change while it serves: `draining` and `storeFailedAt`.
 */
export interface ListenerCore {
  metrics: Metrics;
  routes: ReadonlyMap<string, RouteEntry>;
  /** Pattern routes, tried in order when no exact path matches. */
  patterns: readonly RouteEntry[];
  /** The context of requests that match no route (404, 400). */
  unmatched: RouteContext;
  keyHashes: KeyHashes<HeldAccount>;
  maxKeyLength: number;
  /** `server.max_headers`. */
  maxHeaders: number;
  /** The access log, or null when log.access is off. */
  access: AccessLog | null;
  /** store.on_error: allow. */
  failOpen: boolean;
  trustedProxies: TrustedProxies;
  invalidKeys: Record<InvalidKeyReason, { inc(): void }>;
  /** Set when the listener drains for shutdown: answers then close their connection. */
  draining: boolean;
  /** When (performance.now) a request last failed for the store, unless one has succeeded since. */
  storeFailedAt: number;
  /** The log of a store outage: once when it begins, summaries, once when it ends. */
  storeOutage: StoreOutageLog;
  /** `server.cors_origins`, or null when CORS is off. */
  corsOrigins: ReadonlySet<string> | null;
  /** `metering.count_not_modified`: a 304 on the current endpoints is counted like a 200. */
  countNotModified: boolean;
  /** Traces (telemetry/), or null when `telemetry.traces.enabled` is off. */
  tracing: Tracing | null;
}

/**
 * One request in flight, as every step sees it: what its answer, log line and metrics need.
 * What only the metered passes need (the key, the body, the ETag) is on their own request
 * (metered/count.ts `MeteredRequest`), so no step here reads a field an earlier step may not have set.
 */
export interface Exchange {
  /** What a handler may use. */
  readonly services: Services;
  /** The core's own: no feature reads it. */
  readonly core: ListenerCore;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly start: number;
  /** Its request id (request-id.ts): `X-Request-Id`, `req_id` in its log lines, `ref` in a 5xx body. */
  readonly id: string;
  /** The id as a JSON string, for the access log. */
  readonly idJson: string;
  /** Its SERVER span; null when traces are off. */
  readonly span: RequestSpan | null;
  /** Its route's context: the listener's `unmatched` until the route is found. */
  route: RouteContext;
  /** The account the request is answered for, once the meter names it: the access log names it. */
  account: AnsweredAccount | null;
  /** The client address, worked out at the first use (answer.ts `clientOf`). */
  address: string | null;
  /** The route's access-log URL, set once the request is known to be `PATH?api_key=K`. */
  loggedUrl: string | null;
}
