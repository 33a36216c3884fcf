/** The page's API docs, rendered from the OpenAPI document, with a curl line per endpoint. */
import type { OpenApiDocument, Operation } from '../../http/openapi.js';
import { esc } from './html.js';

/**
 * A curl line: the required parameters, else the first two with examples (historical.php: its
 * month form). The key goes in the header: a URL ends up in logs and shell history.
 */
function curl(path: string, op: Operation): string {
  const withExample = (op.parameters ?? []).filter((p) => p.in === 'query' && p.example !== undefined);
  const required = withExample.filter((p) => p.required);
  const shown = required.length > 0 ? required : withExample.slice(0, 2);
  const q = shown.length > 0 ? `?${shown.map((p) => `${p.name}=${p.example}`).join('&')}` : '';
  const key = op.security?.length ? `-H 'X-API-Key: YOUR_KEY' ` : '';
  // A path parameter shows its example (byyear/{year} → byyear/2025).
  const example = (name: string): string =>
    String((op.parameters ?? []).find((p) => p.in === 'path' && p.name === name)?.example ?? `{${name}}`);
  const target = path.replace(/\{(\w+)\}/g, (_, name: string) => example(name));
  return `curl -s ${key}'<span class="origin">http://localhost:8080</span>${esc(target)}${esc(q)}'`;
}

function parameters(op: Operation): string {
  const rows = [
    ...(op.security?.length ? [['X-API-Key', 'header', 'Your API key (or the api_key query parameter).']] : []),
    ...(op.parameters ?? []).map((p) => [p.name, p.in, p.description]),
  ];
  if (rows.length === 0) return '';
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c ?? '')}</td>`).join('')}</tr>`).join('');
  return `<table class="params"><thead><tr><th>Parameter</th><th>In</th><th>Meaning</th></tr></thead><tbody>${body}</tbody></table>`;
}

function responses(op: Operation): string {
  const items = Object.entries(op.responses)
    .map(([status, r]) => `<li><code>${esc(status)}</code> ${esc(r.description)}</li>`)
    .join('');
  return `<ul class="responses">${items}</ul>`;
}

export function apiDocsHtml(doc: OpenApiDocument): string {
  // The page is for integrators: the leak reports' POST (GitHub's) is only in the document.
  const ops = Object.entries(doc.paths)
    .flatMap(([path, item]) => (path !== '/' && 'get' in item ? [[path, item.get] as const] : []))
    .map(
      ([path, op]) =>
        `<article class="endpoint"><h3><code>GET ${esc(path)}</code></h3><p>${esc(op.summary)}.` +
        `${op.description ? ` ${esc(op.description)}` : ''}</p>${parameters(op)}${responses(op)}` +
        `<pre><code>${curl(path, op)}</code></pre></article>`,
    )
    .join('');
  return `<p>${esc(doc.info.description)}</p><p>The whole description: <a href="/fuel-api/openapi.json">/fuel-api/openapi.json</a> (OpenAPI 3.1).</p>${ops}`;
}
