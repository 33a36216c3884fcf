/**
 * What the portal is handed by the composition root (assemble/portal-builder.ts): the admin API's
 * own operations, so a change made here is the same change, audited, announced and raising the
 * same events. The portal imports none of them (features do not import admin/).
 */
import type { CreateKeyInput, KeyView, PatchKeyInput, RotateInput } from '../../keys/api-keys.js';
import type { Usage } from '../../quota/usage.js';
import type { PortalStore } from '../../store/store.js';

/** Sends a sign-in link to an address (by SMTP, or printed on the console). */
export type SendLink = (to: string, link: string) => Promise<void>;

export interface PortalAccounts {
  /** Makes an account on `plan` for a sign-up (the admin API's create): its id, and its first key's secret. */
  signUp(plan: string, from: string): Promise<{ id: string; api_key: string }>;
  /** The account's id and plan; null once it is gone. */
  find(id: string): Promise<{ id: string; plan: string } | null>;
}

export interface PortalKeys {
  list(accountId: string): Promise<{ keys: KeyView[] }>;
  create(accountId: string, input: CreateKeyInput, from: string): Promise<{ key: KeyView; api_key: string }>;
  rotate(
    accountId: string,
    keyId: string,
    input: RotateInput,
    from: string,
  ): Promise<{ key: KeyView; api_key: string; previous: KeyView }>;
  /** Its name, scopes, allowlist or expiry: the admin API's `PATCH`. */
  update(accountId: string, keyId: string, input: PatchKeyInput, from: string): Promise<{ key: KeyView }>;
  revoke(accountId: string, keyId: string, from: string): Promise<unknown>;
}

export interface PortalUsage {
  /** The period in progress, and requests by day over the last `days` days. */
  usage(accountId: string, days: number): Promise<{ usage: Usage; days: Array<{ day: string; requests: number }> }>;
  /** The same days as the admin API's CSV export (formula-safe). */
  csv(accountId: string, days: number): Promise<string>;
}

export interface PortalDeps {
  store: PortalStore;
  accounts: PortalAccounts;
  keys: PortalKeys;
  usage: PortalUsage;
  send: SendLink;
}
