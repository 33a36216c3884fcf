/**
 * WebAuthn's ceremonies for passkeys (@simplewebauthn/server): the relying party is the portal's
 * own address (`portal.base_url`, or the listener's), never the request's `Host`. A challenge is
 * held by the store for 2 minutes and taken once, whichever gateway answers.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import type { PortalStore } from '../../store/store.js';
import type { PortalContext } from './context.js';

const CHALLENGE_MS = 2 * 60_000;
/** What the browser is asked to wait for the person, ms (within the challenge's life). */
export const CEREMONY_MS = 60_000;

export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingParty(c: PortalContext): RelyingParty {
  const base = new URL(c.baseUrl());
  return { id: base.hostname.replace(/^\[|\]$/g, ''), origin: base.origin, name: 'Fuel Price Gateway' };
}

export const newChallenge = (): string => randomBytes(32).toString('base64url');

/** Holds a challenge for one ceremony: `for` names whose (a session's registration, or any sign-in). */
export const holdChallenge = (store: PortalStore, forWhom: string, challenge: string): Promise<void> =>
  store.holdOnce('challenge', hashOf(`${forWhom}:${challenge}`), challenge, CHALLENGE_MS);

/** Whether the challenge was given for `forWhom` and not yet used; it is used up either way. */
export async function takeChallenge(store: PortalStore, forWhom: string, challenge: string): Promise<boolean> {
  return (await store.takeOnce('challenge', hashOf(`${forWhom}:${challenge}`))) === challenge;
}

const hashOf = (v: string): string => createHash('sha256').update(v).digest('base64url');

const b64url = z
  .string()
  .regex(/^[A-Za-z0-9_-]*$/)
  .max(16_384);

/** A browser's answer to `navigator.credentials.create`, as the script sends it. */
export const registrationSchema = z.object({
  id: b64url.min(1).max(1400),
  rawId: b64url,
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    transports: z
      .array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']))
      .max(8)
      .optional(),
  }),
  clientExtensionResults: z.object({}).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
}) satisfies z.ZodType<RegistrationResponseJSON, unknown>;

/** A browser's answer to `navigator.credentials.get`. */
export const authenticationSchema = z.object({
  id: b64url.min(1).max(1400),
  rawId: b64url,
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: b64url.optional(),
  }),
  clientExtensionResults: z.object({}).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
}) satisfies z.ZodType<AuthenticationResponseJSON, unknown>;

/** The challenge the browser signed, read from its client data; null when unreadable. */
export function signedChallenge(clientDataJSON: string): string | null {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    const parsed = z.object({ challenge: b64url.min(1).max(512) }).safeParse(data);
    return parsed.success ? parsed.data.challenge : null;
  } catch {
    return null;
  }
}
