import type { Passkey } from '../../store/store.js';
import { esc } from './pages.js';

/** The home page's passkeys: listed and removed without script; added with it (portal.js shows the form). */
export function passkeysSection(passkeys: Passkey[], csrf: string): string {
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
  return `<section aria-labelledby="passkeys"><h2 id="passkeys">Passkeys</h2><p>Sign in with your device's screen lock or a security key instead of an emailed link.</p>${list}
<form id="passkey-add" hidden>${token}<label for="passkey-name">New passkey's name</label> <input id="passkey-name" name="name" value="passkey" required maxlength="64"> <button>Add a passkey</button></form><p id="passkey-status" role="status"></p></section>`;
}
