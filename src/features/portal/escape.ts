const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Any value as HTML text or an attribute's value. */
export const esc = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (ch) => ESCAPES[ch] as string);
