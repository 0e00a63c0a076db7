import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import type { Config } from '../config/load-config';
import { GatewayError, isGatewayError } from '../core/gateway-error';
import type { Logger } from '../observability/logger';
import { isSecretActive, type IdentityStore } from './identity-store';
import { partnerOfSubscriptionKey, type SubscriptionKeyLookup } from './subscription-keys';
import { API_SCOPE, TokenVerificationError, type AccessTokenClaims, type GrantType } from './token-service';

export const AUTH_REALM = 'invoice-gateway';

export interface Principal {
  clientId: string;
  secretId: string;
  grantType: GrantType;
  scope: string[];
  /** The client's tenants, or `[user.tenantId]` for the password grant. */
  tenantIds: string[];
  username?: string;
  userId?: string;
  /** Password grant only: the parties linked to the user account. */
  partyIds?: string[];
  tokenId: string;
  expiresAt: Date;
}

const PRINCIPAL = 'principal';

/** The authenticated caller; throws 401 when `createAuthenticate` did not run before (fail closed on a wiring slip). */
export function principalOf(res: Response): Principal {
  const p = findPrincipal(res);
  if (!p) throw new GatewayError('UNAUTHORIZED', 'Request is not authenticated');
  return p;
}

export function findPrincipal(res: Response): Principal | undefined {
  const p: unknown = res.locals[PRINCIPAL];
  return p && typeof p === 'object' ? (p as Principal) : undefined;
}

export interface AuthenticateDeps {
  store: IdentityStore;
  tokens: { verify(token: string): Promise<AccessTokenClaims> };
  config: { auth: Config['auth'] };
  now?: () => Date;
}

/** RFC 6750 §3: quoted-string values must stay within printable ASCII without `"` and `\`. */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '')}"`;
}

function challenge(res: Response, error?: { code: string; description: string; scope?: string }): void {
  const parts = [`Bearer realm=${quoted(AUTH_REALM)}`];
  if (error) {
    parts.push(`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`);
    if (error.scope) parts.push(`scope=${quoted(error.scope)}`);
  }
  res.setHeader('WWW-Authenticate', parts.join(', '));
}

/** RFC 6750 §2.1 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Bearer token check for API routes. After the signature and claims, the client (and the user, for the password
 * grant) is read again on every request: revoking a secret, disabling a client or user, or removing a user takes
 * effect on the next call instead of when the token expires (up to an hour later).
 */
export function createAuthenticate(deps: AuthenticateDeps): RequestHandler {
  const now = deps.now ?? (() => new Date());

  const refuse = (res: Response, description: string, code = 'invalid_token', scope?: string): GatewayError => {
    challenge(res, { code, description, ...(scope ? { scope } : {}) });
    return new GatewayError('UNAUTHORIZED', capitalise(description));
  };

  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      challenge(res);
      const inQuery = typeof req.query === 'object' && req.query !== null && 'access_token' in req.query;
      next(
        new GatewayError(
          'UNAUTHORIZED',
          inQuery
            ? 'Authorization header missing; access tokens are accepted only in the Authorization header'
            : 'Authorization header missing',
        ),
      );
      return;
    }
    if (!/^Bearer(\s|$)/i.test(header)) {
      // RFC 6750 §3.1: no error code when the request carries no bearer credentials at all.
      challenge(res);
      next(new GatewayError('UNAUTHORIZED', 'Authorization header must use the Bearer scheme'));
      return;
    }
    const m = BEARER.exec(header);
    if (!m?.[1]) {
      next(refuse(res, 'the Authorization header does not hold a well-formed bearer token'));
      return;
    }

    let claims: AccessTokenClaims;
    try {
      claims = await deps.tokens.verify(m[1]);
    } catch (err) {
      if (err instanceof TokenVerificationError) {
        // Our contract answers a missing scope with 401, not RFC 6750's 403, but names the error precisely.
        next(
          err.reason === 'insufficient_scope'
            ? refuse(res, err.message, 'insufficient_scope', API_SCOPE)
            : refuse(res, err.message),
        );
      } else {
        // Verification keys come from the store; anything else failing here is the store failing.
        next(
          isGatewayError(err) ? err : new GatewayError('STORAGE_FAILED', 'Signing keys unavailable', { cause: err }),
        );
      }
      return;
    }

    try {
      const client = await deps.store.findClient(claims.client_id);
      if (!client) return next(refuse(res, 'the client of this access token no longer exists'));
      if (client.disabled) return next(refuse(res, 'the client of this access token is disabled'));
      const secret = client.secrets.find((s) => s.id === claims.sid);
      if (!secret || !isSecretActive(secret, now())) {
        return next(refuse(res, 'the client secret this access token was issued with has been revoked'));
      }

      const base = {
        clientId: client.clientId,
        secretId: secret.id,
        grantType: claims.gty,
        scope: claims.scope.split(' ').filter((s) => s !== ''),
        tokenId: claims.jti,
        expiresAt: new Date(claims.exp * 1000),
      };
      let principal: Principal;
      if (claims.gty === 'password') {
        const userId = claims.sub.slice('user:'.length);
        const user = claims.username ? await deps.store.findUserByUsername(claims.username) : null;
        if (!user || user.id !== userId)
          return next(refuse(res, 'the user account of this access token no longer exists'));
        if (user.disabled) return next(refuse(res, 'the user account of this access token is disabled'));
        if (!client.tenantIds.includes(user.tenantId)) {
          return next(refuse(res, 'the user account is no longer in a tenant of this client'));
        }
        principal = {
          ...base,
          tenantIds: [user.tenantId],
          username: user.username,
          userId: user.id,
          partyIds: [...user.partyIds],
        };
      } else {
        if (client.tenantIds.length === 0) return next(refuse(res, 'the client of this access token has no tenant'));
        principal = { ...base, tenantIds: [...client.tenantIds] };
      }
      res.locals[PRINCIPAL] = principal;
      next();
    } catch (err) {
      next(
        isGatewayError(err) ? err : new GatewayError('STORAGE_FAILED', 'Identity store unavailable', { cause: err }),
      );
    }
  };
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

const SUBSCRIPTION_PARTNER = 'subscriptionPartnerId';

/** The partner the request's Subscription-Key named (spec 2.1 layer 4), for the request log; never the key. */
export function subscriptionPartnerOf(res: { locals?: Record<string, unknown> }): string | undefined {
  const p = res.locals?.[SUBSCRIPTION_PARTNER];
  return typeof p === 'string' ? p : undefined;
}

/**
 * Spec 5.8: `Subscription-Key` is optional for this API, but a value that is sent must be valid: a partner's key
 * (`subscription-keys.ts`; unknown or revoked is 401) or one of the configured `SUBSCRIPTION_KEYS` (compared by
 * digest in constant time, checking every one; they name no partner). A partner key's partner goes to the request
 * log. The key is not tied to the calling client: clients carry no partner, and the contract makes the header a
 * logging identifier beside the credentials, not one of them.
 */
export function createSubscriptionKeyCheck(
  config: { auth: Pick<Config['auth'], 'subscriptionKeys'> },
  store?: SubscriptionKeyLookup,
): RequestHandler {
  const valid = config.auth.subscriptionKeys.map(digest);
  return async (req, res, next) => {
    const sent = req.headers['subscription-key'];
    if (sent === undefined) return next();
    const value = Array.isArray(sent) ? sent.join(',') : sent;
    const d = digest(value);
    let ok = false;
    for (const v of valid) ok = timingSafeEqual(v, d) || ok;
    if (!ok && store) {
      let partnerId: string | null;
      try {
        partnerId = await partnerOfSubscriptionKey(store, value);
      } catch (err) {
        return next(new GatewayError('STORAGE_FAILED', 'Subscription keys unavailable', { cause: err }));
      }
      if (partnerId) {
        res.locals[SUBSCRIPTION_PARTNER] = partnerId;
        ok = true;
      }
    }
    next(
      ok
        ? undefined
        : new GatewayError('INVALID_SUBSCRIPTION_KEY', 'The Subscription-Key header value is unknown or revoked'),
    );
  };
}

/**
 * Per-client request budget for the API. Mount after `createAuthenticate` so the key is the client id; before it
 * (or without a principal) the client address is used. Pass a shared `store` when several processes serve the API.
 */
export function createApiRateLimit(
  config: { auth: Pick<Config['auth'], 'rateLimitApiPerMinute'> },
  options: { store?: Store; logger?: Logger } = {},
): RequestHandler {
  const { logger } = options;
  return rateLimit({
    windowMs: 60_000,
    limit: config.auth.rateLimitApiPerMinute,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    ...(options.store ? { store: options.store } : {}),
    ...(logger
      ? {
          logger: {
            error: (err: unknown, msg?: string) => logger.error({ err }, msg ?? 'rate limiter error'),
            warn: (err: unknown, msg?: string) => logger.warn({ err }, msg ?? 'rate limiter warning'),
          },
        }
      : {}),
    keyGenerator: (req, res) => {
      const principal = findPrincipal(res);
      return principal ? `client:${principal.clientId}` : `addr:${ipKeyGenerator(req.ip ?? '')}`;
    },
    handler: (_req, _res, next) => {
      next(
        new GatewayError(
          'RATE_LIMITED',
          `Too many requests: at most ${config.auth.rateLimitApiPerMinute} per minute for this client; see Retry-After`,
        ),
      );
    },
  });
}
