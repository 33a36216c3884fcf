/** The passkey routes of `/portal/openapi.json` (openapi-doc.ts). */

const json = (schema: object) => ({ 'application/json': { schema } });
const ok = (description: string, schema?: object) =>
  schema ? { description, content: json(schema) } : { description };
const csrf = { name: 'X-CSRF-Token', in: 'header', required: true, schema: { type: 'string' } };
const str = { type: 'string' };
const passkey = {
  type: 'object',
  properties: { id: str, name: str, created_at: str, last_used_at: { type: ['string', 'null'] } },
  required: ['id', 'name', 'created_at', 'last_used_at'],
};
const ceremony = (what: string) => ({
  type: 'object',
  description: `The ${what} of @simplewebauthn/browser's JSON (byte fields base64url)`,
});
const refused = ok('The challenge used, expired or not given; a signature or counter that does not hold');

export const PASSKEY_PATHS = {
  '/passkeys': {
    get: {
      summary: "The person's passkeys",
      responses: {
        200: ok('Passkeys', { type: 'object', properties: { passkeys: { type: 'array', items: passkey } } }),
      },
    },
    post: {
      summary: 'Add a passkey: the answer of navigator.credentials.create to the options of /passkeys/options',
      parameters: [csrf],
      requestBody: {
        content: json({
          type: 'object',
          properties: { name: str, response: ceremony('RegistrationResponse') },
          required: ['response'],
        }),
      },
      responses: {
        201: ok('Added', { type: 'object', properties: { passkey } }),
        400: refused,
        409: ok('Registered already'),
      },
    },
  },
  '/passkeys/options': {
    post: {
      summary: 'Start adding a passkey: a challenge for this session, for 2 minutes, once',
      parameters: [csrf],
      responses: { 200: ok('PublicKeyCredentialCreationOptionsJSON', ceremony('creation options')) },
    },
  },
  '/passkeys/{credential_id}': {
    delete: {
      summary: 'Remove a passkey of the person',
      parameters: [csrf, { name: 'credential_id', in: 'path', required: true, schema: str }],
      responses: { 204: ok('Removed'), 404: ok('No such passkey of this person') },
    },
  },
  '/passkey-sign-in/options': {
    post: {
      security: [],
      summary: 'Start a sign-in with a passkey: a challenge, for 2 minutes, once',
      responses: {
        200: ok('PublicKeyCredentialRequestOptionsJSON', ceremony('request options')),
        403: ok('A foreign Origin'),
        429: ok('Too many sign-in requests from this address'),
      },
    },
  },
  '/passkey-sign-in': {
    post: {
      security: [],
      summary: 'Sign in with the answer of navigator.credentials.get: sets the fpg_session cookie',
      requestBody: {
        content: json({
          type: 'object',
          properties: { response: ceremony('AuthenticationResponse') },
          required: ['response'],
        }),
      },
      responses: { 200: ok('Signed in'), 400: refused, 403: ok('A foreign Origin') },
    },
  },
};
