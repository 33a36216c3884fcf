const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or an attribute value, safe inside HTML. */
export const esc = (s: string | number): string => String(s).replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
