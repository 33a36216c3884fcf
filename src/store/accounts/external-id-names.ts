/**
 * The names of an account's ids in billing systems, without their formats (account-record.ts):
 * the CLI reads its flags from this list (`stripe_customer` is `--stripe-customer`) and its
 * `--help` loads no zod.
 */
export const EXTERNAL_ID_NAMES = ['stripe_customer', 'billing_subject'] as const;
export type ExternalIdName = (typeof EXTERNAL_ID_NAMES)[number];

/** An id's CLI flag, without its dashes. */
export const externalIdFlag = (name: ExternalIdName): string => name.replaceAll('_', '-');
export const EXTERNAL_ID_FLAGS: readonly string[] = EXTERNAL_ID_NAMES.map(externalIdFlag);
