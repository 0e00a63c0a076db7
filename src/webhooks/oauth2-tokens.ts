import { createHash } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import type { HookOAuth2Doc } from '../storage/hooks/hook.schema';

/**
 * OAuth2 client credentials of a hook's receiver (spec 5 item 12, RFC 6749 §4.4): the gateway asks the receiver's
 * token endpoint for an access token and sends it as `Authorization: Bearer`. A token is kept until shortly before it
 * expires (`expires_in` less a skew), shared by every delivery to the same credentials in the process, fetched once
 * for concurrent deliveries, and dropped when the receiver answers 401 (the sender then fetches a new one once).
 */

export type OAuth2Credentials = HookOAuth2Doc;

export interface FetchedToken {
  accessToken: string;
  /** Seconds, when the token endpoint said. */
  expiresIn: number | undefined;
}

/** The token endpoint could not give a token; the message is the delivery log's reason. */
export class OAuth2TokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuth2TokenError';
  }
}

const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * One client-credentials request (RFC 6749 §4.4.2), client authentication `client_secret_basic` (§2.3.1, which every
 * server must support; id and secret form-encoded first) or `client_secret_post`. Through `dispatcher`, the webhook
 * sender's guarded pool, so the token endpoint passes the same SSRF guard, egress and client certificate as the hook.
 */
export async function requestClientCredentialsToken(
  creds: OAuth2Credentials,
  dispatcher: Dispatcher,
  timeoutMs: number,
  userAgent: string,
): Promise<FetchedToken> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (creds.scope) form.set('scope', creds.scope);
  if (creds.audience) form.set('audience', creds.audience);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    'user-agent': userAgent,
  };
  if (creds.clientAuth === 'client_secret_post') {
    form.set('client_id', creds.clientId);
    form.set('client_secret', creds.clientSecret);
  } else {
    const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
    headers['authorization'] =
      `Basic ${Buffer.from(`${enc(creds.clientId)}:${enc(creds.clientSecret)}`).toString('base64')}`;
  }
  const res = await request(creds.tokenUrl, {
    dispatcher,
    method: 'POST',
    headers,
    body: form.toString(),
    signal: AbortSignal.timeout(timeoutMs),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const text = await readBounded(res.body);
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: the status says what happened.
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const error = typeof body['error'] === 'string' ? `: ${body['error'].slice(0, 100)}` : '';
    throw new OAuth2TokenError(`token endpoint answered HTTP ${res.statusCode}${error}`);
  }
  const accessToken = body['access_token'];
  const tokenType = body['token_type'];
  if (typeof accessToken !== 'string' || accessToken === '')
    throw new OAuth2TokenError('token endpoint answered without an access_token');
  if (typeof tokenType === 'string' && tokenType.toLowerCase() !== 'bearer')
    throw new OAuth2TokenError(`token endpoint answered token_type ${tokenType.slice(0, 40)}, not Bearer`);
  const expiresIn = Number(body['expires_in']);
  return { accessToken, expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined };
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_TOKEN_RESPONSE_BYTES) {
      body.destroy();
      throw new OAuth2TokenError('token endpoint answer too large');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface OAuth2TokenCacheOptions {
  now?: () => number;
  /** A token is renewed this long before it expires (clock skew, time in flight). */
  skewMs?: number;
  /** How long a token the endpoint gave no `expires_in` for is kept (until a 401 drops it sooner). */
  defaultLifetimeMs?: number;
}

interface Entry {
  token: string;
  expiresAt: number;
}

/** The tokens of one process, keyed by the credentials (the secret by its digest). */
export class OAuth2TokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  private readonly now: () => number;
  private readonly skewMs: number;
  private readonly defaultLifetimeMs: number;

  constructor(options: OAuth2TokenCacheOptions = {}) {
    this.now = options.now ?? Date.now;
    this.skewMs = options.skewMs ?? 30_000;
    this.defaultLifetimeMs = options.defaultLifetimeMs ?? 300_000;
  }

  /** A token still valid for at least the skew, from the cache or `fetch`ed (one fetch for concurrent callers). */
  async token(creds: OAuth2Credentials, fetch: () => Promise<FetchedToken>): Promise<string> {
    const key = cacheKey(creds);
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt - this.skewMs > this.now()) return entry.token;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = fetch()
        .then((t) => {
          const lifetime = t.expiresIn !== undefined ? t.expiresIn * 1000 : this.defaultLifetimeMs;
          const fresh = { token: t.accessToken, expiresAt: this.now() + lifetime };
          this.entries.set(key, fresh);
          return fresh;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return (await pending).token;
  }

  /** The receiver refused `token` (401): forget it, unless a newer one has replaced it already. */
  invalidate(creds: OAuth2Credentials, token: string): void {
    const key = cacheKey(creds);
    if (this.entries.get(key)?.token === token) this.entries.delete(key);
  }
}

function cacheKey(c: OAuth2Credentials): string {
  const secret = createHash('sha256').update(c.clientSecret).digest('base64url');
  return JSON.stringify([c.tokenUrl, c.clientId, secret, c.scope ?? '', c.audience ?? '', c.clientAuth ?? '']);
}
