import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import type { Logger } from 'pino';
import type { TrustedProxies } from '../http/client.js';
import { type ErrorAnswer, type ErrorKind, kindForStatus } from '../http/error-kinds.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { OriginSpan } from '../telemetry/tracing.js';
import { injectUsage, MAX_ERROR_BYTES, MAX_JSON_BYTES, read, specErrorBody } from './bodies.js';
import { type ForwardSpec, ownErrorBody } from './forward-spec.js';
import { ANSWER_DROPPED, BASE, headerObject, JSON_TYPE, passedHeaders, rewriteHeaders } from './forwarded-headers.js';
import { type Checked, KeyEchoed, KeyGuard, RefusalLog } from './key-guard.js';
import { originBase, type UpstreamConfig } from './origin.js';

/** One pass-through in flight. */
interface InFlight {
  spec: ForwardSpec;
  added: OutgoingHttpHeaders;
  refunded: OutgoingHttpHeaders;
  started: number;
  timer: NodeJS.Timeout;
  proxyReq: ClientRequest | null;
  /** The origin try's span, once it is sent (traces on). */
  originSpan: OriginSpan | null;
  /** The origin's status, or what went wrong before it answered (metrics label). */
  outcome: string;
  /**
   * The 2xx whose head is out (0: none). From then on an answer the client stops (it hangs up,
   * or reads too slowly to finish within timeout_ms) stays counted; one the origin fails does not.
   */
  writing: number;
  settled: boolean;
  resolve(status: number): void;
}

/** The parts of an OriginProxy: its constructor's options. */
export interface OriginProxyOptions {
  cfg: UpstreamConfig;
  agent: Agent;
  errors: Record<ErrorKind, ErrorAnswer>;
  trusted: TrustedProxies;
  metrics: Metrics;
  log: Logger;
}

/**
 * Pass-through to the origin with http-proxy-3. The client's key is replaced by the service
 * key; the answer is read here (selfHandleResponse) so that it is checked for the service key
 * before any of it is passed on (key-guard.ts), a JSON success gets the gateway's `usage`, and
 * every failure (origin error, unreachable, too slow, the key echoed) is reported through
 * `onFailure` so the request is not counted.
 */
export class OriginProxy {
  private readonly proxy: ProxyServer;
  private readonly pending = new WeakMap<IncomingMessage, InFlight>();
  private readonly base: string;
  private readonly guard: KeyGuard;
  private readonly refusals: RefusalLog;

  constructor(private readonly o: OriginProxyOptions) {
    const { cfg, agent, log } = o;
    this.base = originBase(cfg);
    this.guard = new KeyGuard(cfg.api_key);
    this.refusals = new RefusalLog(log);
    // No proxyTimeout: it surfaces as a bare ECONNRESET, indistinguishable from a refused
    // connection; our own timer tells 504 from 502.
    this.proxy = createProxyServer({
      agent,
      selfHandleResponse: true,
      changeOrigin: true,
      ignorePath: true,
      xfwd: false,
    });
    this.proxy.on('proxyReq', (proxyReq, req) => {
      const x = this.pending.get(req);
      // A request that waited in the agent's queue past its answer (504, or the client left)
      // must not be sent now: it would hold an origin connection nobody waits for.
      if (!x || x.settled) return void proxyReq.destroy();
      x.proxyReq = proxyReq;
      if (x.spec.span !== null) x.originSpan = x.spec.span.originTry(proxyReq, this.base + x.spec.path);
    });
    this.proxy.on('proxyRes', (proxyRes, req, res) => this.answer(proxyRes, req, res));
    // The callback passed to web() reports request errors; this covers anything else.
    this.proxy.on('error', (err) => this.o.log.warn({ err: err.message }, 'pass-through error'));
  }

  /**
   * Forwards an admitted request; resolves with the status written, or 0 when it was not counted
   * after all: nothing was written, or the origin failed the answer after its head went out.
   */
  forward(req: IncomingMessage, res: ServerResponse, spec: ForwardSpec): Promise<number> {
    return new Promise((resolve) => {
      const x: InFlight = {
        spec,
        added: headerObject(spec.headers),
        refunded: headerObject(spec.refunded),
        started: performance.now(),
        timer: setTimeout(() => this.timedOut(x, res), this.o.cfg.timeout_ms),
        proxyReq: null,
        originSpan: null,
        outcome: 'unreachable',
        writing: 0,
        settled: false,
        resolve,
      };
      this.pending.set(req, x);
      // The client left: counted if a success was under way (http-proxy-3 ends the origin request).
      res.once('close', () => this.settle(x, x.writing, x.writing !== 0));
      rewriteHeaders(req, this.o.trusted, this.o.cfg.api_key);
      try {
        this.proxy.web(req, res, { target: this.base + this.originTarget(spec) }, () =>
          this.fail(x, res, 'upstream_unavailable', 'unreachable'),
        );
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message }, 'pass-through could not be sent');
        this.fail(x, res, 'upstream_unavailable', 'unreachable');
      }
    });
  }

  /** The path and query sent to the origin: the client's key parameter replaced by the service key. */
  private originTarget(spec: ForwardSpec): string {
    const params = new URLSearchParams(spec.search);
    params.delete('api_key');
    params.append('api_key', this.o.cfg.api_key);
    return `${spec.path}?${params}`;
  }

  private answer(proxyRes: IncomingMessage, req: IncomingMessage, res: ServerResponse): void {
    const x = this.pending.get(req);
    if (!x || x.settled) return void proxyRes.resume();
    const status = proxyRes.statusCode ?? 502;
    x.outcome = String(status);
    if (status === 401) {
      // The origin refused the gateway's own key: the client's request was fine, the gateway is misconfigured.
      proxyRes.resume();
      this.o.log.error({ route: x.spec.route }, 'the origin refused the service key (upstream.api_key)');
      return this.fail(x, res, 'upstream_unavailable', '401');
    }
    if (status >= 400) return this.originError(x, proxyRes, res, status);
    if (this.guard.inHeaders(proxyRes.headers, ANSWER_DROPPED)) return this.refuse(x, res, 'key');
    const success = status >= 200 && status < 300;
    // Read whole up to a bound, so that an answer carrying the key is refused before any of it is out.
    read(proxyRes, MAX_JSON_BYTES, (chunks, state) => {
      if (x.settled) return;
      if (state === 'cut') return this.fail(x, res, 'upstream_unavailable', 'cut');
      if (state === 'too_large') return this.stream(x, proxyRes, res, status, chunks, success);
      this.whole(x, req, proxyRes, res, Buffer.concat(chunks), success);
    });
  }

  /** An answer read whole and checked: a JSON success with our `usage` as its last key, anything else as it came. */
  private whole(
    x: InFlight,
    req: IncomingMessage,
    proxyRes: IncomingMessage,
    res: ServerResponse,
    raw: Buffer,
    success: boolean,
  ): void {
    const status = proxyRes.statusCode ?? 502;
    const encoding = proxyRes.headers['content-encoding'];
    const found = this.guard.inBody(raw, encoding);
    if (found !== false) return this.refuse(x, res, found === null ? 'unreadable' : 'key');
    const json = success && req.method === 'GET' && JSON_TYPE.test(proxyRes.headers['content-type'] ?? '');
    const injected = json ? injectUsage(raw, encoding, x.spec.usage) : null;
    // Not a JSON object (an array, text, CSV …): passed on as it came. An answer without a body
    // (HEAD, 204, 304) keeps the origin's Content-Length: it tells the length of the body not sent.
    const bodiless = req.method === 'HEAD' || status === 204 || status === 304;
    const drop = injected !== null ? ['content-encoding', 'content-length'] : bodiless ? [] : ['content-length'];
    const headers = passedHeaders(proxyRes.headers, drop, success ? x.added : x.refunded);
    const body = injected ?? raw;
    if (drop.length > 0) headers['content-length'] = Buffer.byteLength(body);
    if (success) x.writing = status;
    res.writeHead(status, headers);
    res.end(body, () => this.settle(x, status, success));
  }

  /** An error status from the origin: its body when it is the spec's error body, else ours. Not counted. */
  private originError(x: InFlight, proxyRes: IncomingMessage, res: ServerResponse, status: number): void {
    read(proxyRes, MAX_ERROR_BYTES, (chunks, state) => {
      if (x.settled) return;
      // The rest of an oversized error body is not worth reading: that connection is dropped.
      if (state === 'complete') proxyRes.resume();
      else x.proxyReq?.destroy();
      const own = state === 'complete' ? specErrorBody(Buffer.concat(chunks)) : null;
      if (own !== null && this.guard.carries(own)) return this.refuse(x, res, 'key');
      const body = own ?? ownErrorBody(this.o.errors[kindForStatus(status)].body, status, x.spec);
      res.writeHead(status, {
        ...BASE,
        ...x.refunded,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body, () => this.settle(x, status, false));
    });
  }

  /**
   * An answer too large to read whole passes through as it comes, with our headers added, checked
   * on the way (KeyGuard.watch): on the key the connection is cut, and the request given back.
   * One whose Content-Encoding would have to be undone to check it is refused.
   */
  private stream(
    x: InFlight,
    proxyRes: IncomingMessage,
    res: ServerResponse,
    status: number,
    already: Buffer[],
    success: boolean,
  ): void {
    if ((proxyRes.headers['content-encoding'] ?? 'identity').trim().toLowerCase() !== 'identity')
      return this.refuse(x, res, 'unreadable');
    // The key within what was read already is still a clean 502; past it, only a cut connection.
    if (this.guard.carries(Buffer.concat(already).toString('utf8'))) return this.refuse(x, res, 'key');
    res.writeHead(status, passedHeaders(proxyRes.headers, [], success ? x.added : x.refunded));
    if (success) x.writing = status;
    // The origin's fault: settled (given back) before the cut, which would read as the client leaving.
    const cut = (outcome: string): void => {
      x.outcome = outcome;
      this.settle(x, 0, false);
      x.proxyReq?.destroy();
      res.destroy();
    };
    const checked = this.guard.watch(already);
    checked.on('error', (err) => {
      if (err instanceof KeyEchoed) this.refusals.note(x.spec.route, status, 'key');
      cut('key_echoed');
    });
    proxyRes.on('error', () => cut('cut'));
    proxyRes.on('aborted', () => cut('cut'));
    res.once('finish', () => this.settle(x, status, success));
    proxyRes.pipe(checked).pipe(res);
  }

  /** The origin's answer carries the service key, or cannot be read to tell: never passed on (502, not counted). */
  private refuse(x: InFlight, res: ServerResponse, why: Exclude<Checked, 'clean'>): void {
    this.refusals.note(x.spec.route, Number(x.outcome), why);
    this.fail(x, res, 'upstream_unavailable', why === 'key' ? 'key_echoed' : 'unreadable');
  }

  /**
   * timeout_ms has passed. A success with written bytes the client has not taken is a client too
   * slow to read it: cut, and counted. Otherwise the origin is late: 504, or a cut, given back.
   */
  private timedOut(x: InFlight, res: ServerResponse): void {
    if (x.writing === 0 || res.writableLength === 0) return this.fail(x, res, 'upstream_timeout', 'timeout');
    this.settle(x, x.writing, true);
    res.destroy();
  }

  /** No usable answer from the origin: our error body, or a cut connection once headers are out. */
  private fail(x: InFlight, res: ServerResponse, kind: ErrorKind, outcome: string): void {
    if (x.settled) return;
    x.outcome = outcome;
    x.proxyReq?.destroy();
    if (res.headersSent) {
      this.settle(x, 0, false);
      return void res.destroy();
    }
    const e = this.o.errors[kind];
    const body = ownErrorBody(e.body, e.status, x.spec);
    res.writeHead(e.status, {
      ...BASE,
      ...x.refunded,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    this.settle(x, e.status, false);
  }

  private settle(x: InFlight, status: number, success: boolean): void {
    if (x.settled) return;
    x.settled = true;
    clearTimeout(x.timer);
    x.originSpan?.end(/^\d+$/.test(x.outcome) ? Number(x.outcome) : 0, x.outcome);
    if (!success) x.spec.onFailure();
    this.o.metrics.observeUpstream(x.spec.route, x.outcome, (performance.now() - x.started) / 1000);
    x.resolve(status);
  }

  close(): void {
    this.proxy.close();
  }
}
