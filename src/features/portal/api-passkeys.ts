/**
 * Passkeys (docs/portal.md): a signed-in person adds one (a registration ceremony) and later
 * signs in with it instead of an emailed link (an authentication ceremony). A challenge works
 * once, for 2 minutes, for the session (registration) or the sign-in it was given to; a
 * passkey's counter only moves up; a passkey is found by its credential id and signs in its
 * own person only.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Exchange } from '../../http/core-types.js';
import { clientOf, failRetry } from '../../http/metered/pipeline.js';
import type { Passkey } from '../../store/store.js';
import { type ApiHandler, fields } from './acting.js';
import type { PortalContext } from './context.js';
import { empty, isForm, json, readBody, refuse } from './http.js';
import { sameOrigin, startSession } from './sessions.js';
import { firstAccount, throttled } from './sign-in.js';
import {
  authenticationSchema,
  CEREMONY_MS,
  holdChallenge,
  registrationSchema,
  relyingParty,
  signedChallenge,
  takeChallenge,
} from './webauthn.js';

// Loaded at the first passkey request: importing @simplewebauthn/server costs every start ~0.25 s.
let webauthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
const ceremonies = (): Promise<typeof import('@simplewebauthn/server')> =>
  (webauthn ??= import('@simplewebauthn/server'));

const view = (p: Passkey) => ({
  id: p.id,
  name: p.name,
  created_at: p.created_at,
  last_used_at: p.last_used_at ?? null,
});
/** The person's handle at the authenticator: stable (one credential per authenticator), and not the address itself. */
const userIdOf = (email: string) => Uint8Array.from(createHash('sha256').update(email).digest());
const nowIso = (x: Exchange): string => new Date(x.services.clock.now()).toISOString();
const registerFor = (sessionHash: string): string => `register:${sessionHash}`;

export const listPasskeys: ApiHandler = async (x, c, a) =>
  json(x, 200, { passkeys: (await c.deps.store.passkeys(a.session.email)).map(view) });

export const registrationOptions: ApiHandler = async (x, c, a) => {
  const rp = relyingParty(c);
  const mine = await c.deps.store.passkeys(a.session.email);
  const options = await (await ceremonies()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: a.session.email,
    userID: userIdOf(a.session.email),
    timeout: CEREMONY_MS,
    attestationType: 'none',
    excludeCredentials: mine.map((p) => ({ id: p.id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
  await holdChallenge(c.deps.store, registerFor(a.hash), options.challenge);
  json(x, 200, options);
};

const addBody = z.object({ name: z.string().trim().min(1).max(64).default('passkey'), response: registrationSchema });

export const addPasskey: ApiHandler = async (x, c, a, _params, body) => {
  const input = addBody.safeParse(fields(body));
  if (!input.success) return refuse(x, 'bad_request');
  const { response, name } = input.data;
  const challenge = signedChallenge(response.response.clientDataJSON);
  if (challenge === null || !(await takeChallenge(c.deps.store, registerFor(a.hash), challenge)))
    return refuse(x, 'invalid_passkey');
  const rp = relyingParty(c);
  const verified = await (await ceremonies())
    .verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    })
    .catch(() => null);
  if (verified === null || !verified.verified) return refuse(x, 'invalid_passkey');
  const { credential } = verified.registrationInfo;
  const passkey: Passkey = {
    id: credential.id,
    email: a.session.email,
    public_key: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ?? [],
    name,
    created_at: nowIso(x),
  };
  if (!(await c.deps.store.addPasskey(passkey)))
    return json(x, 409, { success: false, message: 'This passkey is registered already.' });
  json(x, 201, { passkey: view(passkey) });
};

export const removePasskey: ApiHandler = async (x, c, a, [id = '']) => {
  if (!(await c.deps.store.removePasskey(a.session.email, id))) return refuse(x, 'not_found');
  if (isForm(x.req)) return empty(x, 303, ['Location', '/portal/']);
  empty(x, 204);
};

/** Whether a signed-out ceremony may go on: the sign-in throttle, and the portal's own origin (else answered). */
function admitted(x: Exchange, c: PortalContext): boolean {
  const blockedMs = x.services.throttle.blockedFor(throttled(clientOf(x)));
  if (blockedMs > 0) failRetry(x, 'throttled', Math.ceil(blockedMs / 1000));
  else if (!sameOrigin(x, c.config.base_url)) refuse(x, 'forbidden');
  else return true;
  return false;
}

/** `POST /portal/api/passkey-sign-in/options`: a challenge for any passkey of this relying party. */
export async function signInOptions(x: Exchange, c: PortalContext): Promise<void> {
  if (!admitted(x, c)) return;
  // Each ceremony counts as a sign-in request: challenges are not minted without end.
  x.services.throttle.fail(throttled(clientOf(x)));
  const rp = relyingParty(c);
  const options = await (await ceremonies()).generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'preferred',
    timeout: CEREMONY_MS,
  });
  await holdChallenge(c.deps.store, 'sign-in', options.challenge);
  json(x, 200, options);
}

const signInBody = z.object({ response: authenticationSchema });

/** `POST /portal/api/passkey-sign-in {response}`: the session cookie, or 400 `invalid_passkey` setting nothing. */
export async function passkeySignIn(x: Exchange, c: PortalContext): Promise<void> {
  if (!admitted(x, c)) return;
  const input = signInBody.safeParse(await readBody(x));
  if (!input.success) return refuse(x, 'bad_request');
  const { response } = input.data;
  const { store } = c.deps;
  const challenge = signedChallenge(response.response.clientDataJSON);
  if (challenge === null || !(await takeChallenge(store, 'sign-in', challenge))) return refuse(x, 'invalid_passkey');
  const passkey = await store.passkey(response.id);
  if (passkey === null) return refuse(x, 'invalid_passkey');
  const rp = relyingParty(c);
  const verified = await (await ceremonies())
    .verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.id,
        publicKey: Uint8Array.from(Buffer.from(passkey.public_key, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: false,
    })
    .catch(() => null);
  if (verified === null || !verified.verified) return refuse(x, 'invalid_passkey');
  const at = nowIso(x);
  if (!(await store.usePasskey(passkey.id, verified.authenticationInfo.newCounter, at)))
    return refuse(x, 'invalid_passkey');
  const accountId = await firstAccount(c, passkey.email);
  if (accountId === null) return refuse(x, 'invalid_passkey');
  await store.markSignIn(accountId, passkey.email, at);
  const session = await startSession(x, store, passkey.email, accountId);
  json(x, 200, { success: true }, ['Set-Cookie', session.cookie]);
}

/** Its routes that need a session (api.ts checks it, its origin and CSRF token). */
const CREDENTIAL = '([A-Za-z0-9_-]{1,1400})';
export const PASSKEY_ROUTES = [
  { method: 'GET', path: /^passkeys$/, run: listPasskeys },
  { method: 'POST', path: /^passkeys\/options$/, run: registrationOptions },
  { method: 'POST', path: /^passkeys$/, run: addPasskey },
  { method: 'DELETE', path: new RegExp(`^passkeys/${CREDENTIAL}$`), run: removePasskey },
  { method: 'POST', path: new RegExp(`^passkeys/${CREDENTIAL}/delete$`), run: removePasskey },
] as const;

/** Its routes for a person signed out. */
export const SIGNED_OUT_ROUTES: Record<string, (x: Exchange, c: PortalContext) => Promise<void>> = {
  'POST passkey-sign-in/options': signInOptions,
  'POST passkey-sign-in': passkeySignIn,
};
