/**
 * The page's script, style and icon: files in public/, read once at start and served from the
 * same origin (the CSP forbids inline code), unmetered and cacheable for an hour.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../config/load.js';
import { fixedHeaders, Whole } from '../../http/prebuilt.js';

const TYPES: Record<string, string> = {
  'page.js': 'text/javascript; charset=utf-8',
  'page.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** `/assets/NAME` → its answer. */
export function pageAssets(): Map<string, Whole> {
  return new Map(
    Object.entries(TYPES).map(([name, type]) => [
      `/assets/${name}`,
      new Whole({
        contentType: type,
        body: readFileSync(join(PROJECT_ROOT, 'public', name), 'utf8'),
        fixed: fixedHeaders('public, max-age=3600'),
      }),
    ]),
  );
}
