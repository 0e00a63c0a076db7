import express, { type Express } from 'express';
import pino from 'pino';
import request from 'supertest';
import { createTokenRouter } from '../../api/routes/token.routes';
import { InMemoryIdentityStore } from '../../src/auth/in-memory-identity-store';
import { SigningKeyService } from '../../src/auth/signing-keys';
import { TokenService } from '../../src/auth/token-service';
import { loadConfig } from '../../src/config/load-config';

/**
 * The token endpoint's rate limits against a hostile client: failures are counted per source address (and per client
 * id from that address), so wrong secrets sent in a client's name elsewhere never refuse that client's right secret.
 */

interface Harness {
  app: Express;
  secret: string;
  logs: () => Array<Record<string, unknown>>;
}

async function harness(env: Record<string, string>): Promise<Harness> {
  const config = loadConfig({ NODE_ENV: 'test', AUTH_BASE_URL: 'https://auth.example.test', ...env });
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  const store = new InMemoryIdentityStore({ ln: 10, r: 8, p: 1 });
  const { secret } = await store.addClientSecret('victim-app', { tenantIds: ['ten-a'] });
  await store.addClientSecret('other-app', { tenantIds: ['ten-a'], secret: 'other-secret' });
  const keys = new SigningKeyService({ store, config, logger });
  await keys.init();
  const tokens = new TokenService({ signingKeys: keys, config });
  const app = express();
  // Source addresses come from X-Forwarded-For in these tests, as they would behind a trusted proxy.
  app.set('trust proxy', true);
  app.use(createTokenRouter({ store, tokens, signingKeys: keys, config, logger }));
  return { app, secret, logs: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

function token(h: Harness, from: string, clientId: string, clientSecret: string) {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    scope: 'ap',
    client_id: clientId,
    client_secret: clientSecret,
  });
  return request(h.app).post('/connect/token').set('X-Forwarded-For', from).type('form').send(form.toString());
}

function basicToken(h: Harness, from: string, clientId: string, clientSecret: string) {
  return request(h.app)
    .post('/connect/token')
    .set('X-Forwarded-For', from)
    .set('Authorization', `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`)
    .type('form')
    .send('grant_type=client_credentials&scope=ap');
}

const ATTACKER = '203.0.113.66';
const VICTIM = '198.51.100.7';

describe('token endpoint rate limits', () => {
  it('wrong secrets sent in a client’s name from elsewhere never refuse that client’s right secret', async () => {
    const h = await harness({
      RATE_LIMIT_TOKEN_PER_MINUTE: '5',
      RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: '3',
      RATE_LIMIT_TOKEN_SOURCE_FAILURES_PER_MINUTE: '100',
    });
    const answers: number[] = [];
    for (let i = 0; i < 12; i++) answers.push((await token(h, ATTACKER, 'victim-app', `guess-${i}`)).status);
    // The attacker's own address runs out of attempts for this client id …
    expect(answers.slice(0, 3)).toEqual([401, 401, 401]);
    expect(answers.slice(3).every((s) => s === 429)).toBe(true);
    // … and also through Basic, where the client id is in the header.
    expect((await basicToken(h, ATTACKER, 'victim-app', 'guess-b')).status).toBe(429);

    // The client itself, from its own address: unaffected, in the body and through Basic.
    const ok = await token(h, VICTIM, 'victim-app', h.secret);
    expect(ok.status).toBe(200);
    expect((await basicToken(h, VICTIM, 'victim-app', h.secret)).status).toBe(200);
    expect(h.logs().some((e) => e.reason === 'failures_rate_limited' && e.clientId === 'victim-app')).toBe(true);
  });

  it('counts failures per address over all client ids', async () => {
    const h = await harness({
      RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: '100',
      RATE_LIMIT_TOKEN_SOURCE_FAILURES_PER_MINUTE: '4',
    });
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) answers.push((await token(h, ATTACKER, `client-${i}`, 'x')).status);
    expect(answers).toEqual([401, 401, 401, 401, 429, 429]);
    const limited = await token(h, ATTACKER, 'other-app', 'other-secret');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(/Too many failed token requests from this address: at most 4 /),
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['cache-control']).toBe('no-store');
    // Another address is not affected.
    expect((await token(h, VICTIM, 'other-app', 'other-secret')).status).toBe(200);
  });

  it('successful requests do not use up the failure budget', async () => {
    const h = await harness({
      RATE_LIMIT_TOKEN_PER_MINUTE: '50',
      RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: '2',
      RATE_LIMIT_TOKEN_SOURCE_FAILURES_PER_MINUTE: '2',
    });
    for (let i = 0; i < 6; i++) expect((await token(h, VICTIM, 'victim-app', h.secret)).status).toBe(200);
    expect((await token(h, VICTIM, 'victim-app', 'wrong')).status).toBe(401);
    expect((await token(h, VICTIM, 'victim-app', h.secret)).status).toBe(200);
  });

  it('the request budget is per client id and address: the same client elsewhere still gets tokens', async () => {
    const h = await harness({ RATE_LIMIT_TOKEN_PER_MINUTE: '3' });
    for (let i = 0; i < 3; i++) expect((await token(h, VICTIM, 'victim-app', h.secret)).status).toBe(200);
    const limited = await token(h, VICTIM, 'victim-app', h.secret);
    expect(limited.status).toBe(429);
    expect(limited.body.error_description).toMatch(/Too many token requests: at most 3 per minute/);
    expect((await token(h, '198.51.100.8', 'victim-app', h.secret)).status).toBe(200);
    // Wrong secrets from an attacker's address do not touch the client's request budget either.
    for (let i = 0; i < 5; i++) await token(h, ATTACKER, 'victim-app', 'wrong');
    expect((await token(h, '198.51.100.9', 'victim-app', h.secret)).status).toBe(200);
  });
});
