/**
 * POST /api/v1/{partyId}/purchaseInvoice/{documentId}/response over HTTP (createApp, no socket): the buyer's Invoice
 * Response for a received invoice starts its own run, one per (invoice, status); hostile input (malformed JSON, wrong
 * media type, unknown status or codes, T111 combinations, oversize bodies) is a 400 / 413 / 415 problem; documents of
 * other parties and tenants, sales invoices and received documents that are no invoice are 404.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { corpusFile } from '../support/corpus';
import { storeDetectedDocument } from '../support/received-fixtures';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { sentInvoiceResponseId } from '../../src/receiving/invoice-response-send';

const TENANT = 'tenantIrSend';
const OTHER_TENANT = 'tenantIrOther';
const PARTY = '0184:DK87654321';
const SIBLING = '0106:81818181';
const FOREIGN = '0106:82828282';
const BIS3 = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';

const FORMATS = {
  Invoice: { id: 'peppol-bis3-invoice', name: 'Peppol BIS Billing 3.0 Invoice', documentType: 'Invoice' },
  Order: { id: 'peppol-order', name: 'Peppol Order 3', documentType: 'Order' },
} as const;

describe('POST …/purchaseInvoice/{documentId}/response', () => {
  let ctx: TestContext;
  let token: string;
  let foreignToken: string;
  let workflows: RecordingWorkflowStarter;

  beforeAll(async () => {
    workflows = new RecordingWorkflowStarter();
    ctx = await createTestContext('invoice-response-send', { workflows });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'B' });
    await ctx.core.directory.createTenant({ id: OTHER_TENANT, name: 'O' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: 'DK:B', name: 'B' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: SIBLING, legalEntityId: 'NL:S', name: 'S' });
    await ctx.core.directory.createParty({
      tenantId: OTHER_TENANT,
      partyId: FOREIGN,
      legalEntityId: 'NL:F',
      name: 'F',
    });
    token = await ctx.token(await ctx.createClient([TENANT]));
    foreignToken = await ctx.token(await ctx.createClient([OTHER_TENANT]));
  });
  afterAll(async () => ctx.close());

  /** A received document of `partyId` as the receive run leaves it (record, detection entry with its format). */
  function received(
    tenantId: string,
    partyId: string,
    bytes = corpusFile(BIS3),
    kind: keyof typeof FORMATS = 'Invoice',
    direction: 'inbound' | 'outbound' = 'inbound',
  ): Promise<string> {
    return storeDetectedDocument(ctx, { tenantId, partyId, bytes, direction, format: FORMATS[kind] });
  }

  const post = (partyId: string, documentId: string, body: unknown, t = token) =>
    request(ctx.app)
      .post(`/api/v1/${partyId}/purchaseInvoice/${documentId}/response`)
      .auth(t, { type: 'bearer' })
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));

  it('starts one run per (invoice, status): 202 with the response id, the same status again 409', async () => {
    const documentId = await received(TENANT, PARTY);
    const body = {
      status: 'RE',
      note: 'Wrong prices',
      reasons: [{ code: 'PRI', text: 'Unit price' }],
      actions: [{ code: 'NIN' }],
    };
    const res = await post(PARTY, documentId, body);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: sentInvoiceResponseId(TENANT, documentId, 'RE'),
      documentId,
      status: 'RE',
      run: `send-invoice-response:${TENANT}:${documentId}:RE`,
    });
    expect(workflows.invoiceResponsesStarted.at(-1)).toEqual({
      tenantId: TENANT,
      documentId,
      statusCode: 'RE',
      note: 'Wrong prices',
      reasons: [{ code: 'PRI', text: 'Unit price' }],
      actions: [{ code: 'NIN' }],
    });
    const again = await post(PARTY, documentId, { status: 'RE', reasons: [{ code: 'OTH', text: 'x' }] });
    expect(again.status).toBe(409);
    expect(again.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await post(PARTY, documentId, { status: 'AB' })).status).toBe(202);
    expect((await post(PARTY, documentId, { status: 'PD', reasons: [{ code: 'PPD', text: 'half' }] })).status).toBe(
      202,
    );
  });

  it.each<[string, unknown]>([
    ['an unknown status', { status: 'XX' }],
    ['CA (not offered for sending)', { status: 'CA', reasons: [{ code: 'OTH', text: 'x' }] }],
    ['no status', { note: 'x' }],
    ['a status of the wrong type', { status: 1 }],
    ['an unknown reason code', { status: 'UQ', reasons: [{ code: 'ZZZ' }] }],
    ['an action code as reason', { status: 'UQ', reasons: [{ code: 'NIN' }] }],
    ['an unknown action code', { status: 'UQ', actions: [{ code: 'REF' }] }],
    ['RE without clarification (T111-R001)', { status: 'RE' }],
    ['UQ without clarification (T111-R001)', { status: 'UQ', note: 'why?' }],
    ['PPD without PD (T111-R005)', { status: 'AP', reasons: [{ code: 'PPD', text: 'x' }] }],
    ['PPD without text (T111-R004)', { status: 'PD', reasons: [{ code: 'PPD' }] }],
    ['an unknown field', { status: 'AP', extra: true }],
    ['an unknown field in a reason', { status: 'UQ', reasons: [{ code: 'REF', lineId: '1' }] }],
    ['an empty note', { status: 'AP', note: '   ' }],
    ['a note over 1000 characters', { status: 'AP', note: 'x'.repeat(1001) }],
    ['too many reasons', { status: 'UQ', reasons: Array.from({ length: 21 }, () => ({ code: 'OTH', text: 'x' })) }],
    ['an array', [{ status: 'AP' }]],
    ['a string', 'AP'],
  ])('refuses %s with a 400 problem', async (_what, body) => {
    const documentId = await received(TENANT, PARTY);
    const res = await post(PARTY, documentId, body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  it('refuses malformed JSON (400), another media type (415) and an oversize body (413)', async () => {
    const documentId = await received(TENANT, PARTY);
    const url = `/api/v1/${PARTY}/purchaseInvoice/${documentId}/response`;
    const malformed = await request(ctx.app)
      .post(url)
      .auth(token, { type: 'bearer' })
      .set('Content-Type', 'application/json')
      .send('{"status": "AP",');
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toMatch(/not valid JSON/);
    const xml = await request(ctx.app)
      .post(url)
      .auth(token, { type: 'bearer' })
      .set('Content-Type', 'application/xml')
      .send('<status>AP</status>');
    expect(xml.status).toBe(415);
    const big = await request(ctx.app)
      .post(url)
      .auth(token, { type: 'bearer' })
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ status: 'AP', note: 'x'.repeat(70 * 1024) }));
    expect(big.status).toBe(413);
    expect(big.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(workflows.invoiceResponsesStarted.some((s) => s.documentId === documentId)).toBe(false);
  });

  it('answers 404 for other parties, other tenants, sales invoices, non-invoices and unknown ids; 403 for parties out of reach', async () => {
    const sibling = await received(TENANT, SIBLING);
    expect((await post(PARTY, sibling, { status: 'AP' })).status).toBe(404);
    const foreign = await received(OTHER_TENANT, FOREIGN);
    expect((await post(PARTY, foreign, { status: 'AP' })).status).toBe(404);
    expect((await post(FOREIGN, foreign, { status: 'AP' })).status).toBe(403);
    const mine = await received(TENANT, PARTY);
    expect((await post(PARTY, mine, { status: 'AP' }, foreignToken)).status).toBe(403);
    const sales = await received(TENANT, PARTY, corpusFile(BIS3), 'Invoice', 'outbound');
    expect((await post(PARTY, sales, { status: 'AP' })).status).toBe(404);
    const order = await received(TENANT, PARTY, corpusFile(BIS3), 'Order');
    expect((await post(PARTY, order, { status: 'AP' })).status).toBe(404);
    expect((await post(PARTY, randomUUID(), { status: 'AP' })).status).toBe(404);
    expect((await post(PARTY, 'not-a-uuid', { status: 'AP' })).status).toBeGreaterThanOrEqual(400);
    const started = workflows.invoiceResponsesStarted.map((s) => s.documentId);
    for (const id of [sibling, foreign, sales, order]) expect(started).not.toContain(id);
  });

  it('answers 422 for an invoice the response cannot name (no buyer electronic address)', async () => {
    const bytes = Buffer.from(
      corpusFile(BIS3).toString('utf8').replace('<cbc:EndpointID schemeID="0184">DK87654321</cbc:EndpointID>', ''),
    );
    const documentId = await received(TENANT, PARTY, bytes);
    const res = await post(PARTY, documentId, { status: 'AP' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/buyer electronic address/);
  });
});
