/** An account's portal members, for operators: the same store operations the portal's owners use. */
import type { Clock } from '../clock.js';
import { GatewayError } from '../failures.js';
import { emailSchema, type MemberInput } from '../keys/members.js';
import type { AccountStore, Member, PortalStore } from '../store/store.js';
import type { Audit } from './audit.js';

export interface MemberOperationsDeps {
  accounts: AccountStore;
  portal: PortalStore;
  clock: Clock;
  audit: Audit;
}

/** Lists, adds and removes members; an account keeps at least one owner (409). */
export class MemberOperations {
  constructor(private readonly deps: MemberOperationsDeps) {}

  async list(accountId: string): Promise<{ members: Member[] }> {
    await this.existing(accountId);
    return { members: await this.deps.portal.members(accountId) };
  }

  /** The members, and when one of them last signed in to the account's portal (null: never). */
  async summary(accountId: string): Promise<{ members: Member[]; last_portal_sign_in_at: string | null }> {
    const { members } = await this.list(accountId);
    const times = members.flatMap((m) => (m.last_sign_in_at === undefined ? [] : [m.last_sign_in_at]));
    return { members, last_portal_sign_in_at: times.sort().at(-1) ?? null };
  }

  async add(accountId: string, input: MemberInput, from: string): Promise<{ member: Member }> {
    await this.existing(accountId);
    const member: Member = { account_id: accountId, ...input, added_at: new Date(this.deps.clock.now()).toISOString() };
    if (!(await this.deps.portal.addMember(member)))
      throw new GatewayError('CONFLICT', `${input.email} is a member of account ${accountId} already`);
    this.deps.audit({ action: 'member.add', account_id: accountId, from, after: { role: member.role } });
    return { member };
  }

  /** `email` as the path gives it (percent-encoded or not). */
  async remove(
    accountId: string,
    email: string,
    from: string,
  ): Promise<{ removed: { account_id: string; email: string } }> {
    await this.existing(accountId);
    const address = emailSchema.safeParse(decoded(email));
    if (!address.success) throw new GatewayError('NOT_FOUND', `account ${accountId} has no member ${email}`);
    const result = await this.deps.portal.removeMember(accountId, address.data);
    if (result === 'absent') throw new GatewayError('NOT_FOUND', `account ${accountId} has no member ${address.data}`);
    if (result === 'last_owner')
      throw new GatewayError('CONFLICT', `${address.data} is account ${accountId}'s last owner: an account keeps one`);
    this.deps.audit({ action: 'member.remove', account_id: accountId, from });
    return { removed: { account_id: accountId, email: address.data } };
  }

  private async existing(accountId: string): Promise<void> {
    if (!(await this.deps.accounts.getAccount(accountId)))
      throw new GatewayError('NOT_FOUND', `no account with id ${accountId}`);
  }
}

/** A path segment decoded, or '' when its escapes are not UTF-8 (then no member has it). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}
