import type { Browser, Page } from 'playwright-core';
import { newPage } from './browser.js';

export interface WithAuthenticator {
  page: Page;
  errors: string[];
  /** The credentials the page's virtual authenticator holds. */
  credentials(): Promise<Array<{ credentialId: string; signCount: number }>>;
}

/** A fresh page whose browser has a virtual platform authenticator (DevTools' WebAuthn domain) that says yes. */
export async function pageWithAuthenticator(browser: Browser, width?: number): Promise<WithAuthenticator> {
  const { context, page, errors } = await newPage(browser, width);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    page,
    errors,
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
  };
}

export interface Assertion {
  id: string;
  rawId: string;
  type: string;
  response: Record<string, string | undefined>;
  clientExtensionResults: Record<string, never>;
}

/** The page's authenticator signs `challenge` (base64url) for any of its passkeys, as a browser would send it. */
export const assertion = (page: Page, challenge: string, rpId: string): Promise<Assertion> =>
  page.evaluate(
    async ([c, rp]) => {
      const bytes = (s: string) =>
        Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (ch) =>
          ch.charCodeAt(0),
        );
      const text = (buf: ArrayBuffer) =>
        btoa(String.fromCharCode(...new Uint8Array(buf)))
          .replace(/\+/g, '-')
          .replace(/\//g, '_')
          .replace(/=+$/, '');
      const cred = (await navigator.credentials.get({
        publicKey: { challenge: bytes(c), rpId: rp, userVerification: 'preferred' },
      })) as PublicKeyCredential;
      const r = cred.response as AuthenticatorAssertionResponse;
      return {
        id: cred.id,
        rawId: text(cred.rawId),
        type: cred.type,
        response: {
          clientDataJSON: text(r.clientDataJSON),
          authenticatorData: text(r.authenticatorData),
          signature: text(r.signature),
          userHandle: r.userHandle ? text(r.userHandle) : undefined,
        },
        clientExtensionResults: {},
      };
    },
    [challenge, rpId] as const,
  );
