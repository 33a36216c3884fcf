import { createPublicKey, type KeyObject, verify } from 'node:crypto';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// A DER ECDSA P-256 signature is at most 72 bytes; anything longer is not one.
const MAX_SIGNATURE_CHARS = 100;

/**
 * GitHub's secret-scanning signatures: ECDSA P-256 with SHA-256 over the raw body, DER, base64,
 * made with the key the report names. The keys are parsed once, at start (the config has
 * checked them).
 */
export class ReportSignatures {
  private readonly keys: ReadonlyMap<string, KeyObject>;

  constructor(publicKeys: ReadonlyArray<{ key_identifier: string; key: string }>) {
    this.keys = new Map(publicKeys.map((k) => [k.key_identifier, createPublicKey(k.key)]));
  }

  /** True only for a signature of exactly these bytes by the named key. */
  verifies(identifier: string | undefined, signature: string | undefined, body: Buffer): boolean {
    const key = identifier === undefined ? undefined : this.keys.get(identifier);
    if (key === undefined || signature === undefined) return false;
    if (signature.length > MAX_SIGNATURE_CHARS || !BASE64.test(signature)) return false;
    try {
      return verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
    } catch {
      // A signature that is not DER at all.
      return false;
    }
  }
}
