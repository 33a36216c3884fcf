/** The portal's members and sign-ups, for operators: `fuel-gateway members …`. */
import { need } from './cli-input.js';
import { type OperatorCommand, operation } from './command-table.js';

const account = (a: string | undefined): string => need(a, 'account id');
const email = (e: string | undefined): string => need(e, 'email');

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
];
