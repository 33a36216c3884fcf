/**
 * The schemas of the secret-scanning report and its answer (features/secret-scanning), in
 * GitHub's partner format: GitHub sends token, type, url, source and reads token_hash,
 * token_type, label.
 */
type Json = Record<string, unknown>;

const EXAMPLE_TOKEN = 'fpg_EXAMPLEexampleEXAMPLEexampleEXAMP0123AQ';
const EXAMPLE_HASH = '5b3c5f0f1d8b6f0e7d2a9c4b1e6f3a8d0c7b2e5f9a4d1c8b3e6f0a7d2c9b4e1f';

export const leakSchemas: Record<string, Json> = {
  LeakReport: {
    type: 'array',
    minItems: 1,
    maxItems: 1000,
    items: {
      type: 'object',
      required: ['token', 'type'],
      properties: {
        token: { type: 'string', description: 'The secret found.' },
        type: { type: 'string', description: 'The token type registered with GitHub.' },
        url: { type: 'string', description: 'Where it was found.' },
        source: { type: 'string', description: 'What kind of place: content, commit, pull_request_description, …' },
      },
    },
    examples: [
      [
        {
          token: EXAMPLE_TOKEN,
          type: 'fuel_gateway_api_key',
          url: 'https://github.com/o/r/blob/abc/.env',
          source: 'content',
        },
      ],
    ],
  },
  LeakLabels: {
    type: 'array',
    items: {
      type: 'object',
      required: ['token_hash', 'token_type', 'label'],
      additionalProperties: false,
      properties: {
        token_hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the token, hex.' },
        token_type: { type: 'string', description: 'The type the report gave.' },
        label: { enum: ['true_positive', 'false_positive'], description: 'true_positive: it was a live key.' },
      },
    },
    examples: [[{ token_hash: EXAMPLE_HASH, token_type: 'fuel_gateway_api_key', label: 'true_positive' }]],
  },
};
