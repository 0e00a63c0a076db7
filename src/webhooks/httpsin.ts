import { createHmac } from 'node:crypto';

/**
 * Inbound HTTPS hooks (spec 6.9): `httpsin://<user>:<password>@inbound?token=$token$`. The host `inbound` names the
 * internal endpoint the operator configures (WEBHOOK_HTTPSIN_URL), for receivers that accept no traffic from the
 * internet; the gateway POSTs the same signed body there with HTTP Basic credentials, and the query of the hook URL
 * with `$token$` replaced by the document token.
 *
 * The document token (the spec leaves it open): base64url HMAC-SHA256 of `document-token.<documentId>` under the hook's
 * secureKey (the event id for events without a document), so the receiver can check it with the key it already holds.
 */

export const HTTPSIN_HOST = 'inbound';
export const TOKEN_PLACEHOLDER = '$token$';

export interface HttpsinUrl {
  user: string;
  password: string;
  /** The query as written, placeholder included. */
  search: string;
}

/** Parses an httpsin URL; returns a message when it is not one. */
export function parseHttpsinUrl(url: string): HttpsinUrl | string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (u.protocol !== 'httpsin:')
    return 'an httpsin hook needs a URL of the form httpsin://user:password@inbound?token=$token$';
  if (u.hostname !== HTTPSIN_HOST)
    return `the host of an httpsin URL must be "${HTTPSIN_HOST}" (the configured internal endpoint)`;
  if (!u.username || !u.password) return 'an httpsin URL must carry user:password';
  if (u.pathname && u.pathname !== '/' && u.pathname !== '') return 'an httpsin URL has no path';
  return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), search: u.search };
}

export function documentToken(secureKey: string, documentOrEventId: string): string {
  return createHmac('sha256', Buffer.from(secureKey, 'utf8'))
    .update(`document-token.${documentOrEventId}`)
    .digest('base64url');
}

/**
 * Where and how an httpsin delivery goes: the endpoint with the hook's query (token filled in), and Basic credentials.
 */
export function httpsinTarget(
  hookUrl: string,
  endpoint: string,
  token: string,
): { url: string; authorization: string } {
  const parsed = parseHttpsinUrl(hookUrl);
  if (typeof parsed === 'string') throw new Error(parsed);
  const target = new URL(endpoint);
  // The placeholder may appear percent-encoded ($ is kept by URL, but be tolerant of %24token%24).
  const search = parsed.search
    .split(TOKEN_PLACEHOLDER)
    .join(encodeURIComponent(token))
    .split('%24token%24')
    .join(encodeURIComponent(token));
  if (search.length > 1) {
    const extra = new URLSearchParams(search.slice(1));
    for (const [k, v] of extra) target.searchParams.append(k, v);
  }
  const authorization = `Basic ${Buffer.from(`${parsed.user}:${parsed.password}`, 'utf8').toString('base64')}`;
  return { url: target.toString(), authorization };
}

/** The URL for display: password replaced (any URL with userinfo, not only httpsin). */
export function redactHttpsinUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '[invalid url]';
  }
}
