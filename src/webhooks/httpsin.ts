import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Inbound HTTPS hooks (spec 6.9): `httpsin://<user>:<password>@inbound?token=$token$`, for receivers that accept no
 * traffic from the internet. The host `inbound` names the gateway's own inbox: a delivery puts an entry for the event
 * there (inbox.ts), and the receiver reads it from the gateway with the hook URL's `user:password` as HTTP Basic
 * credentials. `$token$` is an entry's token: it names one document of the inbox and is what the receiver reads and
 * acknowledges it by.
 *
 * The token is `<entry id>.<secret>`: the entry id (the delivery id, a UUID) lets the gateway read the entry by key, and
 * the secret (32 random bytes, base64url) makes it unguessable; it is checked against the entry's own, in constant time,
 * and the entry must belong to the hook of the request.
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
  if (u.hostname !== HTTPSIN_HOST) return `the host of an httpsin URL must be "${HTTPSIN_HOST}" (the gateway's inbox)`;
  if (!u.username || !u.password) return 'an httpsin URL must carry user:password';
  if (u.pathname && u.pathname !== '/' && u.pathname !== '') return 'an httpsin URL has no path';
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(u.username);
    password = decodeURIComponent(u.password);
  } catch {
    return 'the user or password of an httpsin URL is not valid percent-encoding';
  }
  // HTTP Basic cannot carry a colon in the user name (RFC 7617 §2), nor control characters in either part.
  if (user.includes(':')) return 'the user of an httpsin URL cannot contain ":"';
  if (/[\x00-\x1f\x7f]/.test(user + password))
    return 'the user and password of an httpsin URL cannot hold control characters';
  return { user, password, search: u.search };
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const SECRET_BYTES = 32;
/** 32 bytes in base64url without padding. */
const SECRET = '[A-Za-z0-9_-]{43}';
const TOKEN = new RegExp(`^(${UUID})\\.(${SECRET})$`);

/** A fresh secret for an inbox entry. */
export function newEntrySecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/** The token of an entry, as listings show it and `$token$` stands for. */
export function entryToken(entryId: string, secret: string): string {
  return `${entryId}.${secret}`;
}

/** The entry id and secret of a well-formed token; null for anything else (which names no entry). */
export function parseEntryToken(token: string): { entryId: string; secret: string } | null {
  const m = TOKEN.exec(token);
  return m ? { entryId: m[1] as string, secret: m[2] as string } : null;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Equal strings, compared in time independent of where they differ (and of their lengths, through digests). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** Whether Basic credentials are the ones of an httpsin hook URL; both parts are always compared. */
export function credentialsMatch(hookUrl: string | null, user: string, password: string): boolean {
  const parsed = hookUrl ? parseHttpsinUrl(hookUrl) : 'no url';
  // Compared against a decoy when the hook has no usable URL, so the answer takes the same time.
  const expected = typeof parsed === 'string' ? { user: '\u0000', password: '\u0000' } : parsed;
  const userOk = sameSecret(expected.user, user);
  const passwordOk = sameSecret(expected.password, password);
  return typeof parsed !== 'string' && userOk && passwordOk;
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
