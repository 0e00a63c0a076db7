import pino from 'pino';
import request from 'supertest';
import type { Application } from 'express';
import { runAdmin } from '../../src/main/admin';
import { composeApp, composeIdentity } from '../../src/main/compose';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';

/** Spec 2.1 layer 4 and 5.8: partner-bound Subscription-Keys, checked when sent and named in the request log. */
describe('Subscription-Key of a software partner', () => {
  let ctx: TestContext;
  let app: Application;
  let token: string;
  let key: string;
  let keyId: string;
  const lines: string[] = [];
  const admin = (...args: string[]) => runAdmin(ctx.core, args) as Promise<Record<string, unknown>>;

  beforeAll(async () => {
    ctx = await createTestContext('subkeys');
    // The same app, logging into this test: the request log line is what is checked.
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const core = { ...ctx.core, logger };
    app = composeApp(core, await composeIdentity(core), new RecordingWorkflowStarter(), { metricsPrefix: 'sk_' });
    await ctx.core.directory.createTenant({ id: 'ten-sk', name: 'SK' });
    token = await ctx.token(await ctx.createClient(['ten-sk']));
    await admin('partner', 'create', '--id', 'acme-soft', '--name', 'ACME Software');
    const made = await admin('subscription-key', 'create', '--partner', 'acme-soft');
    key = String(made['subscriptionKey']);
    keyId = String(made['keyId']);
  });
  afterAll(async () => ctx.close());

  const me = (headers: Record<string, string> = {}) =>
    request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`).set(headers);
  const logOf = (requestId: string): Record<string, unknown> => {
    const line = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => {
        const req = l['req'] as { id?: string } | undefined;
        return req?.id === requestId && l['res'] !== undefined;
      });
    if (!line) throw new Error(`no request log line for ${requestId}`);
    return line;
  };

  it('valid: answered, and the log line names the partner, never the key', async () => {
    const res = await me({ 'Subscription-Key': key, 'X-Request-Id': 'sk-valid-1' });
    expect(res.status).toBe(200);
    const line = logOf('sk-valid-1');
    expect(line['partnerId']).toBe('acme-soft');
    const raw = lines.filter((l) => l.includes('sk-valid-1')).join('\n');
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(key.split('.')[1]);
  });

  it('absent: answered, no partner in the log', async () => {
    const res = await me({ 'X-Request-Id': 'sk-absent-1' });
    expect(res.status).toBe(200);
    expect(logOf('sk-absent-1')['partnerId']).toBeUndefined();
  });

  it('unknown, malformed or with a wrong secret: 401 problem+json', async () => {
    const wrongSecret = `${keyId}.${'A'.repeat(43)}`;
    const unknownId = `00000000-0000-4000-8000-000000000000.${key.split('.')[1]}`;
    for (const sent of [wrongSecret, unknownId, 'nope', '']) {
      const res = await me({ 'Subscription-Key': sent });
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: 'INVALID_SUBSCRIPTION_KEY', title: 'Invalid Subscription-Key' });
      expect(res.body.detail).toBe('The Subscription-Key header value is unknown or revoked');
    }
  });

  it('is checked before the bearer token, also on the httpsin inbox', async () => {
    const res = await request(app).get('/api/v1/me').set('Subscription-Key', 'nope');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_SUBSCRIPTION_KEY');
    const inbox = await request(app).get('/api/v1/inbox/some-hook').set('Subscription-Key', 'nope');
    expect(inbox.body.code).toBe('INVALID_SUBSCRIPTION_KEY');
  });

  it('revoked: refused from the next request on; listed as revoked; the admin commands refuse bad input', async () => {
    const other = await admin('subscription-key', 'create', '--partner', 'acme-soft');
    const revoked = await admin('subscription-key', 'revoke', '--key-id', keyId);
    expect(revoked['revokedAt']).toBeInstanceOf(Date);
    const res = await me({ 'Subscription-Key': key });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_SUBSCRIPTION_KEY');
    // The partner's other key still works.
    expect((await me({ 'Subscription-Key': String(other['subscriptionKey']) })).status).toBe(200);
    const listed = (await runAdmin(ctx.core, ['subscription-key', 'list', '--partner', 'acme-soft'])) as Array<{
      keyId: string;
      revokedAt: Date | null;
    }>;
    expect(listed.map((k) => [k.keyId, k.revokedAt !== null])).toEqual([
      [keyId, true],
      [other['keyId'], false],
    ]);
    expect(JSON.stringify(listed)).not.toMatch(/hash|scrypt/);
    await expect(admin('subscription-key', 'create', '--partner', 'nobody')).rejects.toThrow(
      /partner nobody not found/,
    );
    await expect(admin('subscription-key', 'revoke', '--key-id', 'missing')).rejects.toThrow(/not found/);
    await expect(admin('subscription-key', 'create')).rejects.toThrow(/--partner is required/);
    await expect(admin('partner', 'create', '--id', 'acme-soft', '--name', 'x')).rejects.toThrow(/exists/);
    await expect(admin('partner', 'create', '--id', 'bad id!', '--name', 'x')).rejects.toThrow(/partner id/);
  });
});
