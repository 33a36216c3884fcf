/** The account's members: everyone reads the list, only an owner invites and removes. */
import { emailSchema, memberInput as invite } from '../../keys/members.js';
import { type ApiHandler, fields } from './acting.js';
import { empty, isForm, json, refuse } from './http.js';

export const listMembers: ApiHandler = async (x, c, a) =>
  json(x, 200, { members: await c.deps.store.members(a.accountId) });

export const addMember: ApiHandler = async (x, c, a, _params, body) => {
  if (a.role !== 'owner') return refuse(x, 'forbidden');
  const input = invite.safeParse(fields(body));
  if (!input.success) return refuse(x, 'bad_request');
  const member = { account_id: a.accountId, ...input.data, added_at: new Date(x.services.clock.now()).toISOString() };
  if (!(await c.deps.store.addMember(member)))
    return json(x, 409, { success: false, message: `${input.data.email} is a member already.` });
  x.services.log.info(
    { audit: { action: 'member.add', account_id: a.accountId, from: a.from, role: member.role } },
    'portal member.add',
  );
  if (isForm(x.req)) return empty(x, 303, ['Location', '/portal/']);
  json(x, 201, { member });
};

export const removeMember: ApiHandler = async (x, c, a, [email = '']) => {
  if (a.role !== 'owner') return refuse(x, 'forbidden');
  const address = emailSchema.safeParse(decoded(email));
  if (!address.success) return refuse(x, 'not_found');
  const result = await c.deps.store.removeMember(a.accountId, address.data);
  if (result === 'absent') return refuse(x, 'not_found');
  if (result === 'last_owner') return json(x, 409, { success: false, message: 'An account keeps at least one owner.' });
  x.services.log.info(
    { audit: { action: 'member.remove', account_id: a.accountId, from: a.from } },
    'portal member.remove',
  );
  if (isForm(x.req)) return empty(x, 303, ['Location', '/portal/']);
  empty(x, 204);
};

/** A path segment decoded, or '' when its escapes are not UTF-8 (then no member has it). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}
