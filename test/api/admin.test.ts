import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { runAdmin } from '../../src/main/admin';
import { Transition } from '../../src/core/document-states';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { createTestContext, type TestContext } from '../support/test-app';

describe('admin CLI', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext('admincli');
  });
  afterAll(async () => ctx.close());
  const admin = (...args: string[]) => runAdmin(ctx.core, args);

  it('creates tenants, parties (both identifier forms), clients, users and links, and lists them', async () => {
    await admin('tenant', 'create', '--id', 'acme', '--name', 'ACME');
    await expect(admin('tenant', 'create', '--id', 'acme', '--name', 'again')).rejects.toThrow(/exists/);
    await admin(
      'party',
      'create',
      '--tenant',
      'acme',
      '--party-id',
      '0106:44444444',
      '--country',
      'nl',
      '--name',
      'ACME NL',
    );
    await admin(
      'party',
      'create',
      '--tenant',
      'acme',
      '--party-id',
      '0208:0123456789',
      '--legal-entity-id',
      'BE:0208:0123456789',
      '--name',
      'ACME BE',
    );
    await expect(
      admin('party', 'create', '--tenant', 'acme', '--party-id', '12345678', '--country', 'NL', '--name', 'x'),
    ).rejects.toThrow(/<scheme>:<number>/);
    await expect(
      admin('party', 'create', '--tenant', 'nope', '--party-id', '0106:55555555', '--country', 'NL', '--name', 'x'),
    ).rejects.toThrow(/tenant nope not found/);
    const parties = (await admin('party', 'list', '--tenant', 'acme')) as { partyId: string; legalEntityId: string }[];
    expect(parties.map((p) => [p.partyId, p.legalEntityId])).toEqual([
      ['0106:44444444', 'NL:0106:44444444'],
      ['0208:0123456789', 'BE:0208:0123456789'],
    ]);

    const created = (await admin('client', 'create', '--name', 'ERP', '--tenant', 'acme')) as {
      clientId: string;
      clientSecret: string;
      secretId: string;
    };
    expect(created.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const listed = (await admin('client', 'list')) as { clientId: string; secrets: object[] }[];
    const entry = listed.find((c) => c.clientId === created.clientId)!;
    // The secret is printed once, never listed.
    expect(JSON.stringify(entry)).not.toContain(created.clientSecret);
    expect(JSON.stringify(entry)).not.toMatch(/scrypt/);

    await expect(
      admin(
        'user',
        'create',
        '--tenant',
        'acme',
        '--username',
        'erp-user',
        '--password',
        'short#pw',
        '--party',
        '0106:44444444',
      ),
    ).rejects.toThrow(/password rejected/);
    await admin(
      'user',
      'create',
      '--tenant',
      'acme',
      '--username',
      'erp-user',
      '--password',
      'LongEnough!Pass1',
      '--party',
      '0106:44444444',
    );
    await admin('user', 'link', '--username', 'erp-user', '--party', '0208:0123456789');
    const users = (await admin('user', 'list', '--tenant', 'acme')) as { username: string; partyIds: string[] }[];
    expect(users).toEqual([
      expect.objectContaining({ username: 'erp-user', partyIds: ['0106:44444444', '0208:0123456789'] }),
    ]);
    await admin('user', 'unlink', '--username', 'erp-user', '--party', '0208:0123456789');
    await expect(admin('user', 'link', '--username', 'erp-user', '--party', '0106:99999999')).rejects.toThrow(
      /not found/,
    );
  });

  it("revoking one secret ends its tokens and leaves the client's other secret working", async () => {
    await admin('tenant', 'create', '--id', 'rot', '--name', 'Rotation');
    const c = (await admin('client', 'create', '--name', 'rot', '--tenant', 'rot')) as {
      clientId: string;
      clientSecret: string;
      secretId: string;
    };
    const second = (await admin('secret', 'add', '--client', c.clientId)) as { secretId: string; clientSecret: string };
    const oldToken = await ctx.token({ clientId: c.clientId, clientSecret: c.clientSecret, secretId: c.secretId });
    const newToken = await ctx.token({
      clientId: c.clientId,
      clientSecret: second.clientSecret,
      secretId: second.secretId,
    });
    expect((await request(ctx.app).get('/api/v1/me').auth(oldToken, { type: 'bearer' })).status).toBe(200);

    await admin('secret', 'revoke', '--client', c.clientId, '--secret-id', c.secretId);
    const refused = await request(ctx.app).get('/api/v1/me').auth(oldToken, { type: 'bearer' });
    expect(refused.status).toBe(401);
    expect((await request(ctx.app).get('/api/v1/me').auth(newToken, { type: 'bearer' })).status).toBe(200);
    await expect(
      ctx.token({ clientId: c.clientId, clientSecret: c.clientSecret, secretId: c.secretId }),
    ).rejects.toThrow(/401/);

    await admin('client', 'disable', '--client', c.clientId);
    expect((await request(ctx.app).get('/api/v1/me').auth(newToken, { type: 'bearer' })).status).toBe(401);
  });

  it('seeds the demo with fresh working credentials on every run', async () => {
    const first = (await admin('seed-demo')) as {
      clientId: string;
      clientSecret: string;
      partyId: string;
      receiverPartyId: string;
    };
    const second = (await admin('seed-demo')) as { clientId: string; clientSecret: string };
    expect(second.clientSecret).not.toBe(first.clientSecret);
    const token = await ctx.token({ clientId: second.clientId, clientSecret: second.clientSecret, secretId: '' });
    const me = await request(ctx.app).get('/api/v1/me').auth(token, { type: 'bearer' });
    expect((me.body as { parties: { partyId: string }[] }).parties.map((p) => p.partyId).sort()).toEqual(
      [first.partyId, first.receiverPartyId].sort(),
    );
    await expect(
      ctx.token({ clientId: first.clientId, clientSecret: first.clientSecret, secretId: '' }),
    ).rejects.toThrow(/401/);
  });

  it('refuses unknown commands with the usage', async () => {
    await expect(admin('frobnicate')).rejects.toThrow(/Usage/);
  });

  it('serialises concurrent changes of one client: none of eight secrets added at once is lost', async () => {
    await admin('tenant', 'create', '--id', 'busy', '--name', 'Busy');
    const { clientId } = (await admin('client', 'create', '--name', 'Busy ERP', '--tenant', 'busy')) as {
      clientId: string;
    };
    await Promise.all(Array.from({ length: 8 }, () => admin('secret', 'add', '--client', clientId)));
    expect((await ctx.core.directory.getClient(clientId))!.secrets).toHaveLength(9);
  });

  it('reconciles on request, reporting without changing anything on --dry-run', async () => {
    await expect(admin('reconcile')).rejects.toThrow(/needs the Temporal server/);
    const runs = { describeSendInvoice: () => Promise.resolve({ status: 'running' as const }) };
    const out = await runAdmin(ctx.core, ['reconcile', '--dry-run'], { runs });
    expect(Array.isArray(out)).toBe(true);
    expect((out as { repaired: boolean }[]).every((f) => !f.repaired)).toBe(true);
  });

  it('resends a sales invoice in InvoiceSentError and wakes a waiting one, refusing every other state', async () => {
    await ctx.core.directory.createTenant({ id: 'resendT', name: 'R' });
    const partyId = '0106:70000001';
    await ctx.core.directory.createParty({ tenantId: 'resendT', partyId, legalEntityId: `NL:${partyId}`, name: 'R' });
    const token = await ctx.token(await ctx.createClient(['resendT']));
    const id = randomUUID();
    const up = await request(ctx.app)
      .post(`/api/v1/${partyId}/salesInvoice/send`)
      .auth(token, { type: 'bearer' })
      .set('X-Service-DocumentId', id)
      .type('application/xml')
      .send(corpusFile(SAMPLE_UBL_INVOICE));
    expect(up.status).toBe(200);
    const calls: unknown[] = [];
    const control = {
      resendInvoice: async (input: unknown) => {
        calls.push(input);
        return 'started' as const;
      },
      retryNow: async (tenantId: string, documentId: string) => {
        calls.push([tenantId, documentId]);
        return 'signalled' as const;
      },
    };
    const run = (verb: string) =>
      runAdmin(ctx.core, ['document', verb, '--tenant', 'resendT', '--document-id', id], { control });
    await expect(run('resend')).rejects.toThrow(/is accepted: only a document in InvoiceSentError/);
    await ctx.core.documents.recordTransition('resendT', id, Transition.sendError, { detail: 'refused' });
    await expect(run('retry-now')).rejects.toThrow(/is InvoiceSentError: only a document waiting/);
    await expect(run('resend')).resolves.toEqual({ id, state: 'resending', generation: 1 });
    expect(calls).toEqual([{ tenantId: 'resendT', documentId: id, generation: 1 }]);
    // The resend's own entries now lead: a second resend is refused until its run ends in InvoiceSentError again.
    await expect(run('resend')).rejects.toThrow(/is resending: only/);
    await ctx.core.documents.recordTransition('resendT', id, Transition.retry, { attempt: 1, generation: 1 });
    await expect(run('retry-now')).resolves.toMatchObject({ id, retryNow: 'signalled' });
    expect(calls.at(-1)).toEqual(['resendT', id]);
    await expect(
      runAdmin(ctx.core, ['document', 'resend', '--tenant', 'other', '--document-id', id], { control }),
    ).rejects.toThrow(/not found in tenant other/);
  });
});
