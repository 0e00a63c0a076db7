import { request, type Dispatcher } from 'undici';
import type { HookDeliveryAuthDoc } from '../storage/hooks/hook.schema';
import { ClientCertificateError, DeliveryAgents, type EgressOptions } from './delivery-agents';
import { OAuth2TokenCache, OAuth2TokenError, requestClientCredentialsToken } from './oauth2-tokens';
import {
  checkTargetUrl,
  createGuardedLookup,
  isSsrfBlockedError,
  type AllowList,
  type GuardedLookupOptions,
} from './ssrf-guard';

/**
 * One HTTP POST of a delivery attempt, through the guarded connection pool (the SSRF guard checks the address actually
 * connected, IP literals are checked before, redirects are never followed: undici follows none unless told to).
 * Keep-alive per origin: a
 * fresh TLS handshake per request costs ~40x the throughput (reference/webhooks.md §9).
 */

export interface WebhookSenderOptions {
  allowList: AllowList;
  allowHttp: boolean;
  userAgent: string;
  /** Connection set-up bound, within the attempt's overall timeout. */
  connectTimeoutMs?: number;
  /** DNS resolver behind the guard (tests resolve names to chosen addresses). */
  resolve?: GuardedLookupOptions['resolve'];
  /** Largest response body read (and discarded); the rest is dropped with the connection. */
  maxResponseBytes?: number;
  /** Source address and/or proxy of every delivery (delivery-agents.ts). */
  egress?: EgressOptions;
  /** Where hooks' client certificates for mutual TLS are. */
  clientCertDir?: string | undefined;
  /** Extra CA certificates (PEM) receivers' certificates may chain to (private receivers, tests). */
  ca?: string;
  /** The OAuth2 token cache (tests pass one with their own clock). */
  tokens?: OAuth2TokenCache;
}

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  /** JSON text for events; a document's bytes for the https channel (its content-type in `headers`). */
  body: string | Buffer;
  timeoutMs: number;
  /** The hook's delivery authentication beyond the signature: OAuth2 bearer token, client certificate. */
  auth?: HookDeliveryAuthDoc | null | undefined;
}

export type SendResult =
  | { kind: 'response'; status: number; retryAfter: string | undefined; latencyMs: number }
  | { kind: 'error'; error: string; timedOut: boolean; latencyMs: number };

const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);
const RESET_CODES = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|HOSTNAME_MISMATCH|ERR_TLS/;

function errorChain(e: unknown): Array<{ code?: unknown; message?: unknown; name?: unknown }> {
  const out: Array<{ code?: unknown; message?: unknown; name?: unknown }> = [];
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    out.push(cur);
    cur = (cur as { cause?: unknown }).cause;
  }
  return out;
}

/**
 * OpenSSL's "…:SSL routines:fn:wrong version number:file:line:" → "wrong version number"; other messages as they are.
 */
function tlsReason(message: string): string {
  const m = /routines:[^:]*:([^:]+):/.exec(message);
  return (m?.[1] ?? message).trim();
}

/** A short, customer-facing cause ("connection refused", "TLS: certificate has expired"); never a stack. */
export function describeSendError(
  e: unknown,
  timeoutMs: number,
  aborted: boolean,
): { error: string; timedOut: boolean } {
  const seconds = (timeoutMs / 1000).toLocaleString('en', { maximumFractionDigits: 1 });
  if (aborted) return { error: `timeout after ${seconds} s`, timedOut: true };
  const chain = errorChain(e);
  const blocked = chain.find((c) => isSsrfBlockedError(c));
  if (blocked) return { error: `refused: ${String(blocked.message)}`, timedOut: false };
  for (const c of chain) {
    const code = typeof c.code === 'string' ? c.code : '';
    const message = typeof c.message === 'string' ? c.message : '';
    if (TIMEOUT_CODES.has(code)) return { error: `timeout after ${seconds} s`, timedOut: true };
    if (code === 'ECONNREFUSED') return { error: 'connection refused', timedOut: false };
    if (RESET_CODES.has(code)) return { error: 'connection reset', timedOut: false };
    if (DNS_CODES.has(code))
      return { error: `DNS: ${code === 'ENOTFOUND' ? 'name not found' : code}`, timedOut: false };
    if (TLS_CODE.test(code)) return { error: `TLS: ${tlsReason(message) || code}`.slice(0, 300), timedOut: false };
  }
  const first = chain[0];
  const code = typeof first?.code === 'string' ? first.code : undefined;
  const message = typeof first?.message === 'string' ? first.message : String(e);
  return { error: (code ? `${code}: ${message}` : message).slice(0, 300), timedOut: false };
}

export class WebhookSender {
  private readonly agents: DeliveryAgents;
  private readonly tokens: OAuth2TokenCache;
  private readonly maxResponseBytes: number;

  constructor(private readonly options: WebhookSenderOptions) {
    const connectTimeout = options.connectTimeoutMs ?? 15_000;
    const lookup = createGuardedLookup(options.allowList, options.resolve ? { resolve: options.resolve } : {});
    this.agents = new DeliveryAgents({
      lookup,
      connectTimeoutMs: connectTimeout,
      egress: options.egress,
      clientCertDir: options.clientCertDir,
      ca: options.ca,
    });
    this.tokens = options.tokens ?? new OAuth2TokenCache();
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
  }

  /**
   * POSTs once; never throws for anything the receiver or the network does. A URL the guard refuses before connecting
   * (scheme, an IP literal in any spelling) is an error result too, so it takes the same retry path as other failures.
   */
  async send(req: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(req.url);
    } catch {
      return { kind: 'error', error: 'invalid URL', timedOut: false, latencyMs: 0 };
    }
    const refused = checkTargetUrl(target, this.options.allowList, { allowHttp: this.options.allowHttp });
    if (refused) return { kind: 'error', error: `refused: ${refused}`, timedOut: false, latencyMs: 0 };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.options.userAgent,
      ...req.headers,
    };
    // Credentials in an https URL become Basic authentication; undici does not send URL userinfo.
    if (target.username || target.password) {
      const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      headers['authorization'] ??= `Basic ${Buffer.from(credentials).toString('base64')}`;
      target.username = '';
      target.password = '';
    }

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), req.timeoutMs);
    const failure = (e: unknown, prefix = ''): SendResult => {
      const d = describeSendError(e, req.timeoutMs, controller.signal.aborted);
      return { kind: 'error', error: `${prefix}${d.error}`, timedOut: d.timedOut, latencyMs: latency() };
    };
    try {
      let dispatcher: Dispatcher;
      try {
        dispatcher = this.agents.dispatcherFor(req.auth?.clientCertificate);
        await this.agents.precheck(target);
      } catch (e) {
        if (e instanceof ClientCertificateError)
          return { kind: 'error', error: e.message, timedOut: false, latencyMs: latency() };
        return failure(e);
      }
      const post = () => this.post(target, headers, req.body, dispatcher, controller.signal, req.timeoutMs);
      const oauth2 = req.auth?.oauth2;
      if (!oauth2) return { ...(await post()), latencyMs: latency() };

      // OAuth2 client credentials of the receiver: a cached bearer token; a 401 drops it and one fresh token is tried.
      const remaining = () => Math.max(1, Math.floor(req.timeoutMs - (performance.now() - started)));
      // The token endpoint passes the same guard as the hook: scheme and IP literals here, names at connect time.
      const fetchToken = async () => {
        const tokenUrl = new URL(oauth2.tokenUrl);
        const refused = checkTargetUrl(tokenUrl, this.options.allowList, { allowHttp: this.options.allowHttp });
        if (refused) throw new OAuth2TokenError(`refused: ${refused}`);
        await this.agents.precheck(tokenUrl);
        return requestClientCredentialsToken(oauth2, dispatcher, remaining(), this.options.userAgent);
      };
      const tokenFailure = (e: unknown): SendResult =>
        e instanceof OAuth2TokenError
          ? { kind: 'error', error: `OAuth2 token: ${e.message}`, timedOut: false, latencyMs: latency() }
          : failure(e, 'OAuth2 token: ');
      let token: string;
      try {
        token = await this.tokens.token(oauth2, fetchToken);
      } catch (e) {
        return tokenFailure(e);
      }
      headers['authorization'] = `Bearer ${token}`;
      const first = await post();
      if (first.status !== 401) return { ...first, latencyMs: latency() };
      this.tokens.invalidate(oauth2, token);
      try {
        token = await this.tokens.token(oauth2, fetchToken);
      } catch (e) {
        return tokenFailure(e);
      }
      headers['authorization'] = `Bearer ${token}`;
      return { ...(await post()), latencyMs: latency() };
    } catch (e) {
      return failure(e);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One POST; throws what undici throws. */
  private async post(
    target: URL,
    headers: Record<string, string>,
    body: string | Buffer,
    dispatcher: Dispatcher,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<{ kind: 'response'; status: number; retryAfter: string | undefined }> {
    const sending = request(target, {
      dispatcher,
      method: 'POST',
      headers,
      body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    // The attempt ends at its timeout even where undici would not settle (a proxy that drops its tunnels).
    sending.catch(() => undefined);
    const aborted = new Promise<never>((_, reject) => {
      const stop = () => reject(new Error('the attempt timed out'));
      if (signal.aborted) stop();
      signal.addEventListener('abort', stop, { once: true });
    });
    const res = await Promise.race([sending, aborted]);
    const retryAfter = res.headers['retry-after'];
    // The body is not needed; reading a bounded part lets the connection be reused.
    await res.body.dump({ limit: this.maxResponseBytes }).catch(() => undefined);
    return {
      kind: 'response',
      status: res.statusCode,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
    };
  }

  async close(): Promise<void> {
    await this.agents.close();
  }
}
