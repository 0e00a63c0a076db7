import express, { type Express } from 'express';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, SignJWT, type KeyLike } from 'jose';
import pino from 'pino';
import request from 'supertest';
import { notFoundHandler, problemDetailsHandler } from '../../api/problem-details';
import { createTokenRouter } from '../../api/routes/token.routes';
import {
  createApiRateLimit,
  createAuthenticate,
  createSubscriptionKeyCheck,
  principalOf,
} from '../../src/auth/authenticate';
import { InMemoryIdentityStore } from '../../src/auth/in-memory-identity-store';
import * as secretHash from '../../src/auth/secret-hash';
import { SigningKeyService } from '../../src/auth/signing-keys';
import { TokenService } from '../../src/auth/token-service';
import { loadConfig } from '../../src/config/load-config';

const AUTH = 'https://auth.example.test';
const FORM = 'application/x-www-form-urlencoded';
const PASSWORD = 'Abcdefgh1234!';
/** Exercises RFC 6749 §2.3.1 encoding in Basic: reserved and non-ASCII characters in both id and secret. */
const ODD_ID = 'erp:app/1 ü';
const ODD_SECRET = 'p+ss:w%rd/&=é';

interface Harness {
  app: Express;
  store: InMemoryIdentityStore;
  tokens: TokenService;
  keys: SigningKeyService;
  logs: Array<Record<string, unknown>>;
  rawLogs: string[];
  secrets: { primary: string; primaryId: string; second: string; secondId: string; odd: string };
  users: { jane: { id: string }; bob: { id: string }; dora: { id: string } };
}

async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const config = loadConfig({
    NODE_ENV: 'test',
    AUTH_BASE_URL: AUTH,
    SUBSCRIPTION_KEYS: 'sk-one,sk-two',
    // Every request here comes from one address and many are refused on purpose; the budgets have their own tests.
    RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: '1000',
    RATE_LIMIT_TOKEN_SOURCE_FAILURES_PER_MINUTE: '1000',
    ...env,
  });
  const rawLogs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void rawLogs.push(line) });
  // Low scrypt cost: the hashing itself is covered by the unit tests.
  const store = new InMemoryIdentityStore({ ln: 10, r: 8, p: 1 });
  const primary = await store.addClientSecret('partner-app', { tenantIds: ['ten-a', 'ten-b'], name: 'Partner' });
  const second = await store.addClientSecret('partner-app');
  const odd = await store.addClientSecret(ODD_ID, { tenantIds: ['ten-a'], secret: ODD_SECRET });
  await store.addClientSecret('off-app', { tenantIds: ['ten-a'], secret: 'off-secret' });
  store.setClientDisabled('off-app', true);
  await store.addClientSecret('no-tenant-app', { tenantIds: [], secret: 'nt-secret' });
  await store.addClientSecret('other-app', { tenantIds: ['ten-c'], secret: 'other-secret' });
  const jane = await store.addUser({
    tenantId: 'ten-a',
    username: 'jane',
    password: PASSWORD,
    partyIds: ['0106:12345678'],
  });
  const bob = await store.addUser({ tenantId: 'ten-c', username: 'bob', password: PASSWORD, partyIds: [] });
  const dora = await store.addUser({
    tenantId: 'ten-b',
    username: 'dora',
    password: PASSWORD,
    partyIds: [],
    disabled: true,
  });

  const keys = new SigningKeyService({ store, config, logger });
  await keys.init();
  const tokens = new TokenService({ signingKeys: keys, config });

  const app = express();
  let n = 0;
  app.use((req, res, next) => {
    const id = `req-${++n}`;
    Object.assign(req, { id });
    res.set('X-Request-Id', id);
    next();
  });
  app.use(createTokenRouter({ store, tokens, signingKeys: keys, config, logger }));
  const api = express.Router();
  api.use(
    createSubscriptionKeyCheck(config),
    createAuthenticate({ store, tokens, config }),
    createApiRateLimit(config),
  );
  api.get('/me', (_req, res) => {
    res.json(principalOf(res));
  });
  app.use('/api/v1', api);
  app.use(notFoundHandler);
  app.use(problemDetailsHandler(logger));

  return {
    app,
    store,
    tokens,
    keys,
    rawLogs,
    get logs() {
      return rawLogs.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    secrets: {
      primary: primary.secret,
      primaryId: primary.secretId,
      second: second.secret,
      secondId: second.secretId,
      odd: odd.secret,
    },
    users: { jane, bob, dora },
  };
}

function tokenRequest(app: Express, form: Record<string, string>) {
  return request(app).post('/connect/token').type('form').send(new URLSearchParams(form).toString());
}

/** RFC 6749 §2.3.1: form-url-encode id and secret, then Basic. */
function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

async function tokenFor(h: Harness, form: Record<string, string>): Promise<string> {
  const res = await tokenRequest(h.app, { grant_type: 'client_credentials', scope: 'ap', ...form });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

const me = (app: Express, token?: string) => {
  const r = request(app).get('/api/v1/me');
  return token === undefined ? r : r.set('Authorization', `Bearer ${token}`);
};

function expectOAuthError(res: request.Response, status: number, error: string, description?: RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
  expect(res.body.error).toBe(error);
  if (description) expect(res.body.error_description).toMatch(description);
  expect(res.headers['cache-control']).toBe('no-store');
  if (status === 401) expect(res.headers['www-authenticate']).toBe('Basic realm="invoice-gateway"');
  else expect(res.headers['www-authenticate']).toBeUndefined();
}

function expectProblem401(res: request.Response, detail: RegExp, challenge: string | RegExp) {
  expect(res.status).toBe(401);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status: 401, code: 'UNAUTHORIZED', title: 'Unauthorized' });
  expect(res.body.instance).toMatch(/^\/api\/v1\/me/);
  expect(res.body.detail).toMatch(detail);
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
  if (typeof challenge === 'string') expect(res.headers['www-authenticate']).toBe(challenge);
  else expect(res.headers['www-authenticate']).toMatch(challenge);
}

async function signingKey(h: Harness): Promise<{ kid: string; key: KeyLike }> {
  const [record] = await h.store.listSigningKeys();
  return { kid: record!.kid, key: (await importJWK(record!.privateJwk as never, 'ES256')) as KeyLike };
}

async function mint(h: Harness, claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const { kid, key } = await signingKey(h);
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: AUTH,
    aud: 'invoice-gateway-api',
    sub: 'partner-app',
    client_id: 'partner-app',
    tenant: 'ten-a',
    scope: 'ap',
    iat,
    exp: iat + 3600,
    jti: 'minted-1',
    sid: h.secrets.primaryId,
    gty: 'client_credentials',
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt', ...header })
    .sign(key);
}

const BEARER_PLAIN = 'Bearer realm="invoice-gateway"';
const invalidToken = (description: RegExp) =>
  new RegExp(`^Bearer realm="invoice-gateway", error="invalid_token", error_description="${description.source}"$`);

describe('POST /connect/token', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });

  describe('grants', () => {
    it('client_credentials with credentials in the form body', async () => {
      const res = await tokenRequest(h.app, {
        grant_type: 'client_credentials',
        client_id: 'partner-app',
        client_secret: h.secrets.primary,
        scope: 'ap',
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.pragma).toBe('no-cache');
      expect(res.body).toEqual({
        access_token: expect.any(String),
        expires_in: 3600,
        token_type: 'Bearer',
        scope: 'ap',
      });
      const claims = decodeJwt(res.body.access_token);
      expect(claims).toMatchObject({
        iss: AUTH,
        aud: 'invoice-gateway-api',
        sub: 'partner-app',
        client_id: 'partner-app',
        tenant: 'ten-a',
        scope: 'ap',
        sid: h.secrets.primaryId,
        gty: 'client_credentials',
      });
      expect(claims.exp! - claims.iat!).toBe(3600);

      const who = await me(h.app, res.body.access_token);
      expect(who.status).toBe(200);
      expect(who.body).toEqual({
        clientId: 'partner-app',
        secretId: h.secrets.primaryId,
        grantType: 'client_credentials',
        scope: ['ap'],
        tenantIds: ['ten-a', 'ten-b'],
        tokenId: claims.jti,
        expiresAt: new Date(claims.exp! * 1000).toISOString(),
      });
    });

    it('client_credentials with HTTP Basic', async () => {
      const res = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic('partner-app', h.secrets.second))
        .type('form')
        .send('grant_type=client_credentials&scope=ap');
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token)).toMatchObject({ client_id: 'partner-app', sid: h.secrets.secondId });
    });

    it('Basic credentials are form-url-decoded (RFC 6749 §2.3.1), and the secret may contain colons', async () => {
      const res = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic(ODD_ID, ODD_SECRET))
        .type('form')
        .send('grant_type=client_credentials&scope=ap');
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).client_id).toBe(ODD_ID);

      // Without the encoding step the secret's "%rd" is no valid escape: refused, not guessed at.
      const raw = `Basic ${Buffer.from(`${encodeURIComponent(ODD_ID)}:${ODD_SECRET}`).toString('base64')}`;
      const refused = await request(h.app)
        .post('/connect/token')
        .set('Authorization', raw)
        .type('form')
        .send('grant_type=client_credentials&scope=ap');
      expectOAuthError(refused, 401, 'invalid_client', /malformed Basic credentials/);

      // And a bare "+" reads as a space: wrong secret.
      const plus = await request(h.app)
        .post('/connect/token')
        .set('Authorization', `Basic ${Buffer.from(`partner-app:${h.secrets.primary}+`).toString('base64')}`)
        .type('form')
        .send('grant_type=client_credentials&scope=ap');
      expectOAuthError(plus, 401, 'invalid_client', /client_secret is not valid/);
    });

    it('Basic with a client_id in the body too is fine when both name the same client', async () => {
      const res = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic('partner-app', h.secrets.primary))
        .type('form')
        .send('grant_type=client_credentials&scope=ap&client_id=partner-app');
      expect(res.status).toBe(200);
      const mismatch = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic('partner-app', h.secrets.primary))
        .type('form')
        .send('grant_type=client_credentials&scope=ap&client_id=other-app');
      expectOAuthError(mismatch, 400, 'invalid_request', /differs/);
    });

    it('password grant: the token is the user, and /me shows the linked parties', async () => {
      const res = await tokenRequest(h.app, {
        grant_type: 'password',
        client_id: 'partner-app',
        client_secret: h.secrets.primary,
        scope: 'ap',
        username: 'jane',
        password: PASSWORD,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ expires_in: 3600, token_type: 'Bearer', scope: 'ap' });
      const claims = decodeJwt(res.body.access_token);
      expect(claims).toMatchObject({
        sub: `user:${h.users.jane.id}`,
        username: 'jane',
        tenant: 'ten-a',
        gty: 'password',
      });

      const who = await me(h.app, res.body.access_token);
      expect(who.status).toBe(200);
      expect(who.body).toMatchObject({
        clientId: 'partner-app',
        grantType: 'password',
        scope: ['ap'],
        tenantIds: ['ten-a'],
        username: 'jane',
        userId: h.users.jane.id,
        partyIds: ['0106:12345678'],
      });
    });

    it('password grant with Basic client authentication', async () => {
      const res = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic('partner-app', h.secrets.primary))
        .type('form')
        .send(
          new URLSearchParams({ grant_type: 'password', scope: 'ap', username: 'jane', password: PASSWORD }).toString(),
        );
      expect(res.status).toBe(200);
    });

    it('scope may be a space-separated list that holds only ap', async () => {
      const res = await tokenRequest(h.app, {
        grant_type: 'client_credentials',
        client_id: 'partner-app',
        client_secret: h.secrets.primary,
        scope: 'ap ap',
      });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('ap');
    });
  });

  describe('client authentication failures → 401 invalid_client', () => {
    const cc = { grant_type: 'client_credentials', scope: 'ap' };

    it('unknown client_id and wrong client_secret get one answer, in the body and in Basic', async () => {
      const unknown = await tokenRequest(h.app, { ...cc, client_id: 'nobody', client_secret: h.secrets.primary });
      expectOAuthError(unknown, 401, 'invalid_client', /client_id or client_secret is not valid/);
      const res = await tokenRequest(h.app, { ...cc, client_id: 'partner-app', client_secret: 'wrong' });
      expectOAuthError(res, 401, 'invalid_client', /client_id or client_secret is not valid/);
      const viaBasic = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic('partner-app', 'wrong'))
        .type('form')
        .send('grant_type=client_credentials&scope=ap');
      const unknownViaBasic = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic('nobody', 'wrong'))
        .type('form')
        .send('grant_type=client_credentials&scope=ap');
      // No oracle for which client ids exist: the same body and headers whether the id is known or not.
      for (const other of [res, viaBasic, unknownViaBasic]) {
        expect(other.body).toEqual(unknown.body);
        expect(other.headers['www-authenticate']).toBe(unknown.headers['www-authenticate']);
      }
      // The log still tells the operator which it was.
      expect(h.logs.some((e) => e.reason === 'unknown_client' && e.clientId === 'nobody')).toBe(true);
      expect(h.logs.some((e) => e.reason === 'wrong_secret' && e.clientId === 'partner-app')).toBe(true);
    });

    it('an unknown client_id still costs one secret verification, like a known one', async () => {
      const spy = jest.spyOn(secretHash, 'verifyAgainstDecoy');
      try {
        await tokenRequest(h.app, { ...cc, client_id: 'nobody-else', client_secret: 'guess' });
        expect(spy).toHaveBeenCalledTimes(1);
        expect(spy.mock.calls[0]?.[1]).toEqual(secretHash.CLIENT_SECRET_SCRYPT_PARAMS);
      } finally {
        spy.mockRestore();
      }
    });

    it('another client’s secret does not authenticate this client', async () => {
      const res = await tokenRequest(h.app, { ...cc, client_id: 'other-app', client_secret: h.secrets.primary });
      expectOAuthError(res, 401, 'invalid_client');
    });

    it('disabled client', async () => {
      const res = await tokenRequest(h.app, { ...cc, client_id: 'off-app', client_secret: 'off-secret' });
      expectOAuthError(res, 401, 'invalid_client', /disabled/);
    });

    it('no client credentials at all, or a secret without id', async () => {
      expectOAuthError(await tokenRequest(h.app, cc), 401, 'invalid_client', /required/);
      expectOAuthError(
        await tokenRequest(h.app, { ...cc, client_id: 'partner-app' }),
        401,
        'invalid_client',
        /required/,
      );
      expectOAuthError(await tokenRequest(h.app, { ...cc, client_secret: h.secrets.primary }), 401, 'invalid_client');
    });

    it('an Authorization scheme other than Basic', async () => {
      const res = await request(h.app)
        .post('/connect/token')
        .set('Authorization', 'Bearer something')
        .type('form')
        .send(new URLSearchParams({ ...cc, client_id: 'partner-app', client_secret: h.secrets.primary }).toString());
      expectOAuthError(res, 401, 'invalid_client', /client_secret_basic and client_secret_post/);
    });

    it('malformed Basic credentials', async () => {
      const cases: Array<[string, number, string, RegExp]> = [
        ['Basic', 400, 'invalid_request', /not valid Basic credentials/],
        ['Basic !!!', 400, 'invalid_request', /not valid Basic credentials/],
        [`Basic ${Buffer.from('no-colon').toString('base64')}`, 400, 'invalid_request', /not valid Basic credentials/],
        [
          `Basic ${Buffer.from('partner-app:%E0%A4%A').toString('base64')}`,
          401,
          'invalid_client',
          /malformed Basic credentials/,
        ],
        [`Basic ${Buffer.from(':secret').toString('base64')}`, 401, 'invalid_client', /required/],
      ];
      for (const [header, status, error, description] of cases) {
        const res = await request(h.app)
          .post('/connect/token')
          .set('Authorization', header)
          .type('form')
          .send('grant_type=client_credentials&scope=ap');
        expectOAuthError(res, status, error, description);
      }
    });
  });

  describe('request errors → 400', () => {
    const auth = () => ({ client_id: 'partner-app', client_secret: h.secrets.primary });

    it('grant_type other than client_credentials or password → unsupported_grant_type', async () => {
      for (const grant of [
        'authorization_code',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:jwt-bearer',
        'PASSWORD',
      ]) {
        const res = await tokenRequest(h.app, { ...auth(), grant_type: grant, scope: 'ap' });
        expectOAuthError(res, 400, 'unsupported_grant_type', /client_credentials or password/);
      }
    });

    it('missing grant_type → invalid_request', async () => {
      expectOAuthError(
        await tokenRequest(h.app, { ...auth(), scope: 'ap' }),
        400,
        'invalid_request',
        /grant_type is required/,
      );
    });

    it('scope other than ap → invalid_scope; missing scope → invalid_request', async () => {
      const g = { ...auth(), grant_type: 'client_credentials' };
      expectOAuthError(await tokenRequest(h.app, { ...g, scope: 'openid' }), 400, 'invalid_scope', /only scope is ap/);
      expectOAuthError(await tokenRequest(h.app, { ...g, scope: 'ap admin' }), 400, 'invalid_scope');
      expectOAuthError(await tokenRequest(h.app, g), 400, 'invalid_request', /scope is required/);
      expectOAuthError(await tokenRequest(h.app, { ...g, scope: '' }), 400, 'invalid_request', /scope is required/);
    });

    it('client credentials both in Basic and in the body', async () => {
      const res = await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic('partner-app', h.secrets.primary))
        .type('form')
        .send(new URLSearchParams({ grant_type: 'client_credentials', scope: 'ap', ...auth() }).toString());
      expectOAuthError(res, 400, 'invalid_request', /both/);
    });

    it('a body that is not form-url-encoded', async () => {
      const json = await request(h.app)
        .post('/connect/token')
        .send({ grant_type: 'client_credentials', scope: 'ap', ...auth() });
      expectOAuthError(json, 400, 'invalid_request', /Content-Type must be application\/x-www-form-urlencoded/);
      const empty = await request(h.app).post('/connect/token');
      expectOAuthError(empty, 400, 'invalid_request', /Content-Type/);
    });

    it('malformed form bodies', async () => {
      const repeated = await request(h.app)
        .post('/connect/token')
        .type('form')
        .send(
          `grant_type=client_credentials&grant_type=password&scope=ap&client_id=partner-app&client_secret=${encodeURIComponent(h.secrets.primary)}`,
        );
      expectOAuthError(repeated, 400, 'invalid_request', /grant_type must be sent exactly once/);

      const badCharset = await request(h.app)
        .post('/connect/token')
        .set('Content-Type', `${FORM}; charset=koi8-r`)
        .send('grant_type=client_credentials&scope=ap');
      expectOAuthError(badCharset, 400, 'invalid_request', /not a valid form-url-encoded body/);

      const tooMany = await request(h.app)
        .post('/connect/token')
        .type('form')
        .send(Array.from({ length: 30 }, (_, i) => `p${i}=x`).join('&'));
      expectOAuthError(tooMany, 400, 'invalid_request', /not a valid form-url-encoded body/);

      const tooLarge = await request(h.app)
        .post('/connect/token')
        .type('form')
        .send(`grant_type=client_credentials&pad=${'x'.repeat(20_000)}`);
      expectOAuthError(tooLarge, 413, 'invalid_request', /too large/);
    });

    it('password grant: missing username or password → invalid_request', async () => {
      const g = { ...auth(), grant_type: 'password', scope: 'ap' };
      expectOAuthError(
        await tokenRequest(h.app, { ...g, username: 'jane' }),
        400,
        'invalid_request',
        /username and password/,
      );
      expectOAuthError(await tokenRequest(h.app, { ...g, password: PASSWORD }), 400, 'invalid_request');
    });

    it('password grant: bad credentials, unknown user, user outside the client’s tenants → one invalid_grant', async () => {
      const g = { ...auth(), grant_type: 'password', scope: 'ap' };
      const wrong = await tokenRequest(h.app, { ...g, username: 'jane', password: 'Abcdefgh1234?' });
      const unknown = await tokenRequest(h.app, { ...g, username: 'nobody', password: PASSWORD });
      expectOAuthError(wrong, 400, 'invalid_grant', /username or password is incorrect/);
      // Same answer for an unknown user: no username enumeration.
      expect(unknown.body).toEqual(wrong.body);
      // bob is in another tenant: his right and wrong passwords get the same answer, so a client cannot test
      // another tenant's passwords.
      const foreignRight = await tokenRequest(h.app, { ...g, username: 'bob', password: PASSWORD });
      const foreignWrong = await tokenRequest(h.app, { ...g, username: 'bob', password: 'Abcdefgh1234?' });
      expect(foreignRight.body).toEqual(wrong.body);
      expect(foreignWrong.body).toEqual(wrong.body);
      expect(h.logs.some((e) => e.reason === 'user_not_in_client_tenant')).toBe(true);
      expectOAuthError(
        await tokenRequest(h.app, { ...g, username: 'dora', password: PASSWORD }),
        400,
        'invalid_grant',
        /disabled/,
      );
    });

    it('password grant: the password of a user in another tenant is never checked (a decoy is)', async () => {
      const bob = await h.store.findUserByUsername('bob');
      const verify = jest.spyOn(secretHash, 'verifySecret');
      const decoy = jest.spyOn(secretHash, 'verifyAgainstDecoy');
      try {
        const g = { ...auth(), grant_type: 'password', scope: 'ap' };
        await tokenRequest(h.app, { ...g, username: 'bob', password: PASSWORD });
        expect(verify.mock.calls.some(([, hash]) => hash === bob!.passwordHash)).toBe(false);
        expect(decoy).toHaveBeenCalledTimes(1);
      } finally {
        verify.mockRestore();
        decoy.mockRestore();
      }
    });

    it('a client without a tenant cannot get a client_credentials token', async () => {
      const res = await tokenRequest(h.app, {
        grant_type: 'client_credentials',
        scope: 'ap',
        client_id: 'no-tenant-app',
        client_secret: 'nt-secret',
      });
      expectOAuthError(res, 400, 'unauthorized_client', /tenant/);
    });

    it('other methods → 405 with Allow', async () => {
      const res = await request(h.app).get('/connect/token');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.body).toEqual({ error: 'invalid_request', error_description: 'Use POST' });
    });
  });

  describe('logging', () => {
    it('logs every refusal at warn with client, grant type, reason and request id, never a secret or password', async () => {
      const before = h.rawLogs.length;
      await tokenRequest(h.app, {
        grant_type: 'client_credentials',
        scope: 'ap',
        client_id: 'partner-app',
        client_secret: 'wrong-secret-value',
      });
      await tokenRequest(h.app, {
        grant_type: 'password',
        scope: 'ap',
        client_id: 'partner-app',
        client_secret: h.secrets.primary,
        username: 'jane',
        password: 'NotThePassword1',
      });
      await request(h.app)
        .post('/connect/token')
        .set('Authorization', basic(ODD_ID, 'basic-wrong-secret'))
        .type('form')
        .send('grant_type=client_credentials&scope=ap');
      const lines = h.rawLogs.slice(before);
      const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const refusals = entries.filter((e) => e.msg === 'token request refused');
      expect(refusals).toEqual([
        expect.objectContaining({
          level: 40,
          clientId: 'partner-app',
          grantType: 'client_credentials',
          reason: 'wrong_secret',
          requestId: expect.stringMatching(/^req-\d+$/),
        }),
        expect.objectContaining({
          level: 40,
          clientId: 'partner-app',
          grantType: 'password',
          reason: 'wrong_password',
          error: 'invalid_grant',
        }),
        expect.objectContaining({ level: 40, clientId: ODD_ID, reason: 'wrong_secret' }),
      ]);
      const text = lines.join('\n');
      for (const secret of ['wrong-secret-value', 'NotThePassword1', 'basic-wrong-secret', h.secrets.primary]) {
        expect(text).not.toContain(secret);
      }
    });

    it('never logs the secrets of successful requests either', async () => {
      await tokenFor(h, { client_id: 'partner-app', client_secret: h.secrets.primary });
      const text = h.rawLogs.join('\n');
      for (const secret of [h.secrets.primary, h.secrets.second, ODD_SECRET, PASSWORD])
        expect(text).not.toContain(secret);
      expect(text).toContain('access token issued');
    });
  });
});

describe('JWKS and discovery', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });

  it('GET /.well-known/jwks.json publishes the public key that verifies issued tokens', async () => {
    const token = await tokenFor(h, { client_id: 'partner-app', client_secret: h.secrets.primary });
    const res = await request(h.app)
      .get('/.well-known/jwks.json')
      .buffer(true)
      .parse((r, cb) => {
        let data = '';
        r.on('data', (c: Buffer) => (data += c.toString()));
        r.on('end', () => cb(null, data));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    const jwks = JSON.parse(res.body as string) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: expect.any(String),
      y: expect.any(String),
      kid: decodeProtectedHeader(token).kid,
      alg: 'ES256',
      use: 'sig',
    });
    // What an external verifier would do with it.
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks as never), {
      issuer: AUTH,
      audience: 'invoice-gateway-api',
    });
    expect(payload.client_id).toBe('partner-app');
  });

  it('GET /.well-known/openid-configuration lists only what is true', async () => {
    const res = await request(h.app).get('/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      issuer: AUTH,
      token_endpoint: `${AUTH}/connect/token`,
      jwks_uri: `${AUTH}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials', 'password'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      scopes_supported: ['ap'],
    });
  });
});

describe('API token check (spec 5.6, 5.7)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  const good = () => tokenFor(h, { client_id: 'partner-app', client_secret: h.secrets.primary });

  it('Authorization header missing → 401 without an error code', async () => {
    const res = await me(h.app);
    expectProblem401(res, /^Authorization header missing$/, BEARER_PLAIN);
  });

  it('a token in the query string is not accepted, and the answer says so', async () => {
    const res = await request(h.app).get(`/api/v1/me?access_token=${await good()}`);
    expectProblem401(res, /accepted only in the Authorization header/, BEARER_PLAIN);
  });

  it('another scheme than Bearer', async () => {
    const res = await request(h.app).get('/api/v1/me').set('Authorization', basic('partner-app', h.secrets.primary));
    expectProblem401(res, /must use the Bearer scheme/, BEARER_PLAIN);
  });

  it('a bearer value that is not a token', async () => {
    for (const value of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer "x"']) {
      const res = await request(h.app).get('/api/v1/me').set('Authorization', value);
      expectProblem401(res, /well-formed bearer token/, invalidToken(/[^"]+/));
    }
    const garbage = await me(h.app, 'not.a.jwt');
    expectProblem401(garbage, /not a well-formed/, invalidToken(/[^"]+/));
  });

  it('wrong clientId or clientSecret: no token, and without a token no access', async () => {
    const res = await tokenRequest(h.app, {
      grant_type: 'client_credentials',
      scope: 'ap',
      client_id: 'partner-app',
      client_secret: 'nope',
    });
    expect(res.status).toBe(401);
    expect(res.body.access_token).toBeUndefined();
  });

  it('scope ap missing in the token → 401 insufficient_scope', async () => {
    const token = await mint(h, { scope: 'other' });
    const res = await me(h.app, token);
    expectProblem401(
      res,
      /lacks scope ap/,
      'Bearer realm="invoice-gateway", error="insufficient_scope", error_description="the access token lacks scope ap", scope="ap"',
    );
  });

  it('grant type not client_credentials or password → 401', async () => {
    const token = await mint(h, { gty: 'authorization_code' });
    expectProblem401(
      await me(h.app, token),
      /unsupported grant type/,
      invalidToken(/the access token was issued for an unsupported grant type/),
    );
  });

  it('expired token → 401 invalid_token', async () => {
    const past = new TokenService({
      signingKeys: h.keys,
      config: loadConfig({ AUTH_BASE_URL: AUTH }),
      now: () => new Date(Date.now() - 2 * 3600_000),
    });
    const { accessToken } = await past.issue({
      grantType: 'client_credentials',
      clientId: 'partner-app',
      secretId: h.secrets.primaryId,
      tenantId: 'ten-a',
    });
    expectProblem401(await me(h.app, accessToken), /has expired/, invalidToken(/the access token has expired/));
  });

  it('token signed by an unknown key → 401', async () => {
    const token = await mint(h, {}, { kid: 'unknown-kid' });
    expectProblem401(await me(h.app, token), /unknown or retired key/, invalidToken(/.+/));
  });

  it('token for another audience or issuer → 401', async () => {
    expectProblem401(await me(h.app, await mint(h, { aud: 'other-api' })), /another audience/, invalidToken(/.+/));
    expectProblem401(
      await me(h.app, await mint(h, { iss: 'https://elsewhere' })),
      /another issuer/,
      invalidToken(/.+/),
    );
  });

  it('revoking a secret kills its tokens at once; the client’s other secret keeps working', async () => {
    const h2 = await harness();
    const viaPrimary = await tokenFor(h2, { client_id: 'partner-app', client_secret: h2.secrets.primary });
    const viaSecond = await tokenFor(h2, { client_id: 'partner-app', client_secret: h2.secrets.second });
    expect((await me(h2.app, viaPrimary)).status).toBe(200);

    h2.store.revokeClientSecret('partner-app', h2.secrets.primaryId);

    expectProblem401(
      await me(h2.app, viaPrimary),
      /client secret this access token was issued with has been revoked/,
      invalidToken(/.+/),
    );
    expect((await me(h2.app, viaSecond)).status).toBe(200);
    const again = await tokenRequest(h2.app, {
      grant_type: 'client_credentials',
      scope: 'ap',
      client_id: 'partner-app',
      client_secret: h2.secrets.primary,
    });
    expectOAuthError(again, 401, 'invalid_client', /has been revoked/);
    await tokenFor(h2, { client_id: 'partner-app', client_secret: h2.secrets.second });
  });

  it('a revocation scheduled for later leaves the secret working until then', async () => {
    const h2 = await harness();
    h2.store.revokeClientSecret('partner-app', h2.secrets.primaryId, new Date(Date.now() + 60_000));
    const token = await tokenFor(h2, { client_id: 'partner-app', client_secret: h2.secrets.primary });
    expect((await me(h2.app, token)).status).toBe(200);
  });

  it('disabling the client kills its tokens', async () => {
    const h2 = await harness();
    const token = await tokenFor(h2, { client_id: 'partner-app', client_secret: h2.secrets.primary });
    h2.store.setClientDisabled('partner-app', true);
    expectProblem401(await me(h2.app, token), /client of this access token is disabled/, invalidToken(/.+/));
  });

  it('disabling, removing or replacing the user kills password-grant tokens', async () => {
    const h2 = await harness();
    const form = {
      grant_type: 'password',
      client_id: 'partner-app',
      client_secret: h2.secrets.primary,
      scope: 'ap',
      username: 'jane',
      password: PASSWORD,
    };
    const token = (await tokenRequest(h2.app, form)).body.access_token as string;
    expect((await me(h2.app, token)).status).toBe(200);

    h2.store.setUserDisabled(h2.users.jane.id, true);
    expectProblem401(await me(h2.app, token), /user account of this access token is disabled/, invalidToken(/.+/));
    h2.store.setUserDisabled(h2.users.jane.id, false);
    expect((await me(h2.app, token)).status).toBe(200);

    h2.store.removeUser(h2.users.jane.id);
    expectProblem401(await me(h2.app, token), /user account of this access token no longer exists/, invalidToken(/.+/));
    // A new account under the same username is a different user.
    await h2.store.addUser({ tenantId: 'ten-a', username: 'jane', password: PASSWORD, partyIds: [] });
    expectProblem401(await me(h2.app, token), /no longer exists/, invalidToken(/.+/));
  });
});

describe('Subscription-Key (spec 5.8)', () => {
  let h: Harness;
  let token: string;
  beforeAll(async () => {
    h = await harness();
    token = await tokenFor(h, { client_id: 'partner-app', client_secret: h.secrets.primary });
  });

  it('absent: fine', async () => {
    expect((await me(h.app, token)).status).toBe(200);
  });

  it('valid: fine', async () => {
    expect((await me(h.app, token).set('Subscription-Key', 'sk-one')).status).toBe(200);
    expect((await me(h.app, token).set('Subscription-Key', 'sk-two')).status).toBe(200);
  });

  it('invalid or empty: 401 INVALID_SUBSCRIPTION_KEY', async () => {
    for (const key of ['sk-three', 'sk-on', '']) {
      const res = await me(h.app, token).set('Subscription-Key', key);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        status: 401,
        code: 'INVALID_SUBSCRIPTION_KEY',
        title: 'Invalid Subscription-Key',
      });
      expect(res.body.detail).toBe('The Subscription-Key header value is unknown or revoked');
    }
  });
});

describe('rate limits', () => {
  it('token endpoint: per client_id and address, 429 in RFC 6749 shape with Retry-After', async () => {
    const h = await harness({ RATE_LIMIT_TOKEN_PER_MINUTE: '3' });
    const form = {
      grant_type: 'client_credentials',
      scope: 'ap',
      client_id: 'partner-app',
      client_secret: h.secrets.primary,
    };
    for (let i = 0; i < 3; i++) expect((await tokenRequest(h.app, form)).status).toBe(200);
    const limited = await tokenRequest(h.app, form);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(/Too many token requests: at most 3 per minute/),
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['cache-control']).toBe('no-store');
    // Counted per client id, also when it comes through Basic.
    const viaBasic = await request(h.app)
      .post('/connect/token')
      .set('Authorization', basic('partner-app', h.secrets.primary))
      .type('form')
      .send('grant_type=client_credentials&scope=ap');
    expect(viaBasic.status).toBe(429);
    // Another client is not affected.
    expect((await tokenRequest(h.app, { ...form, client_id: ODD_ID, client_secret: ODD_SECRET })).status).toBe(200);
    expect(h.logs.some((e) => e.reason === 'rate_limited' && e.clientId === 'partner-app')).toBe(true);
  });

  it('API: per client, 429 problem RATE_LIMITED with Retry-After', async () => {
    const h = await harness({ RATE_LIMIT_API_PER_MINUTE: '2' });
    const token = await tokenFor(h, { client_id: 'partner-app', client_secret: h.secrets.primary });
    const other = await tokenFor(h, { client_id: ODD_ID, client_secret: ODD_SECRET });
    expect((await me(h.app, token)).status).toBe(200);
    expect((await me(h.app, token)).status).toBe(200);
    const limited = await me(h.app, token);
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.body).toMatchObject({ status: 429, code: 'RATE_LIMITED', title: 'Too many requests' });
    expect(limited.body.detail).toMatch(/at most 2 per minute/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await me(h.app, other)).status).toBe(200);
  });
});

describe('identity store unavailable', () => {
  it('token endpoint → 503 temporarily_unavailable in RFC 6749 shape; API → 503 STORAGE_FAILED problem', async () => {
    const h = await harness();
    const token = await tokenFor(h, { client_id: 'partner-app', client_secret: h.secrets.primary });
    jest.spyOn(h.store, 'findClient').mockRejectedValue(new Error('connection refused'));

    const refused = await tokenRequest(h.app, {
      grant_type: 'client_credentials',
      scope: 'ap',
      client_id: 'partner-app',
      client_secret: h.secrets.primary,
    });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.stringify(refused.body)).not.toContain('connection refused');

    const api = await me(h.app, token);
    expect(api.status).toBe(503);
    expect(api.body).toMatchObject({ code: 'STORAGE_FAILED', detail: 'Identity store unavailable' });
  });
});
