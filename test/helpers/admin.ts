import type { TestGateway } from './gateway.js';

export interface AdminAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** Calls the admin API of a test gateway with a JSON body. */
export async function adminCall(
  gw: TestGateway,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
  rawBody?: string,
): Promise<AdminAnswer> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined || rawBody !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(`http://127.0.0.1:${gw.app.adminAddress.port}${path}`, {
    method,
    headers,
    ...(body !== undefined || rawBody !== undefined ? { body: rawBody ?? JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON (metrics text)
  }
  return { status: r.status, headers: r.headers, body: parsed };
}
