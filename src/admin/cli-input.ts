/** The CLI's options as the admin API's bodies and queries: both are checked alike (run-operation.ts). */
import { readFileSync } from 'node:fs';
import { GatewayError } from '../failures.js';
import { EXTERNAL_ID_NAMES, externalIdFlag } from '../store/accounts/external-id-names.js';

/** `--limit 500` is a number; anything else goes to validation as given, which names the field. */
export const numberOrText = (v: string | undefined): unknown => (v !== undefined && /^\d+$/.test(v) ? Number(v) : v);

export function need(value: string | undefined, what: string): string {
  if (value === undefined) throw new GatewayError('BAD_REQUEST', `missing ${what}`);
  return value;
}

export function readJsonFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new GatewayError('BAD_REQUEST', `${file}: ${(e as Error).message}`);
  }
}

/** The options after --config, which every command takes: validation names any other it does not know. */
export function listOptions(options: Map<string, string>): Record<string, string> {
  return Object.fromEntries([...options].filter(([k]) => k !== 'config'));
}

/** The options named, those given, as they are. */
export function picked(options: Map<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((n) => (options.has(n) ? [[n, options.get(n) as string]] : [])));
}

/** The account's external ids from their flags (`--stripe-customer` for `stripe_customer`). */
export function externalIds(options: Map<string, string>): Record<string, string> {
  return Object.fromEntries(
    EXTERNAL_ID_NAMES.flatMap((n) => {
      const value = options.get(externalIdFlag(n));
      return value === undefined ? [] : [[n, value]];
    }),
  );
}

/** `10/1` as a burst limit (numbers are checked where the admin API checks them), `none` as null. */
export function burstOf(text: string): unknown {
  if (text === 'none') return null;
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m)
    throw new GatewayError(
      'BAD_REQUEST',
      `burst: expected N/S (N requests in any S seconds, e.g. 10/1) or none, not "${text}"`,
    );
  return { limit: Number(m[1]), window_s: Number(m[2]) };
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `15m`, `6h`, `30d` (or plain seconds) as seconds; anything else as given, for validation to name. */
function seconds(v: string): unknown {
  const m = /^(\d+)([smhd]?)$/.exec(v);
  return m ? Number(m[1]) * (UNITS[m[2] || 's'] as number) : v;
}

export function graceBody(options: Map<string, string>): Record<string, unknown> {
  const grace = options.get('grace');
  return grace === undefined ? {} : { grace_s: seconds(grace) };
}

/** A key's options as the admin API's body: `--expires` a time, a duration from now, or `never`. */
export function keyBody(options: Map<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const list = (v: string): string[] => v.split(',').filter((s) => s !== '');
  if (options.has('name')) body['name'] = options.get('name');
  const expires = options.get('expires');
  if (expires !== undefined) {
    const s = seconds(expires);
    body['expires_at'] =
      expires === 'never' ? null : typeof s === 'number' ? new Date(Date.now() + s * 1000).toISOString() : expires;
  }
  if (options.has('scopes')) body['scopes'] = list(options.get('scopes') as string);
  const allow = options.get('allow');
  if (allow !== undefined) body['allowed_cidrs'] = allow === 'none' ? [] : list(allow);
  return body;
}
