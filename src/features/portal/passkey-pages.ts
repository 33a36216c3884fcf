import { isIP } from 'node:net';
import type { Exchange } from '../../http/core-types.js';
import { viaTrustedProxy } from '../../http/metered/pipeline.js';
import type { Passkey } from '../../store/store.js';
import type { PortalContext } from './context.js';
import { esc } from './pages.js';
import { requestOrigin } from './sessions.js';
import { relyingParty } from './webauthn.js';

/**
 * Where passkeys cannot work, what the page says instead of offering them (null: they work here).
 * A browser refuses a passkey anywhere but the relying party's own origin, and refuses an IP
 * address as its ID, with words of its own ("This is an invalid domain") that tell a person nothing.
 */
export function passkeysElsewhere(x: Exchange, c: PortalContext): string | null {
  const rp = relyingParty(c);
  if (isIP(rp.id) !== 0)
    return `<p>Passkeys are not offered: this portal has an IP address (${esc(rp.id)}), and a passkey needs a name. Its operator sets one in <code>portal.base_url</code>.</p>`;
  // Behind a proxy the request's Host may be the proxy's own: the browser's address is not known.
  if (requestOrigin(x) === rp.origin || viaTrustedProxy(x)) return null;
  const home = `${rp.origin}/portal/`;
  return `<p>Passkeys work only at <a href="${esc(home)}">${esc(home)}</a>, the address they are bound to; this page was opened at ${esc(requestOrigin(x))}.</p>`;
}

/** The sign-in page's passkey form, or where passkeys work instead. */
export const passkeySignIn = (elsewhere: string | null): string =>
  elsewhere ??
  '<form id="passkey-sign-in" hidden><button>Sign in with a passkey</button></form><p id="passkey-status" role="status"></p>';

/** The home page's passkeys: listed and removed without script; added with it (portal.js shows the form). */
export function passkeysSection(passkeys: Passkey[], csrf: string, elsewhere: string | null): string {
  const token = `<input type="hidden" name="csrf_token" value="${esc(csrf)}">`;
  const rows = passkeys
    .map(
      (p) =>
        `<tr><td>${esc(p.name)}</td><td>${esc(p.created_at)}</td><td>${esc(p.last_used_at ?? 'never')}</td><td><form class="inline" method="post" action="/portal/api/passkeys/${esc(p.id)}/delete">${token}<button aria-label="Remove passkey ${esc(p.name)}">Remove</button></form></td></tr>`,
    )
    .join('');
  const list =
    passkeys.length === 0
      ? '<p>No passkeys yet.</p>'
      : `<div class="wide" role="region" aria-label="Passkeys" tabindex="0"><table><thead><tr><th>Name</th><th>Added</th><th>Last used</th><th>Actions</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  const add =
    elsewhere ??
    `<form id="passkey-add" hidden>${token}<label for="passkey-name">New passkey's name</label> <input id="passkey-name" name="name" value="passkey" required maxlength="64"> <button>Add a passkey</button></form><p id="passkey-status" role="status"></p>`;
  return `<section aria-labelledby="passkeys"><h2 id="passkeys">Passkeys</h2><p>Sign in with your device's screen lock or a security key instead of an emailed link.</p>${list}
${add}</section>`;
}
