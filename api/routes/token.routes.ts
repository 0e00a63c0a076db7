import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { Passport } from 'passport';
import { BasicStrategy } from 'passport-http';
import { Strategy as ClientPasswordStrategy } from 'passport-oauth2-client-password';
import type { Config } from '../../src/config/load-config';
import { GatewayError } from '../../src/core/gateway-error';
import { AUTH_REALM } from '../../src/auth/authenticate';
import { isSecretActive, type ClientRecord, type IdentityStore } from '../../src/auth/identity-store';
import { CLIENT_SECRET_SCRYPT_PARAMS, verifyAgainstDecoy, verifySecret } from '../../src/auth/secret-hash';
import type { PublicSigningJwk } from '../../src/auth/signing-keys';
import {
  API_SCOPE,
  GRANT_TYPES,
  type GrantType,
  type IssuedToken,
  type TokenSubject,
} from '../../src/auth/token-service';
import type { Logger } from '../../src/observability/logger';
import { requestIdOf } from '../problem-details';

export interface TokenRouterDeps {
  store: IdentityStore;
  tokens: { issue(subject: TokenSubject): Promise<IssuedToken> };
  signingKeys: { jwks(): Promise<{ keys: PublicSigningJwk[] }> };
  config: { auth: Config['auth'] };
  logger: Logger;
  /**
   * Shared rate-limit stores when several processes serve the endpoint, one per named limiter (express-rate-limit
   * refuses a store shared between limiters); default: in process memory.
   */
  rateLimitStore?: (limiter: string) => Store;
}

export const TOKEN_PATH = '/connect/token';
export const JWKS_PATH = '/.well-known/jwks.json';
export const DISCOVERY_PATH = '/.well-known/openid-configuration';

type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'temporarily_unavailable'
  | 'server_error';

/** A refused token request: the RFC 6749 §5.2 answer plus the reason that goes to the log only. */
class OAuthFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly reason: string,
  ) {
    super(description);
  }
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

function sendOAuthError(res: Response, failure: OAuthFailure): void {
  res.set(NO_STORE);
  if (failure.error === 'invalid_client') res.set('WWW-Authenticate', `Basic realm="${AUTH_REALM}"`);
  res.status(failure.status).json({ error: failure.error, error_description: failure.description });
}

interface BasicCredentials {
  clientId: string;
  secret: string;
}

/**
 * Client credentials from `Authorization: Basic`. RFC 6749 §2.3.1: id and secret are form-url-encoded before the
 * base64 step, so they are decoded here; and the secret is everything after the first colon (RFC 7617), which
 * passport-http's own split would cut at a second colon.
 */
function parseBasic(header: string | undefined): BasicCredentials | 'malformed' | undefined {
  const m = header ? /^Basic(?: +(\S*))? *$/i.exec(header) : null;
  if (!m) return undefined;
  const token = m[1] ?? '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token)) return 'malformed';
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

function isBasic(req: Request): boolean {
  return /^Basic(\s|$)/i.test(req.headers.authorization ?? '');
}

function bodyOf(req: Request): Record<string, unknown> {
  const b: unknown = req.body;
  return b && typeof b === 'object' ? (b as Record<string, unknown>) : {};
}

/** Values for the log: what the caller claimed, bounded so a hostile request cannot flood a log line. */
function claimed(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, 200) : undefined;
}

function claimedClientId(req: Request): string | undefined {
  const fromBody = claimed(bodyOf(req).client_id);
  if (fromBody) return fromBody;
  const basic = parseBasic(req.headers.authorization);
  return typeof basic === 'object' && basic.clientId ? basic.clientId.slice(0, 200) : undefined;
}

/** The one answer for an unknown client id and a wrong secret; the reason goes to the log only. */
const BAD_CLIENT = 'Client authentication failed: client_id or client_secret is not valid';
const badClient = (reason: 'unknown_client' | 'wrong_secret') =>
  new OAuthFailure(401, 'invalid_client', BAD_CLIENT, reason);

interface AuthenticatedClient {
  client: ClientRecord;
  secretId: string;
}

/** How many recently revoked secrets are also checked on a failure, only to log "revoked" instead of "wrong". */
const REVOKED_SECRETS_CHECKED = 3;

/**
 * `POST /connect/token` (spec 4.1), the JWKS and the discovery document. Mount at the auth base path, after the
 * request-id middleware and before the API's problem-details handler (the token endpoint answers its own errors in
 * RFC 6749 shape; only JWKS/discovery failures reach the problem handler).
 */
export function createTokenRouter(deps: TokenRouterDeps): Router {
  const { store, tokens, signingKeys, config, logger } = deps;
  const failures = new WeakMap<Request, OAuthFailure>();

  async function checkClient(clientId: string, secret: string): Promise<AuthenticatedClient | OAuthFailure> {
    const client = await store.findClient(clientId);
    if (!client) {
      // The same answer, and about the same time, as a wrong secret: which client ids exist is not told.
      await verifyAgainstDecoy(secret, CLIENT_SECRET_SCRYPT_PARAMS);
      return badClient('unknown_client');
    }
    const now = new Date();
    const active = client.secrets.filter((s) => isSecretActive(s, now));
    // Every active secret is tried: a client may hold several at once (spec 5.9).
    const matches = await Promise.all(active.map((s) => verifySecret(secret, s.hash)));
    const matched = active[matches.indexOf(true)];
    if (!matched) {
      const revoked = client.secrets
        .filter((s) => !isSecretActive(s, now))
        .sort((a, b) => (b.revokedAt?.getTime() ?? 0) - (a.revokedAt?.getTime() ?? 0))
        .slice(0, REVOKED_SECRETS_CHECKED);
      const wasRevoked = (await Promise.all(revoked.map((s) => verifySecret(secret, s.hash)))).includes(true);
      // Told only to a caller holding a once valid secret of this client.
      return wasRevoked
        ? new OAuthFailure(
            401,
            'invalid_client',
            'Client authentication failed: this client_secret has been revoked',
            'revoked_secret',
          )
        : badClient('wrong_secret');
    }
    // Told only to a caller holding a valid secret.
    if (client.disabled) {
      return new OAuthFailure(
        401,
        'invalid_client',
        'Client authentication failed: the client is disabled',
        'client_disabled',
      );
    }
    return { client, secretId: matched.id };
  }

  const passport = new Passport();
  type Done = (error: unknown, client?: AuthenticatedClient | false) => void;
  const verified = (req: Request, done: Done) => (outcome: AuthenticatedClient | OAuthFailure) => {
    if (outcome instanceof OAuthFailure) {
      failures.set(req, outcome);
      done(null, false);
    } else {
      done(null, outcome);
    }
  };
  passport.use(
    new ClientPasswordStrategy({ passReqToCallback: true }, (req, clientId, clientSecret, done: Done) => {
      checkClient(clientId, clientSecret).then(verified(req, done), done);
    }),
  );
  passport.use(
    new BasicStrategy({ passReqToCallback: true, realm: AUTH_REALM }, (req, _id, _secret, done: Done) => {
      const creds = parseBasic(req.headers.authorization);
      if (typeof creds !== 'object' || !creds.clientId || !creds.secret) {
        verified(
          req,
          done,
        )(
          new OAuthFailure(
            401,
            'invalid_client',
            'Client authentication failed: malformed Basic credentials',
            'malformed_basic',
          ),
        );
        return;
      }
      checkClient(creds.clientId, creds.secret).then(verified(req, done), done);
    }),
  );

  function authenticateClient(strategy: 'basic' | 'oauth2-client-password', req: Request, res: Response) {
    return new Promise<AuthenticatedClient>((resolve, reject) => {
      const middleware = passport.authenticate(
        strategy,
        { session: false },
        (err: unknown, client: AuthenticatedClient | false | undefined, _challenge: unknown, status: unknown) => {
          if (err) return reject(err instanceof Error ? err : new Error('client authentication failed'));
          if (client) return resolve(client);
          const recorded = failures.get(req);
          if (recorded) return reject(recorded);
          // The strategy refused before our check ran: missing or unparseable credentials.
          reject(
            status === 400
              ? new OAuthFailure(
                  400,
                  'invalid_request',
                  'The Authorization header is not valid Basic credentials',
                  'malformed_basic',
                )
              : new OAuthFailure(
                  401,
                  'invalid_client',
                  'Client authentication failed: client_id and client_secret are required',
                  'missing_client_credentials',
                ),
          );
        },
      ) as RequestHandler;
      void middleware(req, res, (err?: unknown) =>
        reject(err instanceof Error ? err : new Error('client authentication did not complete')),
      );
    });
  }

  function stringParam(body: Record<string, unknown>, name: string): string | undefined {
    const v = body[name];
    if (v === undefined) return undefined;
    // RFC 6749 §3.2: parameters must not be repeated (the parser turns a repeat into an array).
    if (typeof v !== 'string')
      throw new OAuthFailure(
        400,
        'invalid_request',
        `Parameter ${name} must be sent exactly once`,
        'repeated_parameter',
      );
    return v === '' ? undefined : v;
  }

  async function grant(req: Request, res: Response): Promise<IssuedToken> {
    if (!req.is('application/x-www-form-urlencoded')) {
      throw new OAuthFailure(
        400,
        'invalid_request',
        'Content-Type must be application/x-www-form-urlencoded',
        'wrong_content_type',
      );
    }
    const body = bodyOf(req);
    for (const name of Object.keys(body)) stringParam(body, name);
    const grantType = stringParam(body, 'grant_type');
    if (!grantType) throw new OAuthFailure(400, 'invalid_request', 'grant_type is required', 'missing_grant_type');

    const authz = req.headers.authorization;
    if (authz && !isBasic(req)) {
      throw new OAuthFailure(
        401,
        'invalid_client',
        'Client authentication failed: only client_secret_basic and client_secret_post are supported',
        'unsupported_client_auth',
      );
    }
    const bodyClientId = stringParam(body, 'client_id');
    let authenticated: AuthenticatedClient;
    if (authz) {
      // RFC 6749 §2.3.1: one authentication method per request.
      if (body.client_secret !== undefined) {
        throw new OAuthFailure(
          400,
          'invalid_request',
          'Client credentials sent both in the Authorization header and in the body',
          'two_auth_methods',
        );
      }
      const basic = parseBasic(authz);
      if (typeof basic === 'object' && bodyClientId !== undefined && bodyClientId !== basic.clientId) {
        throw new OAuthFailure(
          400,
          'invalid_request',
          'client_id in the body differs from the Basic credentials',
          'client_id_mismatch',
        );
      }
      authenticated = await authenticateClient('basic', req, res);
    } else {
      authenticated = await authenticateClient('oauth2-client-password', req, res);
    }
    const { client, secretId } = authenticated;

    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw new OAuthFailure(
        400,
        'unsupported_grant_type',
        `grant_type must be ${GRANT_TYPES.join(' or ')}`,
        'unsupported_grant_type',
      );
    }
    const scope = stringParam(body, 'scope');
    if (!scope) throw new OAuthFailure(400, 'invalid_request', `scope is required; use ${API_SCOPE}`, 'missing_scope');
    const scopes = scope.trim().split(/ +/);
    if (scopes.some((s) => s !== API_SCOPE)) {
      throw new OAuthFailure(400, 'invalid_scope', `The only scope is ${API_SCOPE}`, 'invalid_scope');
    }

    if ((grantType as GrantType) === 'client_credentials') {
      const tenantId = client.tenantIds[0];
      if (!tenantId) {
        throw new OAuthFailure(
          400,
          'unauthorized_client',
          'The client is not assigned to a tenant',
          'client_without_tenant',
        );
      }
      return tokens.issue({ grantType: 'client_credentials', clientId: client.clientId, secretId, tenantId });
    }

    const username = stringParam(body, 'username');
    const password = stringParam(body, 'password');
    if (!username || !password) {
      throw new OAuthFailure(
        400,
        'invalid_request',
        'username and password are required for grant_type password',
        'missing_user_credentials',
      );
    }
    const found = await store.findUserByUsername(username);
    // A user outside the client's tenants is treated as unknown: their password is never checked (a decoy is, for
    // the time), and the answer is the one for a wrong password, so a client cannot test other tenants' passwords.
    const user = found && client.tenantIds.includes(found.tenantId) ? found : null;
    const passwordOk = user ? await verifySecret(password, user.passwordHash) : await verifyAgainstDecoy(password);
    if (!user || !passwordOk) {
      const reason = user ? 'wrong_password' : found ? 'user_not_in_client_tenant' : 'unknown_user';
      throw new OAuthFailure(400, 'invalid_grant', 'The username or password is incorrect', reason);
    }
    // Told only to a caller that gave this user's right password.
    if (user.disabled) throw new OAuthFailure(400, 'invalid_grant', 'The user account is disabled', 'user_disabled');
    return tokens.issue({
      grantType: 'password',
      clientId: client.clientId,
      secretId,
      tenantId: user.tenantId,
      userId: user.id,
      username: user.username,
    });
  }

  function logRefusal(req: Request, failure: OAuthFailure): void {
    logger.warn(
      {
        clientId: claimedClientId(req),
        grantType: claimed(bodyOf(req).grant_type),
        reason: failure.reason,
        error: failure.error,
        requestId: requestIdOf(req),
      },
      'token request refused',
    );
  }

  const tokenHandler: RequestHandler = async (req, response) => {
    try {
      const issued = await grant(req, response);
      logger.info(
        {
          clientId: issued.claims.client_id,
          grantType: issued.claims.gty,
          tenant: issued.claims.tenant,
          sub: issued.claims.sub,
          jti: issued.claims.jti,
          requestId: requestIdOf(req),
        },
        'access token issued',
      );
      response.set(NO_STORE).status(200).json({
        access_token: issued.accessToken,
        expires_in: issued.expiresIn,
        token_type: 'Bearer',
        scope: issued.scope,
      });
    } catch (err) {
      if (!(err instanceof OAuthFailure)) throw err;
      logRefusal(req, err);
      sendOAuthError(response, err);
    }
  };

  /** Parser and store failures on the token path, still in RFC 6749 shape. */
  const tokenErrors: ErrorRequestHandler = (err: unknown, req, response, next) => {
    if (response.headersSent) return next(err);
    const e = (err ?? {}) as { status?: unknown; type?: unknown };
    let failure: OAuthFailure;
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      failure =
        e.type === 'entity.too.large'
          ? new OAuthFailure(413, 'invalid_request', 'The request body is too large', 'body_too_large')
          : new OAuthFailure(
              400,
              'invalid_request',
              'The request body is not a valid form-url-encoded body',
              'malformed_body',
            );
      logRefusal(req, failure);
    } else {
      logger.error({ err, requestId: requestIdOf(req) }, 'token request failed');
      failure = new OAuthFailure(
        503,
        'temporarily_unavailable',
        'The identity server cannot answer right now; retry later',
        'internal',
      );
      response.set('Retry-After', '5');
    }
    sendOAuthError(response, failure);
  };

  const {
    rateLimitTokenPerMinute: requestsMax,
    rateLimitTokenFailuresPerMinute: failuresMax,
    rateLimitTokenSourceFailuresPerMinute: sourceFailuresMax,
  } = config.auth;
  /** The source address, IPv6 grouped by /56 as express-rate-limit advises. */
  const sourceOf = (req: Request): string => ipKeyGenerator(req.ip ?? '');
  /** One client id from one address; the address alone when no client id is sent. */
  const sourceAndClient = (req: Request): string => {
    const id = claimedClientId(req);
    return id ? `addr:${sourceOf(req)}|client:${id}` : `addr:${sourceOf(req)}`;
  };
  /**
   * Nothing is ever counted per claimed client id alone: anyone may claim any id, and a budget shared that way would
   * let a stranger's wrong secrets refuse the client's right one. Failure budgets (`skipSuccessfulRequests`) stop
   * guessing from one address; the request budget bounds the load one client puts on the identity server from one
   * address. A client that reaches a limit has used up its own budget, from its own address.
   */
  type Key = (req: Request) => string;
  const limit = (name: string, max: number, key: Key, failuresOnly: boolean, refusal: () => OAuthFailure) =>
    rateLimit({
      windowMs: 60_000,
      limit: max,
      standardHeaders: 'draft-6',
      legacyHeaders: false,
      skipSuccessfulRequests: failuresOnly,
      ...(deps.rateLimitStore ? { store: deps.rateLimitStore(name) } : {}),
      logger: {
        error: (err: unknown, msg?: string) => logger.error({ err, limiter: name }, msg ?? 'token rate limiter error'),
        warn: (err: unknown, msg?: string) => logger.warn({ err, limiter: name }, msg ?? 'token rate limiter warning'),
      },
      keyGenerator: key,
      handler: (req, response) => {
        const failure = refusal();
        logRefusal(req, failure);
        sendOAuthError(response, failure);
      },
    });
  const tooMany = (description: string, reason: string) =>
    new OAuthFailure(429, 'temporarily_unavailable', description, reason);
  const limiters = [
    limit(
      'token-source-failures',
      sourceFailuresMax,
      (req) => `addr:${sourceOf(req)}`,
      true,
      () =>
        tooMany(
          `Too many failed token requests from this address: at most ${sourceFailuresMax} per minute; ` +
            'check the client credentials',
          'source_failures_rate_limited',
        ),
    ),
    limit('token-failures', failuresMax, sourceAndClient, true, () =>
      tooMany(
        `Too many failed token requests for this client from this address: at most ${failuresMax} per minute; ` +
          'check the client credentials',
        'failures_rate_limited',
      ),
    ),
    limit('token-requests', requestsMax, sourceAndClient, false, () =>
      tooMany(
        `Too many token requests: at most ${requestsMax} per minute; reuse the token until it nears expiry`,
        'rate_limited',
      ),
    ),
  ];

  const router = express.Router();
  router.post(
    TOKEN_PATH,
    express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }),
    ...limiters,
    tokenHandler,
    tokenErrors,
  );
  router.all(TOKEN_PATH, (req, response) => {
    const failure = new OAuthFailure(405, 'invalid_request', 'Use POST', 'method_not_allowed');
    logRefusal(req, failure);
    response.set('Allow', 'POST');
    sendOAuthError(response, failure);
  });

  router.get(JWKS_PATH, async (_req, response, next) => {
    try {
      const jwks = await signingKeys.jwks();
      // Short: a verifier that caches longer misses a freshly rotated key until it refetches on the unknown kid.
      response.set('Cache-Control', 'public, max-age=300').type('application/jwk-set+json').send(JSON.stringify(jwks));
    } catch (err) {
      next(new GatewayError('STORAGE_FAILED', 'Signing keys unavailable', { cause: err }));
    }
  });

  router.get(DISCOVERY_PATH, (_req, response) => {
    const base = config.auth.baseUrl;
    response.set('Cache-Control', 'public, max-age=3600').json({
      issuer: config.auth.issuer,
      token_endpoint: `${base}${TOKEN_PATH}`,
      jwks_uri: `${base}${JWKS_PATH}`,
      grant_types_supported: [...GRANT_TYPES],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      scopes_supported: [API_SCOPE],
    });
  });

  return router;
}
