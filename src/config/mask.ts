/**
 * Secrets masked for display: the one rule of every output that shows a setting or a URL the
 * operator gave (`config check`, `config reference`, the admin API's answers). By shape, not by
 * field list, so that a setting added later is masked without anyone remembering to.
 */

// Query parameters whose value is a credential, by name (api_key, token, access_token, sig, …).
const SECRET_PARAM = /key|token|secret|pass|sig|auth|credential/i;
// Settings whose value is a secret, by name: token, password, secret, api_key, or *_<one of them>.
const SECRET_FIELD = /^(?:.*_)?(?:token|password|secret|api_key)$/;
const URL_SHAPE = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is;

/**
 * A URL for display: its user info (up to the last "@" of the authority, as URL parsers read it)
 * and the values of credential-like query parameters become `***`; the rest stays as written.
 */
export function maskUrl(url: string): string {
  const m = URL_SHAPE.exec(url);
  if (m === null) return url;
  const [, scheme, authority = '', rest = ''] = m;
  const at = authority.lastIndexOf('@');
  const host = at === -1 ? authority : `***@${authority.slice(at + 1)}`;
  const masked = rest.replace(/([?&])([^=&#]*)=([^&#]*)/g, (all, sep: string, name: string) =>
    SECRET_PARAM.test(paramName(name)) ? `${sep}${name}=***` : all,
  );
  return `${scheme}${host}${masked}`;
}

/** A query parameter's name as decoded; a malformed escape is judged as written. */
function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * A settings tree with every secret masked: a string under a secret's name becomes `***` (an
 * empty one stays empty, so that "not set" still shows), and every URL in it is masked (maskUrl).
 */
export function maskTree<T>(value: T): T {
  return masked(value, '') as T;
}

function masked(value: unknown, name: string): unknown {
  if (typeof value === 'string') return SECRET_FIELD.test(name) ? (value === '' ? '' : '***') : maskUrl(value);
  if (Array.isArray(value)) return value.map((v) => masked(v, name));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v, k)]));
}
