/**
 * POST /api/v1-beta/generic/{documentId}/response (spec 4.7, body 2.6) on a real database: the body's rules (400
 * problems), tenant and party isolation (404), a document that did not arrive over Peppol (409), one MLS per document
 * (409), and the run started with the checked status.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import request from 'supertest';
import { expectContract } from '../support/contract';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';

const TENANT = 'tenantMlsResp';
const OTHER_TENANT = 'tenantMlsRespOther';
const PARTY = '0106:71717171';
const SECOND_PARTY = '0106:71717172';
const FOREIGN_PARTY = '0106:72727272';
const ROUTE = '/api/v1-beta/generic/:documentId/response';

describe('POST /api/v1-beta/generic/{documentId}/response', () => {
  let ctx: TestContext;
  let starter: RecordingWorkflowStarter;
  let token: string;
  let foreignToken: string;

  beforeAll(async () => {
    starter = new RecordingWorkflowStarter();
    ctx = await createTestContext('mls-response', { workflows: starter });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'R' });
    await ctx.core.directory.createTenant({ id: OTHER_TENANT, name: 'O' });
    for (const [tenantId, partyId] of [
      [TENANT, PARTY],
      [TENANT, SECOND_PARTY],
      [OTHER_TENANT, FOREIGN_PARTY],
    ] as const)
      await ctx.core.directory.createParty({ tenantId, partyId, legalEntityId: `NL:${partyId}`, name: partyId });
    token = await ctx.token(await ctx.createClient([TENANT]));
    foreignToken = await ctx.token(await ctx.createClient([OTHER_TENANT]));
  });
  afterAll(async () => ctx.close());

  /** A document of `partyId` as the receive step stores it (over AS4: its bytes name the message). */
  async function received(tenantId: string, partyId: string, overAs4 = true): Promise<string> {
    const documentId = randomUUID();
    const bytes = Buffer.from('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>');
    const blob = await ctx.core.db.blobs.put(Readable.from([bytes]), {
      limit: bytes.length,
      filename: 'r.xml',
      contentType: 'application/xml',
      metadata: overAs4 ? { tenantId, as4MessageId: `${randomUUID()}@peer` } : { tenantId },
    });
    await ctx.core.documents.insertInbound({
      tenantId,
      documentId,
      partyId,
      channel: overAs4 ? 'peppol' : 'api',
      createdBy: overAs4 ? 'peppol' : 'manualUpload',
      contentType: 'application/xml',
      size: blob.size,
      sha256: blob.sha256,
      blobId: blob.blobId,
    });
    return documentId;
  }

  const post = (documentId: string, body: unknown, bearer = token) =>
    request(ctx.app)
      .post(`/api/v1-beta/generic/${documentId}/response`)
      .auth(bearer, { type: 'bearer' })
      .send(body as object);

  it('starts the MLS run of a received document with the checked status (AP, AB, RE with lines)', async () => {
    const bodies = [
      { status: 'AP', description: 'Fine' },
      { status: 'AB' },
      {
        status: 'RE',
        description: 'Rejected',
        lines: [
          { statusReasonCode: 'BV', description: '[BR-CO-10] Sum of lines' },
          { statusReasonCode: 'BW', description: 'A warning beside it' },
        ],
      },
    ];
    for (const body of bodies) {
      const documentId = await received(TENANT, PARTY);
      const res = await post(documentId, body);
      expect(res.status).toBe(202);
      expectContract('post', ROUTE, res);
      expect(res.body).toEqual({ id: documentId, run: `send-mls:${TENANT}:${documentId}` });
      const started = starter.mlsStarted.find((s) => s.documentId === documentId);
      expect(started).toEqual({
        tenantId: TENANT,
        documentId,
        responseCode: body.status,
        ...(body.description ? { description: body.description } : {}),
        ...(body.lines
          ? { lines: body.lines.map((l) => ({ reasonCode: l.statusReasonCode, description: l.description })) }
          : {}),
        requestedBy: 'api',
      });
    }
  });

  it('answers 409 for a second MLS of one document, and for a document that did not arrive over Peppol', async () => {
    const documentId = await received(TENANT, PARTY);
    expect((await post(documentId, { status: 'AP' })).status).toBe(202);
    const again = await post(documentId, {
      status: 'RE',
      description: 'x',
      lines: [{ statusReasonCode: 'FD', description: 'y' }],
    });
    expect(again.status).toBe(409);
    expectContract('post', ROUTE, again);
    const injected = await received(TENANT, PARTY, false);
    const res = await post(injected, { status: 'AP' });
    expect(res.status).toBe(409);
    expect((res.body as { detail: string }).detail).toMatch(/did not arrive over Peppol/);
    expect(starter.mlsStarted.some((s) => s.documentId === injected)).toBe(false);
  });

  it.each([
    ['an unknown status', { status: 'OK' }, /status must be one of AB, AP, RE/],
    ['no status', { description: 'x' }, /status must be one of/],
    [
      'lines without RE',
      { status: 'AP', lines: [{ statusReasonCode: 'BV', description: 'x' }] },
      /only allowed with status RE/,
    ],
    ['RE without lines', { status: 'RE', description: 'x' }, /SCH-MLS-23/],
    [
      'RE with only a warning',
      { status: 'RE', description: 'x', lines: [{ statusReasonCode: 'BW', description: 'w' }] },
      /SCH-MLS-24/,
    ],
    [
      'RE without a description',
      { status: 'RE', lines: [{ statusReasonCode: 'SV', description: 'x' }] },
      /description must be/,
    ],
    [
      'an unknown reason code',
      { status: 'RE', description: 'x', lines: [{ statusReasonCode: 'XX', description: 'x' }] },
      /FD, SV, BV, BW/,
    ],
    [
      'a line without description',
      { status: 'RE', description: 'x', lines: [{ statusReasonCode: 'BV' }] },
      /lines\[0\]\.description/,
    ],
    ['an unknown field', { status: 'AP', extra: 1 }, /unknown field\(s\): extra/],
    [
      'an unknown line field',
      { status: 'RE', description: 'x', lines: [{ statusReasonCode: 'BV', description: 'x', ruleId: 'R' }] },
      /unknown field/,
    ],
    ['an array', [{ status: 'AP' }], /JSON object/],
  ])('refuses %s with a 400 problem and starts nothing', async (_name, body, detail) => {
    const documentId = await received(TENANT, PARTY);
    const res = await post(documentId, body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expectContract('post', ROUTE, res);
    expect((res.body as { detail: string }).detail).toMatch(detail);
    expect(starter.mlsStarted.some((s) => s.documentId === documentId)).toBe(false);
  });

  it('refuses a body that is not JSON (415) or not readable JSON (400)', async () => {
    const documentId = await received(TENANT, PARTY);
    const xml = await request(ctx.app)
      .post(`/api/v1-beta/generic/${documentId}/response`)
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send('<status>AP</status>');
    expect(xml.status).toBe(415);
    expectContract('post', ROUTE, xml);
    const broken = await request(ctx.app)
      .post(`/api/v1-beta/generic/${documentId}/response`)
      .auth(token, { type: 'bearer' })
      .type('application/json')
      .send('{"status":');
    expect(broken.status).toBe(400);
  });

  it("answers 404 for another tenant's document, an unknown id and a sales invoice; 401 without a token", async () => {
    const foreign = await received(OTHER_TENANT, FOREIGN_PARTY);
    const mine = await received(TENANT, PARTY);
    const upload = await request(ctx.app)
      .post(`/api/v1/${SECOND_PARTY}/salesInvoice/send`)
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send(Buffer.from('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>'));
    expect(upload.status).toBe(200);
    const cases = [
      await post((upload.body as { id: string }).id, { status: 'AP' }),
      await post(foreign, { status: 'AP' }),
      await post(mine, { status: 'AP' }, foreignToken),
      await post(randomUUID(), { status: 'AP' }),
      await post('not-a-uuid', { status: 'AP' }),
    ];
    for (const res of cases) {
      expect(res.status).toBe(404);
      expectContract('post', ROUTE, res);
    }
    expect(starter.mlsStarted.some((s) => s.documentId === foreign || s.documentId === mine)).toBe(false);
    const anonymous = await request(ctx.app).post(`/api/v1-beta/generic/${mine}/response`).send({ status: 'AP' });
    expect(anonymous.status).toBe(401);
    // The foreign tenant's own token reaches its document.
    expect((await post(foreign, { status: 'AP' }, foreignToken)).status).toBe(202);
  });
});
