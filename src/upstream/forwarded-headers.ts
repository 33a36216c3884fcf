/**
 * What every pass-through answer shares, streamed (proxy.ts) or from the cache (cache/): the
 * headers dropped and added; and the headers of a request passed on as it came (proxy.ts).
 */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { canonicalIp, type TrustedProxies } from '../http/client.js';

// Connection-level headers are not forwarded (RFC 9110 7.6.1); Set-Cookie would tie the client
// to the gateway's own session at the origin.
export const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];
// The answer's X-Request-Id is the gateway's (http/request-id.ts), never the origin's.
export const ANSWER_DROPPED = [...HOP_BY_HOP, 'set-cookie', 'x-request-id'];
/** Metered answers carry the caller's usage: never stored by anyone downstream. */
export const BASE = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
export const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;

/**
 * The origin's headers as passed on: without hop-by-hop ones, Set-Cookie and `drop`, then ours.
 * They were checked for the service key (key-guard.ts) before.
 */
export function passedHeaders(
  origin: IncomingHttpHeaders,
  drop: string[],
  added: OutgoingHttpHeaders,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(origin)) {
    if (value === undefined || ANSWER_DROPPED.includes(name) || drop.includes(name)) continue;
    out[name] = value;
  }
  return { ...out, ...BASE, ...added };
}

export function headerObject(pairs: Array<string | number>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) out[String(pairs[i]).toLowerCase()] = pairs[i + 1];
  return out;
}

/** A client's request headers as the origin gets them: its key replaced by the service key, X-Forwarded-* ours. */
export function rewriteHeaders(req: IncomingMessage, trusted: TrustedProxies, serviceKey: string): void {
  const h = req.headers;
  const peer = canonicalIp(req.socket.remoteAddress ?? '') ?? '';
  // Only a trusted proxy's X-Forwarded-* are kept; anyone else's are the client's claims.
  const fromProxy = trusted.has(peer);
  const chain = fromProxy && typeof h['x-forwarded-for'] === 'string' ? `${h['x-forwarded-for']}, ${peer}` : peer;
  const proto = fromProxy && typeof h['x-forwarded-proto'] === 'string' ? h['x-forwarded-proto'] : 'http';
  const host = fromProxy && typeof h['x-forwarded-host'] === 'string' ? h['x-forwarded-host'] : (h.host ?? '');
  const usedHeader = h['x-api-key'] !== undefined;
  for (const name of [
    ...HOP_BY_HOP,
    'expect',
    'content-length',
    'x-api-key',
    // FuelSA's clients send their key in `key`: it is theirs, never the origin's to see.
    'key',
    'forwarded',
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-forwarded-host',
    'x-forwarded-port',
  ])
    delete h[name];
  if (usedHeader) h['x-api-key'] = serviceKey;
  h['x-forwarded-for'] = chain;
  h['x-forwarded-proto'] = proto;
  h['x-forwarded-host'] = host;
  // A body we must read to add `usage` is easiest uncompressed; one that still comes compressed is decoded.
  h['accept-encoding'] = 'identity';
}
