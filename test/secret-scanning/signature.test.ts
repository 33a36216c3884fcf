import { generateKeyPairSync, sign } from 'node:crypto';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { labelOf, parseReport } from '../../src/features/secret-scanning/report.js';
import { ReportSignatures } from '../../src/features/secret-scanning/signature.js';

// GitHub's own example from "Secret scanning partner program" (the validation sample): its public
// key, a payload and the signature GitHub made of it. Verifying it proves the format, not only
// agreement with ourselves.
const GITHUB_KEY_ID = '90a421169f0a406205f1563a953312f0be898d3c7b6c06b681aa86a874555f4a';
const GITHUB_PEM = [
  '-----BEGIN PUBLIC KEY-----',
  'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE9MJJHnMfn2+H4xL4YaPDA4RpJqUq',
  'kCmRCBnYERxZanmcpzQSXs1X/AljlKkbJ8qpVIW4clayyef9gWhFbNHWAA==',
  '-----END PUBLIC KEY-----',
  '',
].join('\n');
const GITHUB_PAYLOAD = Buffer.from('[{"token":"some_token","type":"some_type","url":"some_url"}]');
const GITHUB_SIGNATURE =
  'MEUCIQDKZokqnCjrRtw0tni+2Ltvl/uiMJ1EGumEsp1BsNr32AIgQY1YXD2nlj+XNfGK4rBfkMJ1JDOQcYXxa2sY8FNkrKc=';

t.test("GitHub's published example report verifies, and any change to it does not", async (t) => {
  const s = new ReportSignatures([{ key_identifier: GITHUB_KEY_ID, key: GITHUB_PEM }]);
  t.ok(s.verifies(GITHUB_KEY_ID, GITHUB_SIGNATURE, GITHUB_PAYLOAD));
  const changed = Buffer.from(GITHUB_PAYLOAD);
  changed.writeUInt8((changed.readUInt8(12) ^ 1) & 0xff, 12);
  t.notOk(s.verifies(GITHUB_KEY_ID, GITHUB_SIGNATURE, changed), 'one bit of the body changed');
  t.notOk(s.verifies('another-id', GITHUB_SIGNATURE, GITHUB_PAYLOAD), 'a key identifier not configured');
  t.notOk(s.verifies(GITHUB_KEY_ID, undefined, GITHUB_PAYLOAD), 'no signature');
  t.notOk(s.verifies(undefined, GITHUB_SIGNATURE, GITHUB_PAYLOAD), 'no identifier');
  t.notOk(s.verifies(GITHUB_KEY_ID, 'not base64!', GITHUB_PAYLOAD), 'not base64');
  t.notOk(s.verifies(GITHUB_KEY_ID, Buffer.from('not DER').toString('base64'), GITHUB_PAYLOAD), 'not DER');
  t.notOk(s.verifies(GITHUB_KEY_ID, `${GITHUB_SIGNATURE}, ${GITHUB_SIGNATURE}`, GITHUB_PAYLOAD), 'a header sent twice');
  t.notOk(s.verifies(GITHUB_KEY_ID, 'A'.repeat(4000), GITHUB_PAYLOAD), 'far too long');
});

t.test('a key pair of our own, signing as GitHub does: only its own key verifies it', async (t) => {
  const a = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const b = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = (k: typeof a) => k.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const s = new ReportSignatures([
    { key_identifier: 'a', key: pem(a) },
    { key_identifier: 'b', key: pem(b) },
  ]);
  const body = Buffer.from('[{"token":"x","type":"t","url":"u","source":"content"}]');
  const sig = sign('sha256', body, { key: a.privateKey, dsaEncoding: 'der' }).toString('base64');
  t.ok(s.verifies('a', sig, body));
  t.notOk(s.verifies('b', sig, body), "another configured key's identifier");
});

t.test("the config refuses public keys that are not P-256 PEMs, and takes GitHub's list as published", async (t) => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey.export({ type: 'spki', format: 'pem' });
  for (const key of ['not a key', String(rsa), String(p384)]) {
    t.throws(
      () => loadConfig({ env: {}, overrides: { secret_scanning: { public_keys: [{ key_identifier: 'k', key }] } } }),
      /secret_scanning\.public_keys\.0\.key: expected a PEM public key on the P-256 curve/,
    );
  }
  const config = loadConfig({
    env: {},
    overrides: {
      secret_scanning: { public_keys: [{ key_identifier: GITHUB_KEY_ID, key: GITHUB_PEM, is_current: true }] },
    },
  });
  t.equal(config.secret_scanning.public_keys.length, 1);
  t.equal(config.secret_scanning.action, 'revoke', 'revoke by default');
  t.equal(config.keys.expiry_warning_days, 7);
});

t.test("a report: GitHub's fields, at most 1000 tokens; the answer hashes each token", async (t) => {
  const one = { token: 'fpg_x', type: 'fuel_gateway_api_key', url: 'https://github.com/o/r', source: 'content' };
  t.same(parseReport(Buffer.from(JSON.stringify([one]))), [one]);
  t.same(
    parseReport(Buffer.from('[{"token":"a","type":"t"}]')),
    [{ token: 'a', type: 't', url: '', source: '' }],
    'older reports: no source',
  );
  t.same(parseReport(Buffer.from('[{"token":"a","type":"t","url":"u","source":"s","extra":1}]')), [
    { token: 'a', type: 't', url: 'u', source: 's' },
  ]);
  t.equal(parseReport(Buffer.from(JSON.stringify(Array(1000).fill(one)))).length, 1000);
  t.equal(parseReport(Buffer.from(JSON.stringify(Array(1001).fill(one)))), 'too_many_tokens');
  for (const bad of [
    '',
    'nope',
    '{}',
    '[]',
    '[{"type":"t"}]',
    '[{"token":"","type":"t"}]',
    '[1]',
    '[{"token":5,"type":"t"}]',
  ])
    t.equal(parseReport(Buffer.from(bad)), 'invalid_report', JSON.stringify(bad));
  t.same(labelOf({ ...one, token: 'abc' }, true), {
    token_hash: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    token_type: 'fuel_gateway_api_key',
    label: 'true_positive',
  });
  t.equal(labelOf(one, false).label, 'false_positive');
});
