/**
 * What every pass-through answer shares, streamed (proxy.ts) or from the cache (cache/): the
 * headers dropped and added.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

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
export const ANSWER_DROPPED = [...HOP_BY_HOP, 'set-cookie'];
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
