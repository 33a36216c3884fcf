/** Where an operator command's input meets its entry's schemas, for the admin router and the CLI alike. */
import type { Config } from '../config/config-schema.js';
import type { AdminOperation, CommandInput, RawInput } from './command-table.js';
import { accountInput, parse } from './input.js';
import * as schemas from './input-schemas.js';
import type { Operations } from './operations.js';

/**
 * Runs a table entry's operation on its input, checked by the entry's schemas (command-table.ts):
 * the one place where both doors, the admin router and the CLI, validate an operation's body and
 * query. An operation reading no body is given `{}` (a rotation's default grace).
 */
export function runOperation(ops: Operations, operation: AdminOperation<unknown, unknown>, raw: RawInput): unknown {
  return operation.run(ops, checkedInput(operation, raw, ops.accounts.plans));
}

function checkedInput(
  { schema: named, body: reads }: AdminOperation<unknown, unknown>,
  raw: RawInput,
  plans: Config['plans'],
): CommandInput<unknown, unknown> {
  if (named === undefined) return raw;
  const schema = named(schemas);
  const body = reads === 'optional' ? (raw.body ?? {}) : raw.body;
  return {
    ...raw,
    // The query first: a request wrong in both is answered about its query, as before.
    query: schema.query === undefined ? raw.query : parse(schema.query, raw.query),
    body:
      schema.body === undefined
        ? raw.body
        : schema.plan
          ? accountInput(schema.body, body, plans)
          : parse(schema.body, body),
  };
}
