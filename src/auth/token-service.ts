import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type KeyLike } from 'jose';
import { z } from 'zod';
import type { Config } from '../config/load-config';
import { SIGNING_ALG, type SigningKey } from './signing-keys';

export const API_SCOPE = 'ap';
export const GRANT_TYPES = ['client_credentials', 'password'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
/** RFC 9068 header type: keeps any other JWT signed with the same key from passing as an access token. */
export const ACCESS_TOKEN_TYP = 'at+jwt';
/** Spec 5.5 lets a client renew about 100 s before expiry; 5 s only absorbs clock drift between hosts. */
export const CLOCK_TOLERANCE_SECONDS = 5;

export interface AccessTokenClaims {
  iss: string;
  aud: string;
  /** clientId, or `user:<userId>` for the password grant. */
  sub: string;
  client_id: string;
  tenant: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  /** Id of the client secret that authenticated: revoking it invalidates this token. */
  sid: string;
  gty: GrantType;
  username?: string;
}

export type TokenSubject =
  | { grantType: 'client_credentials'; clientId: string; secretId: string; tenantId: string }
  | { grantType: 'password'; clientId: string; secretId: string; tenantId: string; userId: string; username: string };

export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  scope: typeof API_SCOPE;
  claims: AccessTokenClaims;
}

export type TokenRejection =
  | 'malformed'
  | 'alg_not_allowed'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'insufficient_scope'
  | 'unknown_grant_type'
  | 'invalid_claims';

export class TokenVerificationError extends Error {
  constructor(
    readonly reason: TokenRejection,
    message: string,
  ) {
    super(message);
    this.name = 'TokenVerificationError';
  }
}

/** What the token service needs of the key service (a narrow seam for tests). */
export interface TokenKeys {
  currentKey(): Promise<SigningKey>;
  verificationKey(kid: string): Promise<KeyLike | null>;
}

export interface TokenServiceOptions {
  signingKeys: TokenKeys;
  config: { auth: Pick<Config['auth'], 'issuer' | 'audience' | 'tokenTtlSeconds'> };
  now?: () => Date;
}

const claimsSchema = z.object({
  sub: z.string().min(1),
  client_id: z.string().min(1),
  tenant: z.string().min(1),
  scope: z.string(),
  iat: z.number().int(),
  exp: z.number().int(),
  jti: z.string().min(1),
  sid: z.string().min(1),
  gty: z.string(),
  username: z.string().min(1).optional(),
});

export class TokenService {
  private readonly keys: TokenKeys;
  private readonly issuer: string;
  private readonly audience: string;
  private readonly ttlSeconds: number;
  private readonly now: () => Date;

  constructor(options: TokenServiceOptions) {
    this.keys = options.signingKeys;
    this.issuer = options.config.auth.issuer;
    this.audience = options.config.auth.audience;
    this.ttlSeconds = options.config.auth.tokenTtlSeconds;
    this.now = options.now ?? (() => new Date());
  }

  get expiresIn(): number {
    return this.ttlSeconds;
  }

  async issue(subject: TokenSubject): Promise<IssuedToken> {
    const key = await this.keys.currentKey();
    const iat = Math.floor(this.now().getTime() / 1000);
    const claims: AccessTokenClaims = {
      iss: this.issuer,
      aud: this.audience,
      sub: subject.grantType === 'password' ? `user:${subject.userId}` : subject.clientId,
      client_id: subject.clientId,
      tenant: subject.tenantId,
      scope: API_SCOPE,
      iat,
      exp: iat + this.ttlSeconds,
      jti: randomUUID(),
      sid: subject.secretId,
      gty: subject.grantType,
      ...(subject.grantType === 'password' ? { username: subject.username } : {}),
    };
    const accessToken = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: ACCESS_TOKEN_TYP })
      .sign(key.privateKey);
    return { accessToken, expiresIn: this.ttlSeconds, scope: API_SCOPE, claims };
  }

  /** Checks signature, lifetime, issuer, audience, scope and grant type; throws TokenVerificationError. */
  async verify(token: string): Promise<AccessTokenClaims> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw new TokenVerificationError('malformed', 'the access token is not a well-formed JWS');
    }
    if (token.split('.').length !== 3) {
      throw new TokenVerificationError('malformed', 'the access token is not a compact JWS');
    }
    if (header.alg !== SIGNING_ALG) {
      throw new TokenVerificationError('alg_not_allowed', `the access token is not signed with ${SIGNING_ALG}`);
    }
    if (typeof header.kid !== 'string' || header.kid === '') {
      throw new TokenVerificationError('unknown_key', 'the access token names no signing key');
    }
    const key = await this.keys.verificationKey(header.kid);
    if (!key)
      throw new TokenVerificationError('unknown_key', 'the access token was signed by an unknown or retired key');

    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [SIGNING_ALG],
        issuer: this.issuer,
        audience: this.audience,
        typ: ACCESS_TOKEN_TYP,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: this.now(),
        requiredClaims: ['iss', 'aud', 'sub', 'iat', 'exp', 'jti'],
      }));
    } catch (err) {
      throw toRejection(err);
    }

    const parsed = claimsSchema.safeParse(payload);
    if (!parsed.success) throw new TokenVerificationError('invalid_claims', 'the access token lacks required claims');
    const c = parsed.data;
    if (!(GRANT_TYPES as readonly string[]).includes(c.gty)) {
      throw new TokenVerificationError(
        'unknown_grant_type',
        'the access token was issued for an unsupported grant type',
      );
    }
    const gty = c.gty as GrantType;
    if (!c.scope.split(' ').includes(API_SCOPE)) {
      throw new TokenVerificationError('insufficient_scope', `the access token lacks scope ${API_SCOPE}`);
    }
    const subjectOk =
      gty === 'password' ? c.sub.startsWith('user:') && c.sub.length > 5 && !!c.username : c.sub === c.client_id;
    if (!subjectOk)
      throw new TokenVerificationError('invalid_claims', 'the access token subject does not match its grant');
    return {
      iss: this.issuer,
      aud: this.audience,
      sub: c.sub,
      client_id: c.client_id,
      tenant: c.tenant,
      scope: c.scope,
      iat: c.iat,
      exp: c.exp,
      jti: c.jti,
      sid: c.sid,
      gty,
      ...(c.username !== undefined ? { username: c.username } : {}),
    };
  }
}

function toRejection(err: unknown): TokenVerificationError {
  if (err instanceof joseErrors.JWTExpired)
    return new TokenVerificationError('expired', 'the access token has expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'iss':
        return new TokenVerificationError('wrong_issuer', 'the access token was issued by another issuer');
      case 'aud':
        return new TokenVerificationError('wrong_audience', 'the access token is meant for another audience');
      case 'nbf':
        return new TokenVerificationError('not_yet_valid', 'the access token is not valid yet');
      default:
        return new TokenVerificationError('invalid_claims', `the access token has an invalid "${err.claim}"`);
    }
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new TokenVerificationError('bad_signature', 'the access token signature is invalid');
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed) {
    return new TokenVerificationError('alg_not_allowed', `the access token is not signed with ${SIGNING_ALG}`);
  }
  return new TokenVerificationError('malformed', 'the access token is not a well-formed JWT');
}
