import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { createTestContext, RecordingWorkflowStarter, type TestClient, type TestContext } from '../support/test-app';
import { expectContract } from '../support/contract';

const PARTY_A = '0106:11111111';
const PARTY_A2 = '0106:11111112';
const PARTY_B = '0106:22222222';
const SEND = (p: string) => `/api/v1/${p}/salesInvoice/send`;

describe('sales invoice intake', () => {
  let ctx: TestContext;
  let starter: RecordingWorkflowStarter;
  let clientA: TestClient;
  let tokenA: string;
  let tokenB: string;
  const invoice = corpusFile(SAMPLE_UBL_INVOICE);

  beforeAll(async () => {
    starter = new RecordingWorkflowStarter();
    ctx = await createTestContext('intake', { workflows: starter, env: { MAX_UPLOAD_BYTES: String(1024 * 1024) } });
    const d = ctx.core.directory;
    await d.createTenant({ id: 'tenantA', name: 'A' });
    await d.createTenant({ id: 'tenantB', name: 'B' });
    await d.createParty({ tenantId: 'tenantA', partyId: PARTY_A, legalEntityId: `NL:${PARTY_A}`, name: 'A one' });
    await d.createParty({ tenantId: 'tenantA', partyId: PARTY_A2, legalEntityId: `NL:${PARTY_A2}`, name: 'A two' });
    await d.createParty({ tenantId: 'tenantB', partyId: PARTY_B, legalEntityId: `BE:${PARTY_B}`, name: 'B one' });
    clientA = await ctx.createClient(['tenantA']);
    tokenA = await ctx.token(clientA);
    tokenB = await ctx.token(await ctx.createClient(['tenantB']));
  });
  afterAll(async () => ctx.close());

  const blobCount = async () =>
    ctx.core.db.connection.db!.collection(ctx.core.db.blobs.filesCollection).countDocuments();
  const chunkCount = async () =>
    ctx.core.db.connection.db!.collection(ctx.core.db.blobs.chunksCollection).countDocuments();

  it('stores the XML, starts the workflow, and returns the id', async () => {
    const res = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .type('application/xml')
      .send(invoice);
    expect(res.status).toBe(200);
    expectContract('post', '/api/v1/:partyId/salesInvoice/send', res);
    const id = (res.body as { id: string }).id;
    expect(starter.started).toContainEqual({ tenantId: 'tenantA', documentId: id });

    const download = await request(ctx.app)
      .get(`/api/v1/${PARTY_A}/generic/${id}/download`)
      .auth(tokenA, { type: 'bearer' })
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toMatch(/^application\/xml/);
    expect(Buffer.compare(download.body as Buffer, invoice)).toBe(0);

    const status = await request(ctx.app)
      .get(`/api/v1/${PARTY_A}/salesInvoice/${id}/status`)
      .auth(tokenA, { type: 'bearer' });
    expect(status.status).toBe(200);
    expectContract('get', '/api/v1/:partyId/salesInvoice/:documentId/status', status);
    expect(status.body).toMatchObject({ id, state: 'accepted' });
    expect((status.body as { history: { state: string }[] }).history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
    ]);
  });

  it('is idempotent on X-Service-DocumentId: a repeat is 409 naming the document and stores nothing', async () => {
    const documentId = randomUUID();
    const first = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .set('X-Service-DocumentId', documentId)
      .type('application/xml')
      .send(invoice);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ id: documentId });
    const before = await blobCount();
    const again = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .set('X-Service-DocumentId', documentId.toUpperCase())
      .type('application/xml')
      .send(invoice);
    expect(again.status).toBe(409);
    expectContract('post', '/api/v1/:partyId/salesInvoice/send', again);
    expect(again.body).toMatchObject({ code: 'DOCUMENT_ID_CONFLICT', documentId });
    expect(await blobCount()).toBe(before);
  });

  /** Every stored blob is referenced by a record, and every record's bytes are there. */
  async function expectBlobsConsistent(): Promise<void> {
    const records = await ctx.core.db.models.Document.find().lean();
    const files = await ctx.core.db.connection.db!.collection(ctx.core.db.blobs.filesCollection).find().toArray();
    const stored = new Set(files.map((f) => String(f._id)));
    const referenced = new Set(records.map((d) => d.blobId));
    expect(files.filter((f) => !referenced.has(String(f._id))).map((f) => f._id)).toEqual([]);
    expect(records.filter((r) => !stored.has(r.blobId)).map((r) => r._id)).toEqual([]);
  }

  it('answers exactly one of 20 concurrent uploads with one id 200, and 409 to the rest', async () => {
    for (let round = 0; round < 3; round++) {
      const documentId = randomUUID();
      const send = () =>
        request(ctx.app)
          .post(SEND(PARTY_A))
          .auth(tokenA, { type: 'bearer' })
          .set('X-Service-DocumentId', documentId)
          .type('application/xml')
          .send(invoice);
      const results = await Promise.all(Array.from({ length: 20 }, send));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      expect(await ctx.core.db.models.Document.countDocuments({ documentId })).toBe(1);
      const doc = await ctx.core.documents.find('tenantA', documentId);
      expect(doc).toMatchObject({ accepted: true });
      expect(doc!.history.filter((h) => h.state === 'accepted')).toHaveLength(1);
      expect(Buffer.compare(await ctx.core.db.blobs.read(doc!.blobId), invoice)).toBe(0);
    }
    await expectBlobsConsistent();
  });

  it('keeps the bytes of the first record when concurrent uploads with one id carry different bodies', async () => {
    const documentId = randomUUID();
    const bodies = Array.from({ length: 20 }, (_, i) => Buffer.concat([invoice, Buffer.from(`<!-- variant ${i} -->`)]));
    const results = await Promise.all(
      bodies.map((body) =>
        request(ctx.app)
          .post(SEND(PARTY_A))
          .auth(tokenA, { type: 'bearer' })
          .set('X-Service-DocumentId', documentId)
          .type('application/xml')
          .send(body),
      ),
    );
    const winners = results.map((r, i) => (r.status === 200 ? i : -1)).filter((i) => i >= 0);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    const doc = await ctx.core.documents.find('tenantA', documentId);
    // The record's bytes are the accepted request's, and every start named this record (whose bytes never change).
    expect(Buffer.compare(await ctx.core.db.blobs.read(doc!.blobId), bodies[winners[0]!]!)).toBe(0);
    await expectBlobsConsistent();
  });

  it('refuses a repeat of an id that was never answered 200 when its bytes differ', async () => {
    const documentId = randomUUID();
    starter.failNext = 1;
    const failed = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .set('X-Service-DocumentId', documentId)
      .type('application/xml')
      .send(invoice);
    expect(failed.status).toBe(503);
    const other = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .set('X-Service-DocumentId', documentId)
      .type('application/xml')
      .send(Buffer.concat([invoice, Buffer.from('<!-- changed -->')]));
    expect(other.status).toBe(409);
    expect((other.body as { detail: string }).detail).toMatch(/other content/);
    const doc = await ctx.core.documents.find('tenantA', documentId);
    expect(Buffer.compare(await ctx.core.db.blobs.read(doc!.blobId), invoice)).toBe(0);
    await expectBlobsConsistent();
  });

  it('rejects a non-UUID X-Service-DocumentId with 400', async () => {
    const res = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .set('X-Service-DocumentId', 'INV-2024-001')
      .type('application/xml')
      .send(invoice);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'INVALID_DOCUMENT_ID', status: 400 });
  });

  it('answers 413 for a declared oversize body without storing anything', async () => {
    const [files, chunks] = [await blobCount(), await chunkCount()];
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    const res = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .type('application/xml')
      .send(big);
    expect(res.status).toBe(413);
    expectContract('post', '/api/v1/:partyId/salesInvoice/send', res);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect([await blobCount(), await chunkCount()]).toEqual([files, chunks]);
  });

  it('answers 413 for a chunked oversize body (no Content-Length) and leaves no chunks behind', async () => {
    const [files, chunks, docs] = [
      await blobCount(),
      await chunkCount(),
      await ctx.core.db.models.Document.countDocuments(),
    ];
    const { Readable } = await import('node:stream');
    const part = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    let started = false;
    const body = new Readable({
      read() {
        if (sent >= 40) this.push(null);
        else if (!started) {
          // Starts as XML, so only its size is wrong.
          started = true;
          this.push(Buffer.from('<Invoice>'));
        } else {
          sent++;
          this.push(part);
        }
      },
    });
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(ctx.app)
        .post(SEND(PARTY_A))
        .auth(tokenA, { type: 'bearer' })
        .set('Content-Type', 'application/xml')
        .set('Transfer-Encoding', 'chunked');
      req.on('response', (r: { status: number; text: string }) => resolve({ status: r.status, body: r.text }));
      req.on('error', (e: Error & { response?: { status: number; text: string } }) =>
        e.response ? resolve({ status: e.response.status, body: e.response.text }) : reject(e),
      );
      body.pipe(req as unknown as NodeJS.WritableStream);
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect([await blobCount(), await chunkCount(), await ctx.core.db.models.Document.countDocuments()]).toEqual([
      files,
      chunks,
      docs,
    ]);
  });

  it('accepts multipart/form-data with one file and keeps the bytes exactly', async () => {
    const res = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .attach('file', invoice, { filename: 'invoice.xml', contentType: 'application/xml' });
    expect(res.status).toBe(200);
    const doc = await ctx.core.documents.find('tenantA', (res.body as { id: string }).id);
    expect(doc).toMatchObject({ contentType: 'application/xml', size: invoice.length, filename: 'invoice.xml' });
    expect(Buffer.compare(await ctx.core.db.blobs.read(doc!.blobId), invoice)).toBe(0);
  });

  it('refuses a multipart body without a file part, and other media types', async () => {
    const noFile = await request(ctx.app).post(SEND(PARTY_A)).auth(tokenA, { type: 'bearer' }).field('note', 'x');
    expect(noFile.status).toBe(400);
    const json = await request(ctx.app).post(SEND(PARTY_A)).auth(tokenA, { type: 'bearer' }).send({ invoice: 'x' });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    const empty = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .type('application/xml')
      .send('');
    expect(empty.status).toBe(400);
  });

  it('answers 503 when processing cannot start, and a retry with the same id then succeeds', async () => {
    const documentId = randomUUID();
    starter.failNext = 1;
    const failed = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .set('X-Service-DocumentId', documentId)
      .type('application/xml')
      .send(invoice);
    expect(failed.status).toBe(503);
    expectContract('post', '/api/v1/:partyId/salesInvoice/send', failed);
    expect(JSON.stringify(failed.body)).not.toMatch(/stack|Error:/);
    const retried = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .set('X-Service-DocumentId', documentId)
      .type('application/xml')
      .send(invoice);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ id: documentId });
    const doc = await ctx.core.documents.find('tenantA', documentId);
    expect(doc).toMatchObject({ accepted: true, state: 'accepted' });
    expect(
      await ctx.core.db.connection
        .db!.collection(ctx.core.db.blobs.filesCollection)
        .countDocuments({ 'metadata.documentId': documentId }),
    ).toBe(1);
  });

  it("keeps tenants apart: another tenant's party is 403 on every party route, its documents invisible", async () => {
    const own = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(tokenA, { type: 'bearer' })
      .type('application/xml')
      .send(invoice);
    const id = (own.body as { id: string }).id;
    const routes = [
      () => request(ctx.app).post(SEND(PARTY_A)).auth(tokenB, { type: 'bearer' }).type('application/xml').send(invoice),
      () => request(ctx.app).get(`/api/v1/${PARTY_A}/salesInvoice/${id}/status`).auth(tokenB, { type: 'bearer' }),
      () => request(ctx.app).get(`/api/v1/${PARTY_A}/generic/${id}/download`).auth(tokenB, { type: 'bearer' }),
    ];
    for (const call of routes) {
      const res = await call();
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'PARTY_NOT_ACCESSIBLE' });
    }
    // The same 403 for a party that exists nowhere: existence does not leak.
    const ghost = await request(ctx.app)
      .get(`/api/v1/0106:99999999/salesInvoice/${id}/status`)
      .auth(tokenB, { type: 'bearer' });
    expect(ghost.status).toBe(403);
    // Own party, other party's document id → 404.
    const crossParty = await request(ctx.app)
      .get(`/api/v1/${PARTY_A2}/salesInvoice/${id}/status`)
      .auth(tokenA, { type: 'bearer' });
    expect(crossParty.status).toBe(404);
    expect(crossParty.body).toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
    const notUuid = await request(ctx.app)
      .get(`/api/v1/${PARTY_A}/generic/not-a-uuid/download`)
      .auth(tokenA, { type: 'bearer' });
    expect(notUuid.status).toBe(404);
    const badParty = await request(ctx.app)
      .get(`/api/v1/NOTAPARTY/salesInvoice/${id}/status`)
      .auth(tokenA, { type: 'bearer' });
    expect(badParty.status).toBe(400);
  });

  it("limits a password token to the user's linked parties", async () => {
    const { hashSecret } = await import('../../src/auth/secret-hash');
    await ctx.core.directory.createUser({
      tenantId: 'tenantA',
      username: 'alice',
      passwordHash: await hashSecret('Correct!Horse42'),
      partyIds: [PARTY_A],
    });
    const token = await ctx.passwordToken(clientA, 'alice', 'Correct!Horse42');
    const ok = await request(ctx.app)
      .post(SEND(PARTY_A))
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send(invoice);
    expect(ok.status).toBe(200);
    const denied = await request(ctx.app)
      .post(SEND(PARTY_A2))
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send(invoice);
    expect(denied.status).toBe(403);
    const me = await request(ctx.app).get('/api/v1/me').auth(token, { type: 'bearer' });
    expect(me.status).toBe(200);
    expectContract('get', '/api/v1/me', me);
    expect(me.body).toMatchObject({
      clientId: clientA.clientId,
      username: 'alice',
      tenantId: 'tenantA',
      grantType: 'password',
    });
    expect((me.body as { parties: { partyId: string }[] }).parties.map((p) => p.partyId)).toEqual([PARTY_A]);
  });

  it('shows a client token every party of its tenants on /me', async () => {
    const me = await request(ctx.app).get('/api/v1/me').auth(tokenA, { type: 'bearer' });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      clientId: clientA.clientId,
      tenantId: 'tenantA',
      grantType: 'client_credentials',
      scope: 'ap',
    });
    expect((me.body as { parties: { partyId: string; legalEntityId: string }[] }).parties).toEqual([
      { partyId: PARTY_A, legalEntityId: `NL:${PARTY_A}`, name: 'A one' },
      { partyId: PARTY_A2, legalEntityId: `NL:${PARTY_A2}`, name: 'A two' },
    ]);
  });

  it('requires a token on every API route', async () => {
    for (const [method, path] of [
      ['get', '/api/v1/me'],
      ['post', SEND(PARTY_A)],
      ['get', `/api/v1/${PARTY_A}/salesInvoice/${randomUUID()}/status`],
      ['get', `/api/v1/${PARTY_A}/generic/${randomUUID()}/download`],
    ] as const) {
      const res = await request(ctx.app)[method](path);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });
});
