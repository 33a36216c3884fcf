/**
 * The schemas an operator command's entry names for its input (command-table.ts `schema`), in
 * one module the entries reach by type only: `--help` reads the table without loading zod, and
 * input.ts, which checks the input, loads them.
 */

export { createAccountInput, grantInput, patchAccountInput } from '../keys/accounts.js';
export { accountRotateInput, createKeyInput, patchKeyInput, rotateInput } from '../keys/api-keys.js';
export { memberInput } from '../keys/members.js';
export { publishInput } from '../prices/price-set-schema.js';
export { failuresQuery, noQuery, retryInput } from './billing-routes.js';
export { cancelParams, purgeInput } from './input.js';
export { listAccountsQuery } from './list-query.js';
export { exportInput } from './usage-query.js';
export { createWebhookInput, deliveriesQuery } from './webhook-routes.js';
