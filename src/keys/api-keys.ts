import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { KEY_SCOPES, MAX_ALLOWED_CIDRS, storedKeySchema } from '../store/keys/key.js';
import type { ApiKey, KeyPatch, StoredKey } from '../store/store.js';
import { isoInstant } from './instant.js';
import { generateKey, hashKey } from './key-generator.js';

/** The longest grace a rotation gives the old key: 30 days, as the issue and Unkey agree. */
export const MAX_GRACE_S = 2_592_000;

/**
 * A CIDR in the form ipaddr.js reads back: IPv4 `a.b.c.d/n` or IPv6 `x::/n`, normalised (an
 * address without a length is one host), so an allowlist compares the same on every gateway.
 */
const cidr = z.string().transform((s, ctx) => {
  const text = s.includes('/') ? s : `${s}/${s.includes(':') ? 128 : 32}`;
  try {
    // ipaddr.js also reads octal, hex and short IPv4 forms (010.0.0.1 is 8.0.0.1) and zone ids:
    // only the dotted-decimal and plain IPv6 forms operators mean are taken.
    const address = text.slice(0, text.indexOf('/'));
    if (isIP(address) === 0 || address.includes('%')) throw new Error('not a plain address');
    const [addr, bits] = ipaddr.parseCIDR(text);
    // An IPv4-mapped range is its IPv4 range: requests from mapped peers are matched as IPv4.
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
      return `${(addr as ipaddr.IPv6).toIPv4Address().toString()}/${bits - 96}`;
    return `${addr.toString()}/${bits}`;
  } catch {
    ctx.addIssue({ code: 'custom', message: `expected an IPv4 or IPv6 CIDR such as 203.0.113.0/24, got "${s}"` });
    return z.NEVER;
  }
});

const isControl = (c: number): boolean => c <= 0x1f || c === 0x7f;
const { shape } = storedKeySchema;
const keyName = shape.name.refine((s) => ![...s].some((ch) => isControl(ch.charCodeAt(0))), {
  message: 'expected no control characters (U+0000-U+001F, U+007F)',
});
const scopes = shape.scopes
  .min(1, `expected at least one of ${KEY_SCOPES.join(', ')}`)
  .transform((s) => KEY_SCOPES.filter((x) => s.includes(x)));
const allowedCidrs = z
  .array(cidr)
  .max(MAX_ALLOWED_CIDRS)
  .transform((l) => [...new Set(l)]);

export const createKeyInput = z.strictObject({
  name: keyName,
  expires_at: isoInstant.nullable().optional(),
  scopes: scopes.optional(),
  allowed_cidrs: allowedCidrs.optional(),
});

export const patchKeyInput = z
  .strictObject({
    name: keyName.optional(),
    expires_at: isoInstant.nullable().optional(),
    scopes: scopes.optional(),
    allowed_cidrs: allowedCidrs.optional(),
  })
  .refine((p) => Object.keys(p).length > 0, {
    message: 'expected at least one of name, expires_at, scopes, allowed_cidrs',
  });

export const rotateInput = z.strictObject({
  grace_s: z.number().int().min(0).max(MAX_GRACE_S).default(0),
});

/**
 * An account's `rotate-key`: `key_id`, when given, names the key the caller means (as the
 * per-key route does), so that a retry of a rotation already made is refused, whatever its grace.
 */
export const accountRotateInput = rotateInput.extend({
  key_id: z
    .string()
    .regex(/^key_[0-9a-f]{16}$/, 'expected a key id such as key_0123456789abcdef')
    .optional(),
});

export type CreateKeyInput = z.infer<typeof createKeyInput>;
export type PatchKeyInput = z.infer<typeof patchKeyInput>;
export type RotateInput = z.infer<typeof rotateInput>;
export type AccountRotateInput = z.infer<typeof accountRotateInput>;

/** A new key and its record: the key is shown once, the record keeps its hash and last 4 characters. */
export function newKey(
  input: Pick<ApiKey, 'name'> & Omit<KeyPatch, 'name'>,
  now: number,
): { stored: StoredKey; apiKey: string } {
  const apiKey = generateKey();
  const stored: StoredKey = {
    id: `key_${randomBytes(8).toString('hex')}`,
    name: input.name,
    created_at: new Date(now).toISOString(),
    expires_at: input.expires_at == null ? null : new Date(Date.parse(input.expires_at)).toISOString(),
    scopes: input.scopes ?? [...KEY_SCOPES],
    allowed_cidrs: input.allowed_cidrs ?? [],
    last_used_on: null,
    hint: apiKey.slice(-4),
    key_hash: hashKey(apiKey),
  };
  return { stored, apiKey };
}

/** A key as operators see it: never its hash; `expired` says whether it still works. */
export type KeyView = ApiKey & { expired: boolean };

export function publicKey(k: StoredKey, now: number): KeyView {
  return {
    id: k.id,
    name: k.name,
    created_at: k.created_at,
    expires_at: k.expires_at,
    expired: k.expires_at !== null && Date.parse(k.expires_at) <= now,
    scopes: [...k.scopes],
    allowed_cidrs: [...k.allowed_cidrs],
    last_used_on: k.last_used_on,
    hint: k.hint,
  };
}
