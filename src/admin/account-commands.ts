/** The accounts' and keys' commands, in the order `--help` shows them. */

import { EXTERNAL_ID_FLAGS } from '../store/accounts/external-id-names.js';
import { burstOf, externalIds, graceBody, keyBody, listOptions, need, numberOrText, picked } from './cli-input.js';
import { type OperatorCommand, operation } from './command-table.js';

/** Where a `--help` line goes on (the column after `fuel-gateway `). */
export const MORE = `\n${' '.repeat(45)}`;

const account = (a: string | undefined): string => need(a, 'account id');
const key = (k: string | undefined): string => need(k, 'key id');

// Several commands change an account, each with its own body.
const patchAccount = operation({
  method: 'PATCH',
  path: '/admin/accounts/:id',
  status: 200,
  body: 'json',
  schema: (s) => ({ body: s.patchAccountInput, plan: true }),
  run: (ops, i) => ops.accounts.patchAccount(i.ids[0] as string, i.body, i.from),
});
const setStatus = (verb: string, status: string): OperatorCommand => ({
  words: ['accounts', verb],
  args: ['ID'],
  input: ({ args: [a] }) => ({ ids: [account(a)], body: { status } }),
  operation: patchAccount,
});

export const ACCOUNT_COMMANDS: readonly OperatorCommand[] = [
  {
    words: ['accounts', 'create'],
    args: [],
    options: ['plan', 'label', 'limit', 'anchor', 'status', ...EXTERNAL_ID_FLAGS],
    help: `accounts create --plan P [--label L] [--limit N] [--anchor ISO] [--status S]${MORE}[--stripe-customer cus_…] [--billing-subject S]`,
    input: ({ options }) => {
      const body: Record<string, unknown> = {
        plan: options.get('plan'),
        ...picked(options, ['label', 'anchor', 'status']),
      };
      if (options.has('limit')) body['limit'] = numberOrText(options.get('limit'));
      const ids = externalIds(options);
      if (Object.keys(ids).length > 0) body['external_ids'] = ids;
      return { body };
    },
    operation: operation({
      method: 'POST',
      path: '/admin/accounts',
      status: 201,
      body: 'json',
      schema: (s) => ({ body: s.createAccountInput, plan: true }),
      run: (ops, i) => ops.accounts.createAccount(i.body, i.from),
    }),
  },
  {
    words: ['accounts', 'list'],
    args: [],
    options: ['status', 'plan', 'label', 'limit', 'cursor'],
    help: 'accounts list [--status S] [--plan P] [--label L] [--limit N] [--cursor C]',
    input: ({ options }) => ({ query: listOptions(options) }),
    operation: operation({
      method: 'GET',
      path: '/admin/accounts',
      status: 200,
      schema: (s) => ({ query: s.listAccountsQuery }),
      run: (ops, i) => ops.accounts.listAccounts(i.query),
    }),
  },
  {
    words: ['accounts', 'show'],
    args: ['ID'],
    help: 'accounts show|disable|enable|delete ID',
    input: ({ args: [a] }) => ({ ids: [account(a)] }),
    operation: {
      method: 'GET',
      path: '/admin/accounts/:id',
      status: 200,
      // The account's portal members beside it: who can sign in for it, and when one last did.
      run: async (ops, i) => ({
        ...(await ops.accounts.showAccount(i.ids[0] as string)),
        ...(await ops.members.summary(i.ids[0] as string)),
        // Its Stripe subscription as the mirror last applied it (docs/billing.md).
        ...(await ops.stripe.summary(i.ids[0] as string)),
      }),
    },
  },
  setStatus('disable', 'inactive'),
  setStatus('enable', 'active'),
  {
    words: ['accounts', 'delete'],
    args: ['ID'],
    input: ({ args: [a] }) => ({ ids: [account(a)] }),
    operation: {
      method: 'DELETE',
      path: '/admin/accounts/:id',
      status: 200,
      run: (ops, i) => ops.accounts.deleteAccount(i.ids[0] as string, i.from),
    },
  },
  {
    words: ['accounts', 'rotate-key'],
    args: ['ID'],
    options: ['grace'],
    help: 'accounts rotate-key ID [--grace DURATION]   (an account with one key)',
    input: ({ args: [a], options }) => ({ ids: [account(a)], body: graceBody(options) }),
    operation: operation({
      method: 'POST',
      path: '/admin/accounts/:id/rotate-key',
      status: 200,
      body: 'optional',
      schema: (s) => ({ body: s.accountRotateInput }),
      run: (ops, i) => ops.accounts.rotateKey(i.ids[0] as string, i.body, i.from),
    }),
  },
  {
    words: ['keys', 'create'],
    args: ['ACCOUNT'],
    options: ['name', 'expires', 'scopes', 'allow'],
    help: 'keys create ACCOUNT --name N [--expires ISO|DURATION] [--scopes a,b] [--allow CIDR,…]',
    input: ({ args: [a], options }) => ({ ids: [account(a)], body: keyBody(options) }),
    operation: operation({
      method: 'POST',
      path: '/admin/accounts/:id/keys',
      status: 201,
      body: 'json',
      schema: (s) => ({ body: s.createKeyInput }),
      run: (ops, i) => ops.keys.create(i.ids[0] as string, i.body, i.from),
    }),
  },
  {
    words: ['keys', 'list'],
    args: ['ACCOUNT'],
    help: 'keys list ACCOUNT',
    input: ({ args: [a] }) => ({ ids: [account(a)] }),
    operation: {
      method: 'GET',
      path: '/admin/accounts/:id/keys',
      status: 200,
      run: (ops, i) => ops.keys.list(i.ids[0] as string),
    },
  },
  {
    words: ['keys', 'update'],
    args: ['ACCOUNT', 'KEY_ID'],
    options: ['name', 'expires', 'scopes', 'allow'],
    help: 'keys update ACCOUNT KEY_ID [--name N] [--expires ISO|DURATION|never] [--scopes a,b] [--allow CIDR,…|none]',
    input: ({ args: [a, k], options }) => ({ ids: [account(a), key(k)], body: keyBody(options) }),
    operation: operation({
      method: 'PATCH',
      path: '/admin/accounts/:id/keys/:key',
      status: 200,
      body: 'json',
      schema: (s) => ({ body: s.patchKeyInput }),
      run: (ops, i) => ops.keys.update(i.ids[0] as string, i.ids[1] as string, i.body, i.from),
    }),
  },
  {
    words: ['keys', 'revoke'],
    args: ['ACCOUNT', 'KEY_ID'],
    help: 'keys revoke ACCOUNT KEY_ID',
    input: ({ args: [a, k] }) => ({ ids: [account(a), key(k)] }),
    // The admin API answers 204; the CLI says what it revoked.
    print: (answer) => {
      const change = answer as { account: { id: string }; key: { id: string } };
      return { revoked: { account_id: change.account.id, key_id: change.key.id } };
    },
    operation: {
      method: 'DELETE',
      path: '/admin/accounts/:id/keys/:key',
      status: 204,
      run: (ops, i) => ops.keys.revoke(i.ids[0] as string, i.ids[1] as string, i.from),
    },
  },
  {
    words: ['keys', 'rotate'],
    args: ['ACCOUNT', 'KEY_ID'],
    options: ['grace'],
    help: 'keys rotate ACCOUNT KEY_ID [--grace DURATION]   (DURATION: 90s, 15m, 6h, 30d; default 0)',
    input: ({ args: [a, k], options }) => ({ ids: [account(a), key(k)], body: graceBody(options) }),
    operation: operation({
      method: 'POST',
      path: '/admin/accounts/:id/keys/:key/rotate',
      status: 201,
      body: 'optional',
      schema: (s) => ({ body: s.rotateInput }),
      run: (ops, i) => ops.keys.rotate(i.ids[0] as string, i.ids[1] as string, i.body, i.from),
    }),
  },
  {
    words: ['accounts', 'set-plan'],
    args: ['ID', 'PLAN'],
    options: ['limit'],
    help: "accounts set-plan ID PLAN [--limit N]   (without --limit, the plan's own allowance)",
    // Without --limit the account's own limit goes: the new plan's allowance applies.
    input: ({ args: [a, plan], options }) => {
      const body: Record<string, unknown> = { plan: need(plan, 'plan') };
      if (options.has('limit')) body['limit'] = numberOrText(options.get('limit'));
      return { ids: [account(a)], body };
    },
    operation: patchAccount,
  },
  {
    words: ['accounts', 'set-external-ids'],
    args: ['ID'],
    options: EXTERNAL_ID_FLAGS,
    help: `accounts set-external-ids ID [--stripe-customer cus_…] [--billing-subject S]${MORE}(sets those given, keeps the other; with neither, removes both)`,
    input: ({ args: [a], options }) => {
      const ids = externalIds(options);
      return { ids: [account(a)], body: { external_ids: Object.keys(ids).length > 0 ? ids : null } };
    },
    operation: patchAccount,
  },
  {
    words: ['accounts', 'set-burst'],
    args: ['ID', 'N/S|none'],
    help: "accounts set-burst ID N/S|none  (at most N requests in any S seconds; none: the plan's)",
    input: ({ args: [a, b] }) => ({ ids: [account(a)], body: { burst: burstOf(need(b, 'N/S or none')) } }),
    operation: patchAccount,
  },
  {
    words: ['accounts', 'grant'],
    args: ['ID', 'N'],
    options: ['note'],
    help: "accounts grant ID N [--note T]   (N more requests for the account's current period)",
    input: ({ args: [a, n], options }) => {
      const body: Record<string, unknown> = { requests: numberOrText(need(n, 'number of requests')) };
      if (options.has('note')) body['note'] = options.get('note');
      return { ids: [account(a)], body };
    },
    operation: operation({
      method: 'POST',
      path: '/admin/accounts/:id/grants',
      status: 201,
      body: 'json',
      schema: (s) => ({ body: s.grantInput }),
      run: (ops, i) => ops.accounts.grant(i.ids[0] as string, i.body, i.from),
    }),
  },
  {
    words: ['accounts', 'grants'],
    args: ['ID'],
    help: 'accounts grants ID       (its grants, each with its period)',
    input: ({ args: [a] }) => ({ ids: [account(a)] }),
    operation: {
      method: 'GET',
      path: '/admin/accounts/:id/grants',
      status: 200,
      run: (ops, i) => ops.accounts.listGrants(i.ids[0] as string),
    },
  },
];
