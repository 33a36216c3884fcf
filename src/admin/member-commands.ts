/** The portal's members and sign-ups, for operators: `fuel-gateway members …`, `fuel-gateway signups …`. */
import { need } from './cli-input.js';
import { type OperatorCommand, operation } from './command-table.js';

const account = (a: string | undefined): string => need(a, 'account id');
const email = (e: string | undefined): string => need(e, 'email');
const signUp = (id: string | undefined): string => need(id, 'sign-up id');

export const MEMBER_COMMANDS: readonly OperatorCommand[] = [
  {
    words: ['members', 'list'],
    args: ['ACCOUNT'],
    help: 'members list ACCOUNT',
    input: ({ args: [a] }) => ({ ids: [account(a)] }),
    operation: {
      method: 'GET',
      path: '/admin/accounts/:id/members',
      status: 200,
      run: (ops, i) => ops.members.list(i.ids[0] as string),
    },
  },
  {
    words: ['members', 'add'],
    args: ['ACCOUNT', 'EMAIL'],
    options: ['role'],
    help: 'members add ACCOUNT EMAIL [--role owner|developer]   (default developer)',
    input: ({ args: [a, e], options }) => ({
      ids: [account(a)],
      body: { email: email(e), ...(options.has('role') ? { role: options.get('role') } : {}) },
    }),
    operation: operation({
      method: 'POST',
      path: '/admin/accounts/:id/members',
      status: 201,
      body: 'json',
      schema: (s) => ({ body: s.memberInput }),
      run: (ops, i) => ops.members.add(i.ids[0] as string, i.body, i.from),
    }),
  },
  {
    words: ['members', 'remove'],
    args: ['ACCOUNT', 'EMAIL'],
    help: 'members remove ACCOUNT EMAIL   (never the last owner)',
    input: ({ args: [a, e] }) => ({ ids: [account(a), email(e)] }),
    // The admin API answers 204; the CLI prints whom it removed.
    operation: {
      method: 'DELETE',
      path: '/admin/accounts/:id/members/:email',
      status: 204,
      run: (ops, i) => ops.members.remove(i.ids[0] as string, i.ids[1] as string, i.from),
    },
  },
  {
    words: ['signups', 'list'],
    args: [],
    help: 'signups list                 (portal.signup: approval; oldest first)',
    input: () => ({}),
    operation: { method: 'GET', path: '/admin/signups', status: 200, run: (ops) => ops.signups.list() },
  },
  {
    words: ['signups', 'approve'],
    args: ['ID'],
    help: 'signups approve|reject ID    (approve: an account on portal.signup_plan, the person its owner)',
    input: ({ args: [id] }) => ({ ids: [signUp(id)] }),
    operation: {
      method: 'POST',
      path: '/admin/signups/:id/approve',
      status: 201,
      run: (ops, i) => ops.signups.approve(i.ids[0] as string, i.from),
    },
  },
  {
    words: ['signups', 'reject'],
    args: ['ID'],
    input: ({ args: [id] }) => ({ ids: [signUp(id)] }),
    operation: {
      method: 'POST',
      path: '/admin/signups/:id/reject',
      status: 200,
      run: (ops, i) => ops.signups.reject(i.ids[0] as string, i.from),
    },
  },
];
