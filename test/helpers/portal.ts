import type { TestGateway } from './gateway.js';
import type { TestSmtp } from './smtp.js';

export interface Person {
  email: string;
  cookie: string;
  csrf: string;
  account: string;
  /** A call of the portal API as this person, from the portal's own origin. */
  call(method: string, path: string, body?: unknown): Promise<Response>;
}

/** Asks for a link from the portal's origin. */
export const askLink = (gw: TestGateway, email: string, headers: Record<string, string> = {}): Promise<Response> =>
  gw.get('/portal/api/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: gw.base, ...headers },
    body: JSON.stringify({ email }),
  });

/** Follows a link as a browser would, without following the redirect: the answer and its cookie. */
export async function follow(
  link: string,
): Promise<{ status: number; cookie: string | null; location: string | null }> {
  const r = await fetch(link, { redirect: 'manual' });
  await r.arrayBuffer();
  const set = r.headers.get('set-cookie');
  return { status: r.status, cookie: set?.split(';')[0] ?? null, location: r.headers.get('location') };
}

/** Signs `email` in through its emailed link (the `n`th mail to it). */
export async function signIn(gw: TestGateway, smtp: TestSmtp, email: string, n = 1): Promise<Person> {
  const asked = await askLink(gw, email);
  if (asked.status !== 202) throw new Error(`sign-in answered ${asked.status}`);
  const { cookie } = await follow(await smtp.link(email, n));
  if (cookie === null) throw new Error('no cookie');
  const call = (method: string, path: string, body?: unknown, csrf = ''): Promise<Response> =>
    gw.get(path, {
      method,
      headers: {
        cookie,
        origin: gw.base,
        'x-csrf-token': csrf,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const me = (await (await call('GET', '/portal/api/me')).json()) as { csrf_token: string; account: { id: string } };
  return {
    email,
    cookie,
    csrf: me.csrf_token,
    account: me.account.id,
    call: (method, path, body) => call(method, path, body, me.csrf_token),
  };
}
