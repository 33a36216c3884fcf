/**
 * The stored records keep their format byte for byte, so an upgrade (or a rollback) keeps every
 * account, key and grant: the Redis account hash's fields and the memory state file's accounts
 * are compared with literal copies of what this release writes.
 */
import t from 'tap';
import { stateSchema } from '../../src/store/memory/state-schema.js';
import { decodeAccount, encodeAccount, encodePatch, pairsToRecord } from '../../src/store/redis/codec.js';
import type { StoredAccount } from '../../src/store/store.js';

const HASH = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);

/** An account with every field a record can hold. */
const full: StoredAccount = {
  id: 'acct_0123456789abcdef',
  status: 'active',
  plan: 'business',
  limit: 5000,
  anchor: '2026-11-01T00:00:00+02:00',
  label: 'Acme Fleet',
  created_at: '2026-11-01T00:00:00.000Z',
  revision: 7,
  external_ids: { stripe_customer: 'cus_NffrFeUfNV2Hib', billing_subject: 'acme-fleet' },
  burst: { limit: 10, window_s: 60 },
  overage: { max_percent: 20 },
  keys: [
    {
      id: 'key_0123456789abcdef',
      name: 'default',
      created_at: '2026-11-01T00:00:00.000Z',
      expires_at: null,
      scopes: ['prices', 'history', 'usage', 'passthrough'],
      allowed_cidrs: [],
      last_used_on: '2026-11-20',
      hint: 'wxyz',
      key_hash: HASH,
    },
    {
      id: 'key_fedcba9876543210',
      name: 'ci',
      created_at: '2026-11-02T00:00:00.000Z',
      expires_at: '2027-01-01T00:00:00.000Z',
      scopes: ['prices'],
      allowed_cidrs: ['203.0.113.0/24'],
      last_used_on: null,
      hint: null,
      key_hash: OTHER,
    },
  ],
  grants: [
    {
      id: 'grant_0123456789abcdef',
      requests: 500,
      note: 'goodwill',
      period_id: '1761948000000',
      period_started_at: '2026-11-01T00:00:00+02:00',
      created_at: '2026-11-03T10:00:00.000Z',
    },
  ],
};

const KEYS_JSON =
  '[{"id":"key_0123456789abcdef","name":"default","created_at":"2026-11-01T00:00:00.000Z","expires_at":null,' +
  '"scopes":["prices","history","usage","passthrough"],"allowed_cidrs":[],"last_used_on":"2026-11-20","hint":"wxyz",' +
  `"key_hash":"${HASH}"},{"id":"key_fedcba9876543210","name":"ci","created_at":"2026-11-02T00:00:00.000Z",` +
  '"expires_at":"2027-01-01T00:00:00.000Z","scopes":["prices"],"allowed_cidrs":["203.0.113.0/24"],' +
  `"last_used_on":null,"hint":null,"key_hash":"${OTHER}"}]`;

const GRANTS_JSON =
  '[{"id":"grant_0123456789abcdef","requests":500,"note":"goodwill","period_id":"1761948000000",' +
  '"period_started_at":"2026-11-01T00:00:00+02:00","created_at":"2026-11-03T10:00:00.000Z"}]';

t.test('the Redis account hash holds the same fields, with the same bytes, as this release writes', async (t) => {
  t.same(encodeAccount(full), [
    ...['id', 'acct_0123456789abcdef', 'status', 'active', 'plan', 'business'],
    ...['anchor', '2026-11-01T00:00:00+02:00', 'label', 'Acme Fleet'],
    ...['created_at', '2026-11-01T00:00:00.000Z', 'revision', '7', 'keys', KEYS_JSON],
    ...['key_hash', HASH, 'limit', '5000'],
    ...['external_ids', '{"stripe_customer":"cus_NffrFeUfNV2Hib","billing_subject":"acme-fleet"}'],
    ...['burst', '{"limit":10,"window_s":60}', 'overage', '{"max_percent":20}', 'grants', GRANTS_JSON],
  ]);
  const bare: StoredAccount = { ...full, limit: null, keys: [], revision: 1 };
  for (const field of ['external_ids', 'burst', 'overage', 'grants'] as const) delete bare[field];
  t.same(
    encodeAccount(bare),
    [
      ...['id', 'acct_0123456789abcdef', 'status', 'active', 'plan', 'business'],
      ...['anchor', '2026-11-01T00:00:00+02:00', 'label', 'Acme Fleet'],
      ...['created_at', '2026-11-01T00:00:00.000Z', 'revision', '1', 'keys', '[]'],
    ],
    'an absent field, an empty key list and a null limit write no field',
  );
  t.same(encodeAccount({ ...bare, external_ids: {}, grants: [] }), encodeAccount(bare), 'nor do empty ids or grants');
});

t.test('the Redis account hash reads back whole, each external id and every other field', async (t) => {
  t.same(decodeAccount(pairsToRecord(encodeAccount(full))), full);
  for (const ids of [{ stripe_customer: 'cus_A1' }, { billing_subject: 'only-subject' }]) {
    const one = { ...full, external_ids: ids };
    t.same(decodeAccount(pairsToRecord(encodeAccount(one)))?.external_ids, ids, Object.keys(ids).join());
  }
  const written = pairsToRecord(encodeAccount(full));
  t.same(
    decodeAccount({ ...written, external_ids: '{"stripe_customer":"cus_A1","unknown":"x"}', burst: 'not json' }),
    (({ external_ids: _i, burst: _b, ...rest }) => rest)(full),
    'a damaged JSON field reads as absent',
  );
});

t.test('a Redis patch writes the same fields as this release', async (t) => {
  t.same(
    encodePatch({
      status: 'inactive',
      plan: 'starter',
      limit: null,
      anchor: '2026-12-01T00:00:00Z',
      label: 'x',
      external_ids: { billing_subject: 'acme' },
      burst: null,
      overage: { max_percent: 5 },
    }),
    {
      status: 'inactive',
      plan: 'starter',
      limit: null,
      anchor: '2026-12-01T00:00:00Z',
      label: 'x',
      external_ids: '{"billing_subject":"acme"}',
      burst: null,
      overage: '{"max_percent":5}',
    },
  );
  t.same(encodePatch({ limit: 10, external_ids: {}, burst: { limit: 1, window_s: 1 } }), {
    limit: '10',
    external_ids: null,
    burst: '{"limit":1,"window_s":1}',
  });
  t.same(encodePatch({ external_ids: null }), { external_ids: null });
});

t.test('the memory state file reads back an account with the same bytes, in the same field order', async (t) => {
  const grant = full.grants?.[0];
  // As the file holds it: the fields in the order this release writes them.
  const text =
    '{"id":"acct_0123456789abcdef","status":"active","plan":"business","limit":5000,' +
    '"anchor":"2026-11-01T00:00:00+02:00","label":"Acme Fleet","created_at":"2026-11-01T00:00:00.000Z",' +
    `"revision":7,"keys":${KEYS_JSON},` +
    '"external_ids":{"stripe_customer":"cus_NffrFeUfNV2Hib","billing_subject":"acme-fleet"},' +
    `"burst":{"limit":10,"window_s":60},"overage":{"max_percent":20},"grants":${GRANTS_JSON}}`;
  const state = (accounts: unknown[]) => ({ version: 1, accounts, prices: [], counters: [] });
  const parsed = stateSchema.parse(state([JSON.parse(text)]));
  t.equal(JSON.stringify(parsed.accounts[0]), text, 'read back field for field, in order');

  const legacy = { ...JSON.parse(text), key_hash: HASH };
  delete legacy.keys;
  t.same(stateSchema.parse(state([legacy])).accounts[0]?.key_hash, HASH, 'a file from before several keys reads');
  for (const [field, value] of [
    ['external_ids', { stripe_customer: 'cus_A1', other: 'x' }],
    ['status', 'paused'],
    ['limit', 0],
    ['grants', [{ ...grant, requests: 0 }]],
    ['colour', 'red'],
  ] as const) {
    const damaged = { ...JSON.parse(text), [field]: value };
    t.notOk(stateSchema.safeParse(state([damaged])).success, `a damaged ${field} refuses the file`);
  }
  for (const id of ['stripe_customer', 'billing_subject'] as const) {
    const one = { ...JSON.parse(text), external_ids: { [id]: 'x y' } };
    t.same(stateSchema.parse(state([one])).accounts[0]?.external_ids, { [id]: 'x y' }, `${id} alone reads`);
  }
});
