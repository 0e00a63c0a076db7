import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type KeyLike } from 'jose';
import { InMemoryIdentityStore } from '../../../src/auth/in-memory-identity-store';
import { SigningKeyService } from '../../../src/auth/signing-keys';
import { TokenService, TokenVerificationError, type TokenRejection } from '../../../src/auth/token-service';

const config = {
  auth: {
    tokenTtlSeconds: 3600,
    signingKeyRotationDays: 30,
    issuer: 'https://auth.example.test',
    audience: 'invoice-gateway-api',
  },
};
const T0 = Date.parse('2025-03-01T12:00:00Z');

let clock: number;
const now = () => new Date(clock);
let store: InMemoryIdentityStore;
let keys: SigningKeyService;
let tokens: TokenService;
let privateKey: KeyLike;
let kid: string;

const ccSubject = {
  grantType: 'client_credentials',
  clientId: 'client-a',
  secretId: 'sec-1',
  tenantId: 'ten-1',
} as const;

beforeEach(async () => {
  clock = T0;
  store = new InMemoryIdentityStore();
  keys = new SigningKeyService({ store, config, now });
  await keys.init();
  tokens = new TokenService({ signingKeys: keys, config, now });
  const [record] = await store.listSigningKeys();
  kid = record!.kid;
  privateKey = (await importJWK(record!.privateJwk as never, 'ES256')) as KeyLike;
});

/** A token made with our real key but claims of the test's choosing. */
function forge(claims: Record<string, unknown>, header: Record<string, unknown> = {}, key: KeyLike = privateKey) {
  const iat = Math.floor(clock / 1000);
  return new SignJWT({
    iss: config.auth.issuer,
    aud: config.auth.audience,
    sub: 'client-a',
    client_id: 'client-a',
    tenant: 'ten-1',
    scope: 'ap',
    iat,
    exp: iat + 3600,
    jti: 'j-1',
    sid: 'sec-1',
    gty: 'client_credentials',
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt', ...header })
    .sign(key);
}

async function rejection(token: string): Promise<TokenRejection> {
  try {
    await tokens.verify(token);
  } catch (err) {
    if (err instanceof TokenVerificationError) return err.reason;
    throw err;
  }
  throw new Error('token was accepted');
}

describe('TokenService.issue', () => {
  it('client_credentials: the claims of the contract, signed ES256 with a kid', async () => {
    const issued = await tokens.issue(ccSubject);
    expect(issued.expiresIn).toBe(3600);
    expect(issued.scope).toBe('ap');
    expect(decodeProtectedHeader(issued.accessToken)).toEqual({ alg: 'ES256', kid, typ: 'at+jwt' });
    const claims = decodeJwt(issued.accessToken);
    expect(claims).toEqual({
      iss: 'https://auth.example.test',
      aud: 'invoice-gateway-api',
      sub: 'client-a',
      client_id: 'client-a',
      tenant: 'ten-1',
      scope: 'ap',
      iat: T0 / 1000,
      exp: T0 / 1000 + 3600,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sid: 'sec-1',
      gty: 'client_credentials',
    });
    expect(claims).toEqual(issued.claims);
  });

  it('password: subject is the user, with username and the user tenant', async () => {
    const issued = await tokens.issue({
      grantType: 'password',
      clientId: 'client-a',
      secretId: 'sec-1',
      tenantId: 'ten-2',
      userId: 'u-9',
      username: 'jane',
    });
    expect(decodeJwt(issued.accessToken)).toMatchObject({
      sub: 'user:u-9',
      username: 'jane',
      tenant: 'ten-2',
      gty: 'password',
    });
  });

  it('every token gets its own jti', async () => {
    const a = await tokens.issue(ccSubject);
    const b = await tokens.issue(ccSubject);
    expect(a.claims.jti).not.toBe(b.claims.jti);
  });

  it('honours the configured lifetime', async () => {
    const short = new TokenService({
      signingKeys: keys,
      config: { auth: { ...config.auth, tokenTtlSeconds: 600 } },
      now,
    });
    const issued = await short.issue(ccSubject);
    expect(issued.expiresIn).toBe(600);
    expect(issued.claims.exp - issued.claims.iat).toBe(600);
  });
});

describe('TokenService.verify', () => {
  it('accepts its own tokens and returns the claims', async () => {
    const { accessToken, claims } = await tokens.issue(ccSubject);
    await expect(tokens.verify(accessToken)).resolves.toEqual(claims);
  });

  it('expired: refused after exp plus 5 s of clock tolerance, not before', async () => {
    const { accessToken } = await tokens.issue(ccSubject);
    clock = T0 + 3600_000 + 4_000;
    await expect(tokens.verify(accessToken)).resolves.toBeDefined();
    clock = T0 + 3600_000 + 5_000;
    expect(await rejection(accessToken)).toBe('expired');
  });

  it('wrong audience', async () => {
    expect(await rejection(await forge({ aud: 'someone-else' }))).toBe('wrong_audience');
  });

  it('wrong issuer', async () => {
    expect(await rejection(await forge({ iss: 'https://evil.example' }))).toBe('wrong_issuer');
  });

  it('unknown kid', async () => {
    expect(await rejection(await forge({}, { kid: 'no-such-key' }))).toBe('unknown_key');
    expect(await rejection(await forge({}, { kid: undefined }))).toBe('unknown_key');
  });

  it('signed by a foreign key that claims our kid', async () => {
    const { privateKey: foreign } = await generateKeyPair('ES256');
    expect(await rejection(await forge({}, {}, foreign))).toBe('bad_signature');
  });

  it('a foreign key with its own kid is unknown, even when its JWK rides along in the header', async () => {
    const { publicKey, privateKey: foreign } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    expect(await rejection(await forge({}, { kid: 'attacker', jwk }, foreign))).toBe('unknown_key');
  });

  it('tampered signature', async () => {
    const { accessToken } = await tokens.issue(ccSubject);
    const [h, p, sig] = accessToken.split('.');
    const flipped = (sig![5] === 'A' ? 'B' : 'A') + '';
    const bad = `${h}.${p}.${sig!.slice(0, 5)}${flipped}${sig!.slice(6)}`;
    expect(await rejection(bad)).toBe('bad_signature');
  });

  it('tampered payload under the original signature', async () => {
    const { accessToken } = await tokens.issue(ccSubject);
    const [h, , sig] = accessToken.split('.');
    const payload = Buffer.from(JSON.stringify({ ...decodeJwt(accessToken), tenant: 'ten-other' })).toString(
      'base64url',
    );
    expect(await rejection(`${h}.${payload}.${sig}`)).toBe('bad_signature');
  });

  it('alg none is refused', async () => {
    const { accessToken } = await tokens.issue(ccSubject);
    const [, p] = accessToken.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'none', kid, typ: 'at+jwt' })).toString('base64url');
    expect(await rejection(`${header}.${p}.`)).toBe('alg_not_allowed');
  });

  it('HS256 with the public key as secret is refused', async () => {
    const { publicJwk } = (await store.listSigningKeys())[0]!;
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const token = await new SignJWT(decodeJwt((await tokens.issue(ccSubject)).accessToken))
      .setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' })
      .sign(secret);
    expect(await rejection(token)).toBe('alg_not_allowed');
  });

  it('missing scope ap', async () => {
    expect(await rejection(await forge({ scope: 'other' }))).toBe('insufficient_scope');
    expect(await rejection(await forge({ scope: '' }))).toBe('insufficient_scope');
    expect(await rejection(await forge({ scope: 'apx' }))).toBe('insufficient_scope');
    await expect(tokens.verify(await forge({ scope: 'other ap' }))).resolves.toMatchObject({ scope: 'other ap' });
  });

  it('unknown grant type', async () => {
    expect(await rejection(await forge({ gty: 'authorization_code' }))).toBe('unknown_grant_type');
  });

  it('missing or inconsistent claims', async () => {
    expect(await rejection(await forge({ sid: undefined }))).toBe('invalid_claims');
    expect(await rejection(await forge({ jti: undefined }))).toBe('invalid_claims');
    expect(await rejection(await forge({ exp: undefined }))).toBe('invalid_claims');
    expect(await rejection(await forge({ scope: undefined }))).toBe('invalid_claims');
    expect(await rejection(await forge({ sub: 'someone-else' }))).toBe('invalid_claims');
    expect(await rejection(await forge({ gty: 'password', sub: 'user:u-1' }))).toBe('invalid_claims');
  });

  it('another token type signed with our key is refused', async () => {
    expect(await rejection(await forge({}, { typ: 'JWT' }))).toBe('invalid_claims');
  });

  it('not yet valid (nbf beyond the tolerance)', async () => {
    expect(await rejection(await forge({ nbf: T0 / 1000 + 60 }))).toBe('not_yet_valid');
  });

  it('garbage is malformed', async () => {
    for (const t of ['', 'abc', 'a.b.c', 'a.b', '...', 'eyJhbGciOiJFUzI1NiJ9.e30']) {
      expect(await rejection(t)).toBe('malformed');
    }
  });
});
