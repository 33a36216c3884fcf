/**
 * The pass-through path for `upstream.proxy_paths`: the same front door as http/metered/ (key,
 * throttle, store, error table), then src/upstream/proxy.ts has the origin answer. The request
 * is counted before it is forwarded and taken back when the origin fails it. HEAD counts too:
 * it costs the origin a whole request, charged to the gateway's own key.
 */

import type { Exchange } from '../../http/core-types.js';
import {
  answerLimited,
  countThen,
  crashed,
  keyOf,
  REQUEST_ID_HEADER,
  rateFields,
  rateHeaders,
  record,
  refuse,
  type Target,
  warnOfExpiry,
} from '../../http/metered/pipeline.js';
import type { MeterResult } from '../../quota/meter.js';
import { usageJson } from '../../quota/usage.js';
import type { RequestSpan } from '../../telemetry/tracing.js';
import { hasBody, isSafeProxyPath } from '../../upstream/admission.js';
import type { PassThrough } from '../../upstream/cache/cache.js';
import type { ForwardSpec } from '../../upstream/forward-spec.js';

type Counted = Extract<MeterResult, { kind: 'ok' }>;

/** A `proxy_paths` entry (its name, the metrics label) and the cache in front of the origin. */
export interface ProxyRoute {
  name: string;
  proxy: PassThrough;
}

export function proxied(x: Exchange, route: ProxyRoute, target: Target): void {
  const key = keyOf(x, target.search);
  if (key === null) return;
  // A path the origin would read as another one, or a body (which could reach the origin as a
  // second, smuggled request on a shared connection), is refused before anything is counted.
  if (!isSafeProxyPath(target.path) || hasBody(x.req))
    return void refuse(x, key.hash, 'bad_request').catch((err: unknown) => crashed(x, err));
  // null: store.on_error: allow serves a key known here as active unmetered, as on the own routes.
  countThen(x, key, (counted) => {
    if (counted !== null && counted.kind !== 'ok') return answerLimited(x, counted);
    if (counted !== null) warnOfExpiry(x);
    forward(x, route, target, counted).catch((err: unknown) => crashed(x, err));
  });
}

/**
 * Has the cache or the origin answer; a counted request that does not end in a success is
 * refunded, and its answer shows the count after the refund.
 */
async function forward(x: Exchange, route: ProxyRoute, target: Target, counted: Counted | null): Promise<void> {
  // The answer is written by the cache or the origin's stream: the id goes on `res` now, and on
  // to the origin, so that its log can be joined to ours.
  x.res.setHeader(REQUEST_ID_HEADER, x.id);
  x.req.headers['x-request-id'] = x.id;
  const status = await route.proxy.forward(x.req, x.res, new Forwarded(x, route, target, counted));
  record(x, status);
}

/**
 * What the cache (or the origin's stream) needs of one admitted request. A class, so that a hit
 * makes one object and no closure: the refunded rate headers and the refund itself are worked
 * out only for an answer that is not a success.
 */
class Forwarded implements ForwardSpec {
  readonly route: string;
  readonly path: string;
  readonly search: string;
  readonly usage: string;
  readonly headers: Array<string | number>;
  readonly requestIdJson: string;
  readonly span: RequestSpan | null;

  constructor(
    private readonly x: Exchange,
    proxyRoute: ProxyRoute,
    target: Target,
    private readonly counted: Counted | null,
  ) {
    this.route = proxyRoute.name;
    this.path = target.path;
    this.search = target.search;
    this.usage = counted ? usageJson(counted.entry, counted.used, counted.entry.allowance.limit) : 'null';
    this.headers = this.rate(counted?.used ?? 0);
    this.requestIdJson = x.idJson;
    this.span = x.span;
  }

  get refunded(): Array<string | number> {
    return this.rate((this.counted?.used ?? 1) - 1);
  }

  onFailure(): void {
    const { counted } = this;
    if (!counted) return;
    const { meter, log } = this.x.services;
    meter
      .refund(counted.entry, counted.day)
      .catch((err: unknown) =>
        log.warn(
          { err, account: counted.entry.account.id, req_id: this.x.id },
          'refund failed: a failed pass-through stays counted',
        ),
      );
  }

  private rate(used: number): Array<string | number> {
    const { counted } = this;
    return counted ? rateHeaders(rateFields(counted.entry, used, this.x.services.clock.now(), counted.burst)) : [];
  }
}
