import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { runAdmin } from '../../src/main/admin';
import { HookRepository } from '../../src/storage/hooks/hook.repository';
import {
  createWebhookTestContext,
  RecordingDeliveryStarter,
  type WebhookTestContext,
} from '../support/webhook-harness';
import { testPki } from '../support/peppol/pki-fixture';

/*
 * `admin hook-auth`: the receiver's OAuth2 client credentials and a client certificate on a hook (spec 5 item 12),
 * operator configuration the API neither takes nor shows.
 */
describe('admin hook-auth', () => {
  let ctx: WebhookTestContext;
  let token: string;
  let hookId: string;
  let dir: string;
  const admin = (...args: string[]) => runAdmin(ctx.core, args) as Promise<Record<string, unknown>>;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hook-auth-admin-'));
    // A certificate and key pair of the test PKI, and a key that does not belong to it.
    const pki = await testPki();
    const pem = (k: { privateKey: import('node:crypto').KeyObject }) =>
      k.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    writeFileSync(path.join(dir, 'gw.crt'), pki.apSender.certificate.toString());
    writeFileSync(path.join(dir, 'gw.key'), pem(pki.apSender));
    writeFileSync(path.join(dir, 'mismatch.crt'), pki.apSender.certificate.toString());
    writeFileSync(path.join(dir, 'mismatch.key'), pem(pki.apReceiver));
    writeFileSync(path.join(dir, 'secret.txt'), 'receiver-issued-secret\n');
    writeFileSync(path.join(dir, 'empty.txt'), '');
    ctx = await createWebhookTestContext('hookauthadmin', {
      starter: new RecordingDeliveryStarter(),
      env: { WEBHOOK_CLIENT_CERT_DIR: dir, WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOWED_RANGES: '' },
    });
    await ctx.core.directory.createTenant({ id: 'ten-h', name: 'H' });
    await ctx.core.directory.createTenant({ id: 'ten-other', name: 'O' });
    token = await ctx.token(await ctx.createClient(['ten-h']));
    const res = await request(ctx.app)
      .post('/api/v1/hook')
      .auth(token, { type: 'bearer' })
      .send({ url: 'https://receiver.example/hook', topic: 'InvoiceReceived', secureKey: 'k'.repeat(32) });
    expect(res.status).toBe(201);
    hookId = String(res.body.id);
  });
  afterAll(async () => {
    await ctx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = () => ['--tenant', 'ten-h', '--hook', hookId];
  const oauth2Args = (...extra: string[]) => [
    'hook-auth',
    'oauth2',
    ...base(),
    '--token-url',
    'https://idp.example/token',
    '--client-id',
    'gw',
    '--client-secret-file',
    path.join(dir, 'secret.txt'),
    ...extra,
  ];

  it('sets OAuth2 credentials and a certificate; shows them without the secret; the API shows neither', async () => {
    const set = await admin(...oauth2Args('--scope', 'hooks', '--audience', 'rcv'));
    expect(set).toMatchObject({
      hookId,
      oauth2TokenUrl: 'https://idp.example/token',
      oauth2ClientId: 'gw',
      oauth2ClientSecret: 'set',
      oauth2Scope: 'hooks',
      oauth2Audience: 'rcv',
      oauth2ClientAuth: 'client_secret_basic',
      clientCertificate: null,
    });
    expect(await admin('hook-auth', 'cert', ...base(), '--name', 'gw')).toMatchObject({
      oauth2ClientId: 'gw',
      clientCertificate: 'gw',
    });
    const shown = await admin('hook-auth', 'show', ...base());
    expect(JSON.stringify(shown)).not.toContain('receiver-issued-secret');
    const stored = await new HookRepository(ctx.core.db.models).get({ tenantId: 'ten-h' }, hookId);
    expect(stored?.deliveryAuth).toMatchObject({
      oauth2: { clientSecret: 'receiver-issued-secret', tokenUrl: 'https://idp.example/token' },
      clientCertificate: 'gw',
    });

    const api = await request(ctx.app).get(`/api/v1/hook/${hookId}`).auth(token, { type: 'bearer' });
    expect(api.status).toBe(200);
    expect(JSON.stringify(api.body)).not.toMatch(/deliveryAuth|receiver-issued-secret|oauth2|clientCertificate/);

    // An update through the API keeps what the operator set.
    const upd = await request(ctx.app)
      .put(`/api/v1/hook/${hookId}`)
      .auth(token, { type: 'bearer' })
      .send({ url: 'https://receiver.example/v2', topic: 'InvoiceReceived' });
    expect(upd.status).toBe(200);
    expect(await admin('hook-auth', 'show', ...base())).toMatchObject({
      oauth2ClientId: 'gw',
      clientCertificate: 'gw',
    });

    expect(await admin('hook-auth', 'clear', ...base())).toMatchObject({
      oauth2ClientId: null,
      clientCertificate: null,
    });
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    await expect(admin(...oauth2Args('--client-auth', 'private_key_jwt'))).rejects.toThrow(/--client-auth must be/);
    await expect(
      admin(
        'hook-auth',
        'oauth2',
        ...base(),
        '--token-url',
        'http://idp.example/t',
        '--client-id',
        'gw',
        '--client-secret-file',
        path.join(dir, 'secret.txt'),
      ),
    ).rejects.toThrow(/--token-url refused/);
    await expect(
      admin(
        'hook-auth',
        'oauth2',
        ...base(),
        '--token-url',
        'https://10.0.0.1/t',
        '--client-id',
        'gw',
        '--client-secret-file',
        path.join(dir, 'secret.txt'),
      ),
    ).rejects.toThrow(/--token-url refused/);
    await expect(
      admin(
        'hook-auth',
        'oauth2',
        ...base(),
        '--token-url',
        'https://idp.example/t',
        '--client-id',
        'gw',
        '--client-secret-file',
        path.join(dir, 'empty.txt'),
      ),
    ).rejects.toThrow(/--client-secret-file is empty/);
    await expect(
      admin(
        'hook-auth',
        'oauth2',
        ...base(),
        '--token-url',
        'https://idp.example/t',
        '--client-id',
        'gw',
        '--client-secret-file',
        path.join(dir, 'none.txt'),
      ),
    ).rejects.toThrow(/--client-secret-file cannot be read \(ENOENT\)/);
    await expect(admin('hook-auth', 'oauth2', ...base(), '--token-url', 'https://idp.example/t')).rejects.toThrow(
      /--client-secret-file is required/,
    );
    await expect(admin('hook-auth', 'cert', ...base(), '--name', 'missing')).rejects.toThrow(
      /client certificate missing/,
    );
    await expect(admin('hook-auth', 'cert', ...base(), '--name', 'mismatch')).rejects.toThrow(
      /the key does not belong to the certificate/,
    );
    await expect(admin('hook-auth', 'cert', ...base(), '--name', '../gw')).rejects.toThrow(/--name is/);
    // Another tenant's hook, or no hook: not found.
    await expect(admin('hook-auth', 'show', '--tenant', 'ten-other', '--hook', hookId)).rejects.toThrow(/not found/);
    await expect(admin('hook-auth', 'show', '--tenant', 'ten-h', '--hook', 'nope')).rejects.toThrow(/not found/);
    await expect(admin('hook-auth', 'show', '--tenant', 'ten-h')).rejects.toThrow(/--hook is required/);
    expect(await admin('hook-auth', 'show', ...base())).toMatchObject({
      oauth2ClientId: null,
      clientCertificate: null,
    });
  });
});
