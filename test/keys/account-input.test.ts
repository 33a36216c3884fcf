/**
 * The admin input of an account, derived from its record (store/accounts/account-record.ts): each
 * external id is checked against its format at creation and in a patch, as a JSON merge patch.
 */
import t from 'tap';
import { createAccountInput, grantInput, patchAccountInput } from '../../src/keys/accounts.js';
import { describeIssues } from '../../src/prices/price-set-schema.js';

const problems = (r: { success: boolean; error?: unknown }): string[] =>
  r.success ? [] : describeIssues(r.error as Parameters<typeof describeIssues>[0]);

t.test('each external id is checked against its format, at creation and in a patch', async (t) => {
  const ids = { stripe_customer: 'cus_NffrFeUfNV2Hib', billing_subject: 'acme-fleet' };
  t.same(createAccountInput.parse({ plan: 'starter', external_ids: ids }).external_ids, ids);
  t.same(problems(createAccountInput.safeParse({ plan: 'starter', external_ids: { stripe_customer: 'acme' } })), [
    'external_ids.stripe_customer: expected a Stripe customer id such as cus_NffrFeUfNV2Hib',
  ]);
  t.same(problems(patchAccountInput.safeParse({ external_ids: { billing_subject: 'has space' } })), [
    'external_ids.billing_subject: expected printable ASCII without spaces',
  ]);
  t.match(problems(createAccountInput.safeParse({ plan: 'starter', external_ids: { paypal: 'x' } })), [
    /external_ids: Unrecognized key/,
  ]);
  t.same(
    patchAccountInput.parse({ external_ids: { stripe_customer: null, billing_subject: 'b' } }).external_ids,
    { stripe_customer: null, billing_subject: 'b' },
    'in a patch, null removes one id',
  );
  t.equal(patchAccountInput.parse({ external_ids: null }).external_ids, null, 'and null removes them all');
  t.notOk(createAccountInput.safeParse({ plan: 'starter', external_ids: { stripe_customer: null } }).success);
});

t.test('the rest of the input is the record: defaults, status, limit, label and grants', async (t) => {
  t.same(createAccountInput.parse({ plan: 'starter' }), { plan: 'starter', label: '', status: 'active', limit: null });
  t.notOk(createAccountInput.safeParse({ plan: '' }).success, 'a plan is named');
  t.notOk(createAccountInput.safeParse({ plan: 'starter', status: 'paused' }).success);
  t.notOk(createAccountInput.safeParse({ plan: 'starter', limit: 0 }).success);
  t.same(problems(patchAccountInput.safeParse({ label: 'a\u0007b' })), [
    'label: expected no control characters (U+0000-U+001F, U+007F)',
  ]);
  t.same(problems(patchAccountInput.safeParse({})), [
    '(document): expected at least one of status, plan, limit, anchor, label, external_ids, burst, overage',
  ]);
  t.notOk(grantInput.safeParse({ requests: 0 }).success);
  t.notOk(grantInput.safeParse({ requests: 1_000_000_001 }).success);
  t.same(grantInput.parse({ requests: 5, note: null }), { requests: 5, note: null });
});
