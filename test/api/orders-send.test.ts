/**
 * Purchase orders and Order Responses over HTTP (createApp, no socket): `purchaseOrder/send` stores a Peppol Order of
 * the party's buyer and starts its run; malformed or unsafe XML, an invoice, a buyer the party may not act for are
 * answered at once as problems and nothing is stored. `salesOrder/{id}/response` answers a received order of the
 * party, one run per (order, status); bad bodies are 400 problems; other parties', other tenants' and unknown orders
 * are 404.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { corpusFile } from '../support/corpus';
import { expectContract } from '../support/contract';
import { ORDER_BUYER, ORDER_SELLER, orderXml } from '../support/peppol/orders';
import { storeDetectedDocument, type DetectedFormat } from '../support/received-fixtures';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { sentOrderResponseId } from '../../src/receiving/order-response-send';

const TENANT = 'tenantOrders';
const OTHER_TENANT = 'tenantOrdersOther';
/** The buyer of the test orders, and a party of the same legal entity. */
const BUYER = `${ORDER_BUYER.scheme}:${ORDER_BUYER.value}`;
const BUYER_SIBLING = '0106:61616161';
/** The seller of the test orders (receives them), and a party of another legal entity. */
const SELLER = `${ORDER_SELLER.scheme}:${ORDER_SELLER.value}`;
const STRANGER = '0106:62626262';
const FOREIGN = '0106:63636363';
const BIS3 = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';

describe('purchase orders and order responses over HTTP', () => {
  let ctx: TestContext;
  let token: string;
  let foreignToken: string;
  let workflows: RecordingWorkflowStarter;

  beforeAll(async () => {
    workflows = new RecordingWorkflowStarter();
    ctx = await createTestContext('orders-send', { workflows });
    const d = ctx.core.directory;
    await d.createTenant({ id: TENANT, name: 'T' });
    await d.createTenant({ id: OTHER_TENANT, name: 'O' });
    await d.createParty({ tenantId: TENANT, partyId: BUYER, legalEntityId: 'DK:BUY', name: 'Buyer' });
    await d.createParty({ tenantId: TENANT, partyId: BUYER_SIBLING, legalEntityId: 'DK:BUY', name: 'Buyer 2' });
    await d.createParty({ tenantId: TENANT, partyId: SELLER, legalEntityId: 'NL:SEL', name: 'Seller' });
    await d.createParty({ tenantId: TENANT, partyId: STRANGER, legalEntityId: 'NL:STR', name: 'Stranger' });
    await d.createParty({ tenantId: OTHER_TENANT, partyId: FOREIGN, legalEntityId: 'NL:F', name: 'F' });
    token = await ctx.token(await ctx.createClient([TENANT]));
    foreignToken = await ctx.token(await ctx.createClient([OTHER_TENANT]));
  });
  afterAll(async () => ctx.close());

  const upload = (partyId: string, body: Buffer | string, t = token) =>
    request(ctx.app)
      .post(`/api/v1/${partyId}/purchaseOrder/send`)
      .auth(t, { type: 'bearer' })
      .set('Content-Type', 'application/xml')
      .send(Buffer.from(body));

  describe('POST …/purchaseOrder/send', () => {
    it('stores the order of its own buyer, starts its run, and shows it under status and download', async () => {
      const documentId = randomUUID();
      const res = await upload(BUYER, orderXml('PO-100')).set('X-Service-DocumentId', documentId);
      expect(res.status).toBe(200);
      expectContract('post', '/api/v1/:partyId/purchaseOrder/send', res);
      expect(res.body).toEqual({ id: documentId });
      expect(workflows.ordersStarted.at(-1)).toEqual({ tenantId: TENANT, documentId });

      const status = await request(ctx.app)
        .get(`/api/v1/${BUYER}/purchaseOrder/${documentId}/status`)
        .auth(token, { type: 'bearer' });
      expect(status.status).toBe(200);
      expectContract('get', '/api/v1/:partyId/purchaseOrder/:documentId/status', status);
      expect(status.body).toMatchObject({ id: documentId, state: 'accepted' });
      const download = await request(ctx.app)
        .get(`/api/v1/${BUYER}/generic/${documentId}/download`)
        .auth(token, { type: 'bearer' })
        .buffer(true)
        .parse((r, cb) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => cb(null, Buffer.concat(chunks)));
        });
      expect(download.status).toBe(200);
      expect((download.body as Buffer).equals(orderXml('PO-100'))).toBe(true);

      // The same id again is a conflict; the seller's view of the buyer's order is no purchase order of its own.
      expect((await upload(BUYER, orderXml('PO-100')).set('X-Service-DocumentId', documentId)).status).toBe(409);
      const other = await request(ctx.app)
        .get(`/api/v1/${SELLER}/purchaseOrder/${documentId}/status`)
        .auth(token, { type: 'bearer' });
      expect(other.status).toBe(404);
    });

    it('lets a party of the same legal entity send as the buyer', async () => {
      const res = await upload(BUYER_SIBLING, orderXml('PO-101'));
      expect(res.status).toBe(200);
    });

    it.each<[string, Buffer | string, number, RegExp]>([
      ['malformed XML', '<Order><cbc:ID>', 400, /.+/],
      [
        'an XXE (DOCTYPE with an external entity)',
        '<?xml version="1.0"?><!DOCTYPE Order [<!ENTITY x SYSTEM "file:///etc/passwd">]>' +
          '<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2">&x;</Order>',
        400,
        /.+/,
      ],
      ['an invoice', corpusFile(BIS3), 422, /Peppol BIS Billing 3.0 Invoice.*not a Peppol Order 3/],
      ['an empty body', '', 400, /.+/],
      ['something that is no known document', '<Foo xmlns="urn:x"/>', 400, /.+/],
    ])('refuses %s with a problem and stores nothing', async (_what, body, status, detail) => {
      const before = workflows.ordersStarted.length;
      const documentId = randomUUID();
      const res = await upload(BUYER, body).set('X-Service-DocumentId', documentId);
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.detail).toMatch(detail);
      expect(workflows.ordersStarted.length).toBe(before);
      expect(await ctx.core.documents.findStored(TENANT, documentId)).toBeNull();
    });

    it('refuses an order whose buyer is not the party nor its legal entity (403), and another tenant (403)', async () => {
      const documentId = randomUUID();
      const spoofed = await upload(STRANGER, orderXml('PO-102')).set('X-Service-DocumentId', documentId);
      expect(spoofed.status).toBe(403);
      expect(spoofed.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(spoofed.body.detail).toMatch(/buyer 0088:5790000435951 .* not the party 0106:62626262/);
      expect(await ctx.core.documents.findStored(TENANT, documentId)).toBeNull();
      // The seller cannot send the order as if it were the buyer either.
      expect((await upload(SELLER, orderXml('PO-103'))).status).toBe(403);
      expect((await upload(BUYER, orderXml('PO-104'), foreignToken)).status).toBe(403);
    });
  });

  describe('POST …/salesOrder/{documentId}/response', () => {
    /** A received document of `partyId` as the receive run leaves it (record, detection entry with its format). */
    function received(
      tenantId: string,
      partyId: string,
      bytes: Buffer = orderXml('PO-7'),
      format: DetectedFormat = {
        id: 'peppol-order',
        name: 'Peppol Order 3',
        documentType: 'Order',
      },
      direction: 'inbound' | 'outbound' = 'inbound',
    ): Promise<string> {
      return storeDetectedDocument(ctx, { tenantId, partyId, bytes, direction, format, filename: 'o.xml' });
    }

    const respond = (partyId: string, documentId: string, body: unknown, t = token) =>
      request(ctx.app)
        .post(`/api/v1/${partyId}/salesOrder/${documentId}/response`)
        .auth(t, { type: 'bearer' })
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(body));

    it('starts one run per (order, status): 202 with the response id, the same status again 409', async () => {
      const documentId = await received(TENANT, SELLER);
      const body = {
        status: 'CA',
        note: 'Partly',
        lines: [
          { lineId: '1', status: '3', quantity: '1', note: 'Only one' },
          { lineId: '2', status: '5' },
        ],
      };
      const res = await respond(SELLER, documentId, body);
      expect(res.status).toBe(202);
      expectContract('post', '/api/v1/:partyId/salesOrder/:documentId/response', res);
      expect(res.body).toEqual({
        id: sentOrderResponseId(TENANT, documentId, 'CA'),
        documentId,
        status: 'CA',
        run: `send-order-response:${TENANT}:${documentId}:CA`,
      });
      expect(workflows.orderResponsesStarted.at(-1)).toEqual({
        tenantId: TENANT,
        documentId,
        responseCode: 'CA',
        note: 'Partly',
        lines: [
          { lineId: '1', statusCode: '3', quantity: '1', note: 'Only one' },
          { lineId: '2', statusCode: '5' },
        ],
      });
      const again = await respond(SELLER, documentId, { status: 'CA', lines: [{ lineId: '1', status: '7' }] });
      expect(again.status).toBe(409);
      expect(again.headers['content-type']).toMatch(/application\/problem\+json/);
      expect((await respond(SELLER, documentId, { status: 'AB' })).status).toBe(202);
      expect((await respond(SELLER, documentId, { status: 'RE', note: 'Out of stock' })).status).toBe(202);
    });

    it.each<[string, unknown]>([
      ['an unknown status', { status: 'XX' }],
      ['no status', { note: 'x' }],
      ['a status of the wrong type', { status: 1 }],
      ['CA without lines (T76-R007)', { status: 'CA' }],
      ['AP with lines (T76-R008)', { status: 'AP', lines: [{ lineId: '1', status: '5' }] }],
      ['RE with lines (T76-R009)', { status: 'RE', lines: [{ lineId: '1', status: '7' }] }],
      ['AB with lines (T76-R010)', { status: 'AB', lines: [{ lineId: '1', status: '5' }] }],
      ['an unknown line status', { status: 'CA', lines: [{ lineId: '1', status: '9' }] }],
      ['a line status as a number', { status: 'CA', lines: [{ lineId: '1', status: 5 }] }],
      ['a line without id', { status: 'CA', lines: [{ status: '5' }] }],
      [
        'a line answered twice',
        {
          status: 'CA',
          lines: [
            { lineId: '1', status: '5' },
            { lineId: '1', status: '7' },
          ],
        },
      ],
      ['a bad quantity', { status: 'CA', lines: [{ lineId: '1', status: '3', quantity: '-1' }] }],
      ['an unknown field', { status: 'AP', extra: true }],
      ['an unknown field in a line', { status: 'CA', lines: [{ lineId: '1', status: '5', price: '1' }] }],
      ['an empty note', { status: 'AP', note: '  ' }],
      ['an array', [{ status: 'AP' }]],
    ])('refuses %s with a 400 problem', async (_what, body) => {
      const documentId = await received(TENANT, SELLER);
      const res = await respond(SELLER, documentId, body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
      expect(workflows.orderResponsesStarted.some((s) => s.documentId === documentId)).toBe(false);
    });

    it('refuses malformed JSON (400) and another media type (415)', async () => {
      const documentId = await received(TENANT, SELLER);
      const url = `/api/v1/${SELLER}/salesOrder/${documentId}/response`;
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
    });

    it('answers 404 for other parties, other tenants, sent orders, non-orders and unknown ids; 403 out of reach', async () => {
      const strangers = await received(TENANT, STRANGER);
      expect((await respond(SELLER, strangers, { status: 'AP' })).status).toBe(404);
      const foreign = await received(OTHER_TENANT, FOREIGN);
      expect((await respond(SELLER, foreign, { status: 'AP' })).status).toBe(404);
      expect((await respond(FOREIGN, foreign, { status: 'AP' })).status).toBe(403);
      const mine = await received(TENANT, SELLER);
      expect((await respond(SELLER, mine, { status: 'AP' }, foreignToken)).status).toBe(403);
      const sent = await received(TENANT, SELLER, orderXml('PO-8'), undefined, 'outbound');
      expect((await respond(SELLER, sent, { status: 'AP' })).status).toBe(404);
      const invoice = await received(TENANT, SELLER, corpusFile(BIS3), {
        id: 'peppol-bis3-invoice',
        name: 'Peppol BIS Billing 3.0 Invoice',
        documentType: 'Invoice',
      });
      expect((await respond(SELLER, invoice, { status: 'AP' })).status).toBe(404);
      expect((await respond(SELLER, randomUUID(), { status: 'AP' })).status).toBe(404);
      const started = workflows.orderResponsesStarted.map((s) => s.documentId);
      for (const id of [strangers, foreign, sent, invoice]) expect(started).not.toContain(id);
    });

    it('answers 422 for a line the order does not have, and for an order without a buyer address', async () => {
      const documentId = await received(TENANT, SELLER);
      const res = await respond(SELLER, documentId, { status: 'CA', lines: [{ lineId: '9', status: '7' }] });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/no line 9/);
      const noBuyer = Buffer.from(
        orderXml('PO-9')
          .toString()
          .replace(/<cbc:EndpointID schemeID="0088">5790000435951<\/cbc:EndpointID>/, ''),
      );
      const other = await received(TENANT, SELLER, noBuyer);
      const res2 = await respond(SELLER, other, { status: 'AP' });
      expect(res2.status).toBe(422);
      expect(res2.body.detail).toMatch(/buyer electronic address/);
    });
  });
});
