/**
 * Sign-ups waiting for an operator (`portal.signup: approval`): approving one makes the account a
 * portal sign-up would have made, with the person as its owner; rejecting one forgets it.
 */
import type { Clock } from '../clock.js';
import { GatewayError } from '../failures.js';
import { createAccountInput } from '../keys/accounts.js';
import type { Account, Member, PortalStore, SignUp } from '../store/store.js';
import type { AccountOperations } from './account-operations.js';
import type { Audit } from './audit.js';

export interface SignUpOperationsDeps {
  portal: PortalStore;
  accounts: AccountOperations;
  /** `portal.signup_plan`. */
  plan: string;
  clock: Clock;
  audit: Audit;
}

/** Told of an approved address: the gateway sends it a sign-in link (assemble/portal-builder.ts). */
export type Approved = (email: string) => Promise<void>;

export class SignUpOperations {
  private readonly approved: Approved[] = [];

  constructor(private readonly deps: SignUpOperationsDeps) {}

  /** Runs `listener` after each approval; when it fails the approval stands (the person asks for a link). */
  onApproved(listener: Approved): void {
    this.approved.push(listener);
  }

  async list(): Promise<{ signups: SignUp[] }> {
    return { signups: await this.deps.portal.signUps() };
  }

  /**
   * Taken off the list first, so two operators approving at once make one account. The account's
   * first key is not shown: the owner makes their own in the portal, as after an open sign-up.
   */
  async approve(
    id: string,
    from: string,
  ): Promise<{ signup: SignUp; account: Account; member: Member; sign_in_link_sent: boolean }> {
    const { portal, accounts, plan, clock, audit } = this.deps;
    const signup = await this.taken(id);
    const input = createAccountInput.parse({ plan, label: signup.email.slice(0, 64) });
    const { account } = await accounts.createAccount(input, from, 'first key');
    const member: Member = {
      account_id: account.id,
      email: signup.email,
      role: 'owner',
      added_at: new Date(clock.now()).toISOString(),
    };
    await portal.addMember(member);
    audit({ action: 'signup.approve', account_id: account.id, from });
    let sent = false;
    for (const listener of this.approved)
      sent = await listener(signup.email).then(
        () => true,
        () => sent,
      );
    return { signup, account, member, sign_in_link_sent: sent };
  }

  async reject(id: string, from: string): Promise<{ signup: SignUp }> {
    const signup = await this.taken(id);
    this.deps.audit({ action: 'signup.reject', from, after: { signup_id: id } });
    return { signup };
  }

  private async taken(id: string): Promise<SignUp> {
    const signup = await this.deps.portal.takeSignUp(id);
    if (signup === null) throw new GatewayError('NOT_FOUND', `no sign-up waiting with id ${id}`);
    return signup;
  }
}
