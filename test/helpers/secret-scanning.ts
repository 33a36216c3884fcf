import { generateKeyPairSync, sign } from 'node:crypto';
import type { TestGateway } from './gateway.js';

export const SECRET_SCANNING = '/fuel-api/secret-scanning';

/** A key pair of the test's own, standing in for GitHub's, and reports signed with it as GitHub signs. */
export interface GithubSigner {
  /** The entry for `secret_scanning.public_keys`. */
  publicKey: { key_identifier: string; key: string };
  /** GitHub's headers for exactly these bytes: ECDSA P-256, SHA-256, DER, base64. */
  headers(body: string | Buffer): Record<string, string>;
}

export function githubSigner(keyIdentifier = 'test-github-key'): GithubSigner {
  const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    publicKey: {
      key_identifier: keyIdentifier,
      key: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    },
    headers: (body) => ({
      'Content-Type': 'application/json',
      'Github-Public-Key-Identifier': keyIdentifier,
      'Github-Public-Key-Signature': sign('sha256', Buffer.from(body), {
        key: pair.privateKey,
        dsaEncoding: 'der',
      }).toString('base64'),
    }),
  };
}

/** One reported match, as GitHub sends it. */
export const match = (token: string, url = 'https://github.com/example/erp/blob/4d1e0c/.env', source = 'content') => ({
  token,
  type: 'fuel_gateway_api_key',
  url,
  source,
});

/** POSTs a report (a body, or matches to serialise) with the headers given. */
export async function postReport(
  gw: TestGateway,
  body: string | object[],
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; json: unknown }> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const r = await gw.get(SECRET_SCANNING, { method: 'POST', headers, body: text });
  const raw = await r.text();
  let json: unknown = raw;
  try {
    json = JSON.parse(raw);
  } catch {
    // kept as text
  }
  return { status: r.status, headers: r.headers, json };
}
