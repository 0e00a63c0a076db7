/**
 * A party's documents beyond the upload, on a real database: a document injected as if it had arrived (intake,
 * hostile bodies, access), the receive use case on it (detection, validation with the official rules, the verdict on
 * the record and in the event), a received document's status, and the bulk listing with its cursor and isolation.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { expectContract } from '../support/contract';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { invalidInvoice, receiveDocumentSteps, recordingEvents, runReceiveSteps } from '../support/received-fixtures';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import type { ReceiveDocumentSteps } from '../../src/receiving';
import { hashSecret } from '../../src/auth/secret-hash';
import type { PublishEventInput } from '../../src/webhooks/publish';
import { injectedMessageId, type ReceiveDocumentInput } from '../../workflows/contracts/receive-document';
import { decodeCursor, encodeCursor } from '../../api/routes/documents-list.routes';

const TENANT = 'tenantRcv';
const OTHER_TENANT = 'tenantRcvOther';
const PARTY = '0106:44444444';
const SECOND_PARTY = '0106:44444445';
const FOREIGN_PARTY = '0106:55555555';
const RECEIVE = `/api/v1/${PARTY}/generic/receive`;
const LIST = `/api/v1/${PARTY}/documents`;

interface Problem {
  code: string;
  detail: string;
  status: number;
}

interface ListBody {
  documents: Array<{
    id: string;
    direction: string;
    kind: string | null;
    state: string;
    createdBy: string;
    validation?: { verdict: string; reasonCodes?: string[]; ruleIds?: string[] };
  }>;
  nextCursor?: string;
}

/** The sample invoice with the seller's and the buyer's EndpointID (BT-34, BT-49), as a Peppol invoice has them. */
function withEndpoints(xml: Buffer): Buffer {
  let s = xml.toString('utf8');
  for (const [role, id] of [
    ['AccountingSupplierParty', '7315458756324'],
    ['AccountingCustomerParty', '4562458856624'],
  ] as const) {
    const from = new RegExp(`(<cac:${role}>\\s*<cac:Party>)`);
    expect(s).toMatch(from);
    s = s.replace(from, `$1<cbc:EndpointID schemeID="0088">${id}</cbc:EndpointID>`);
  }
  return Buffer.from(s, 'utf8');
}

describe('received documents: injection, validation verdict, status and bulk listing', () => {
  let ctx: TestContext;
  let starter: RecordingWorkflowStarter;
  let token: string;
  let foreignToken: string;
  let steps: ReceiveDocumentSteps;
  const published: PublishEventInput[] = [];
  const invoice = corpusFile(SAMPLE_UBL_INVOICE);

  beforeAll(async () => {
    starter = new RecordingWorkflowStarter();
    ctx = await createTestContext('received', { workflows: starter, env: { MAX_UPLOAD_BYTES: String(1024 * 1024) } });
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
    steps = receiveDocumentSteps(ctx, { events: recordingEvents(published) });
  });
  afterAll(async () => ctx.close());

  const blobCount = async () =>
    ctx.core.db.connection.db!.collection(ctx.core.db.blobs.filesCollection).countDocuments();
  const inject = (body: Buffer, type = 'application/xml', path = RECEIVE, bearer = token) =>
    request(ctx.app).post(path).auth(bearer, { type: 'bearer' }).type(type).send(body);

  /** The receive run's input of an injected document. */
  const injectedInput = (documentId: string): ReceiveDocumentInput => ({
    tenantId: TENANT,
    messageId: injectedMessageId(documentId),
    injected: { documentId },
  });

  /** The receive run's steps on an injected document, in the workflow's order (detect, validate, register). */
  const runReceive = (documentId: string) => runReceiveSteps(steps, injectedInput(documentId), 'if-detected');

  async function injected(body: Buffer): Promise<string> {
    const res = await inject(body);
    expect(res.status).toBe(200);
    expectContract('post', '/api/v1/:partyId/generic/receive', res);
    return (res.body as { id: string }).id;
  }

  describe('POST generic/receive', () => {
    it('stores the document as a received one (createdBy manualUpload) and starts the receive run for it', async () => {
      const id = await injected(invoice);
      const stored = await ctx.core.documents.findStored(TENANT, id);
      expect(stored).toMatchObject({
        direction: 'inbound',
        partyId: PARTY,
        createdBy: 'manualUpload',
        size: invoice.length,
      });
      expect(starter.receiveStarted).toContainEqual({
        tenantId: TENANT,
        messageId: `injected:${id}`,
        injected: { documentId: id },
      });
    });

    it('is idempotent with X-Service-DocumentId: same bytes, same document; other bytes 409', async () => {
      const id = randomUUID();
      const first = await inject(invoice).set('X-Service-DocumentId', id);
      const again = await inject(invoice).set('X-Service-DocumentId', id);
      expect([first.status, again.status]).toEqual([200, 200]);
      expect((again.body as { id: string }).id).toBe(id);
      const before = await blobCount();
      const other = await inject(invalidInvoice()).set('X-Service-DocumentId', id);
      expect(other.status).toBe(409);
      expectContract('post', '/api/v1/:partyId/generic/receive', other);
      expect(await blobCount()).toBe(before);
      const notUuid = await inject(invoice).set('X-Service-DocumentId', 'INV-2024-1');
      expect(notUuid.status).toBe(400);
      expect((notUuid.body as Problem).code).toBe('INVALID_DOCUMENT_ID');
    });

    it("refuses an id another party's document or a sales invoice holds", async () => {
      const upload = await request(ctx.app)
        .post(`/api/v1/${PARTY}/salesInvoice/send`)
        .auth(token, { type: 'bearer' })
        .type('application/xml')
        .send(invoice);
      expect(upload.status).toBe(200);
      const salesId = (upload.body as { id: string }).id;
      const res = await inject(invoice).set('X-Service-DocumentId', salesId);
      expect(res.status).toBe(409);
      const mine = await injected(invoice);
      const other = await inject(invoice, 'application/xml', `/api/v1/${SECOND_PARTY}/generic/receive`).set(
        'X-Service-DocumentId',
        mine,
      );
      expect(other.status).toBe(409);
    });

    it('has the upload intake: size, encoding, media type, first bytes; nothing stored', async () => {
      const cases: Array<[request.Test, number, string]> = [
        [inject(Buffer.concat([invoice, Buffer.alloc(1024 * 1024, 0x20)])), 413, 'PAYLOAD_TOO_LARGE'],
        [inject(gzipSync(invoice)).set('Content-Encoding', 'gzip'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        // A gzip bomb declared as XML: its first bytes are not XML, so nothing is stored or inflated.
        [inject(gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x3c))), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        [inject(invoice, 'application/json'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        [inject(invoice, 'application/pdf'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        [inject(Buffer.from('%PDF-1.7 not xml'), 'application/xml'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        [inject(Buffer.alloc(0)), 400, 'BAD_REQUEST'],
      ];
      for (const [req, status, code] of cases) {
        const before = await blobCount();
        const res = await req;
        expect({ status: res.status, code: (res.body as Problem).code }).toEqual({ status, code });
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expectContract('post', '/api/v1/:partyId/generic/receive', res);
        expect(await blobCount()).toBe(before);
      }
    });

    it('refuses a missing or wrong token (401) and a party of another tenant (403), storing nothing', async () => {
      const before = await blobCount();
      const none = await request(ctx.app).post(RECEIVE).type('application/xml').send(invoice);
      expect(none.status).toBe(401);
      const wrong = await inject(invoice, 'application/xml', RECEIVE, `${token}x`);
      expect(wrong.status).toBe(401);
      const foreign = await inject(invoice, 'application/xml', `/api/v1/${FOREIGN_PARTY}/generic/receive`);
      expect(foreign.status).toBe(403);
      expect((foreign.body as Problem).code).toBe('PARTY_NOT_ACCESSIBLE');
      const fromOutside = await inject(invoice, 'application/xml', RECEIVE, foreignToken);
      expect(fromOutside.status).toBe(403);
      expectContract('post', '/api/v1/:partyId/generic/receive', fromOutside);
      expect(await blobCount()).toBe(before);
    });

    it('reads hostile XML with the secure parser: XXE and entity bombs end as InvoiceReceivedError', async () => {
      const xxe = Buffer.from(
        '<?xml version="1.0"?><!DOCTYPE Invoice [<!ENTITY x SYSTEM "file:///etc/passwd">]>' +
          '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&x;</ID></Invoice>',
      );
      const bomb = Buffer.from(
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;">' +
          '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>',
      );
      for (const body of [xxe, bomb]) {
        const id = await injected(body);
        const { detection, validation, received } = await runReceive(id);
        expect(detection).toMatchObject({ ok: false, code: 'UNSAFE_XML' });
        expect(validation).toBeUndefined();
        expect(received).toMatchObject({ documentId: id, state: 'rejected', topic: 'InvoiceReceivedError' });
        const event = published.find((e) => e.id === received.eventId);
        expect(event).toMatchObject({ topic: 'InvoiceReceivedError', createdBy: 'manualUpload', documentId: id });
        expect(event?.details).toMatchObject({ reasonCode: 'UNSAFE_XML', createdBy: 'manualUpload' });
        expect(JSON.stringify(event)).not.toContain('root:');
      }
    });
  });

  describe('the receive run on an injected document', () => {
    it('validates a valid invoice, records the verdict and announces it with createdBy manualUpload', async () => {
      const id = await injected(withEndpoints(invoice));
      const { validation, received } = await runReceive(id);
      expect(validation).toMatchObject({ kind: 'valid' });
      expect(received).toMatchObject({ documentId: id, state: 'validated', topic: 'InvoiceReceived' });
      const event = published.find((e) => e.id === received.eventId)!;
      expect(event).toMatchObject({ topic: 'InvoiceReceived', createdBy: 'manualUpload', documentId: id });
      expect(event.message).toMatch(/injected through the API/);
      expect(event.details).toMatchObject({
        id,
        createdBy: 'manualUpload',
        validation: 'valid',
        documentTypeId: expect.stringMatching(
          /^busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##/,
        ),
        sender: 'iso6523-actorid-upis::0088:7315458756324',
      });
      expect(event.details).not.toHaveProperty('messageId');

      const status = await request(ctx.app)
        .get(`/api/v1/${PARTY}/purchaseInvoice/${id}/status`)
        .auth(token, { type: 'bearer' });
      expect(status.status).toBe(200);
      expectContract('get', '/api/v1/:partyId/purchaseInvoice/:documentId/status', status);
      expect(status.body).toMatchObject({
        id,
        state: 'validated',
        format: { documentType: 'Invoice' },
        validation: { isValid: true, errorCount: 0 },
        verdict: { verdict: 'valid', errorCount: 0 },
      });
    });

    it('stores and announces an invalid invoice with reason codes and failing rules', async () => {
      const id = await injected(invalidInvoice());
      const { validation, received } = await runReceive(id);
      expect(validation).toMatchObject({ kind: 'invalid', reasonCodes: expect.arrayContaining(['BV']) });
      expect(validation?.kind === 'invalid' && validation.ruleIds).toContain('BR-CL-01');
      expect(received).toMatchObject({ state: 'invalid', topic: 'InvoiceReceived' });
      const event = published.find((e) => e.id === received.eventId)!;
      // Without EndpointIDs the document names no Peppol sender.
      expect(event.details).toMatchObject({ sender: 'unknown' });
      expect(event.details).toMatchObject({
        validation: 'invalid',
        validationReasonCodes: expect.stringContaining('BV'),
      });
      expect(event.details?.['validationRules']).toContain('BR-CL-01');

      const status = await request(ctx.app)
        .get(`/api/v1/${PARTY}/purchaseInvoice/${id}/status`)
        .auth(token, { type: 'bearer' });
      expect(status.status).toBe(200);
      expectContract('get', '/api/v1/:partyId/purchaseInvoice/:documentId/status', status);
      expect(status.body).toMatchObject({
        state: 'invalid',
        validation: { isValid: false },
        verdict: { verdict: 'invalid', reasonCodes: expect.arrayContaining(['BV']) },
      });
      expect((status.body as { verdict: { ruleIds: string[] } }).verdict.ruleIds).toContain('BR-CL-01');
      // Still downloadable as received.
      const download = await request(ctx.app)
        .get(`/api/v1/${PARTY}/purchaseInvoice/${id}/download`)
        .auth(token, { type: 'bearer' });
      expect(download.status).toBe(200);
    });

    it('records not-validated with the reason when the run could not validate (the workflow says why)', async () => {
      const id = await injected(invoice);
      const input = injectedInput(id);
      const detection = await steps.detectReceivedFormat(input);
      const reason = 'Validation could not run: rule pack missing';
      const received = await steps.registerReceivedDocument({
        ...input,
        detection,
        validation: { kind: 'not-validated', reason },
        eventId: randomUUID(),
      });
      expect(received).toMatchObject({ state: 'not-validated', topic: 'InvoiceReceived' });
      expect(published.find((e) => e.id === received.eventId)?.details).toMatchObject({
        validation: 'not-validated',
        validationReason: reason,
      });
      const status = await request(ctx.app)
        .get(`/api/v1/${PARTY}/purchaseInvoice/${id}/status`)
        .auth(token, { type: 'bearer' });
      expectContract('get', '/api/v1/:partyId/purchaseInvoice/:documentId/status', status);
      expect(status.body).toMatchObject({ state: 'not-validated', verdict: { verdict: 'not-validated', reason } });
    });

    it('repeats of a step keep the first entries and announce the same verdict', async () => {
      const id = await injected(invalidInvoice());
      const first = await runReceive(id);
      const again = await runReceive(id);
      expect(again.validation).toEqual(first.validation);
      expect(again.received.state).toBe(first.received.state);
      const doc = await ctx.core.documents.find(TENANT, id);
      expect(doc?.history.filter((h) => h.key === 'validate')).toHaveLength(1);
      expect(doc?.history.filter((h) => h.key === 'detect')).toHaveLength(1);
    });

    it("the status of a sales invoice or another party's document is 404 on the purchase path", async () => {
      const id = await injected(invoice);
      const other = await request(ctx.app)
        .get(`/api/v1/${SECOND_PARTY}/purchaseInvoice/${id}/status`)
        .auth(token, { type: 'bearer' });
      expect(other.status).toBe(404);
      const foreign = await request(ctx.app)
        .get(`/api/v1/${PARTY}/purchaseInvoice/${id}/status`)
        .auth(foreignToken, { type: 'bearer' });
      expect(foreign.status).toBe(403);
    });
  });

  describe('GET documents (bulk listing)', () => {
    const LISTED = '0106:44444446';
    const LISTED_PATH = `/api/v1/${LISTED}/documents`;
    const ids: { sent: string[]; received: string[] } = { sent: [], received: [] };

    beforeAll(async () => {
      await ctx.core.directory.createParty({
        tenantId: TENANT,
        partyId: LISTED,
        legalEntityId: `NL:${LISTED}`,
        name: 'L',
      });
      for (let i = 0; i < 3; i++) {
        const sent = await request(ctx.app)
          .post(`/api/v1/${LISTED}/salesInvoice/send`)
          .auth(token, { type: 'bearer' })
          .type('application/xml')
          .send(invoice);
        expect(sent.status).toBe(200);
        ids.sent.push((sent.body as { id: string }).id);
        const got = await inject(invoice, 'application/xml', `/api/v1/${LISTED}/generic/receive`);
        expect(got.status).toBe(200);
        const id = (got.body as { id: string }).id;
        ids.received.push(id);
        await runReceiveFor(id);
      }
      // A sales invoice whose upload was never answered 200 is not a document of the party's yet.
      await ctx.core.documents.insertOutbound({
        tenantId: TENANT,
        documentId: randomUUID(),
        partyId: LISTED,
        createdBy: 'api',
        contentType: 'application/xml',
        size: 1,
        sha256: 'x',
        blobId: 'none',
      });
    });

    async function runReceiveFor(documentId: string) {
      await runReceiveSteps(steps, injectedInput(documentId));
    }

    const list = (query: Record<string, string> = {}, path = LISTED_PATH, bearer = token) =>
      request(ctx.app).get(path).query(query).auth(bearer, { type: 'bearer' });

    it('lists sent and received documents, oldest first, without unanswered uploads', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expectContract('get', '/api/v1/:partyId/documents', res);
      const body = res.body as ListBody;
      expect(body.documents.map((d) => d.id)).toEqual([
        ids.sent[0],
        ids.received[0],
        ids.sent[1],
        ids.received[1],
        ids.sent[2],
        ids.received[2],
      ]);
      expect(body.nextCursor).toBeUndefined();
      expect(body.documents[1]).toMatchObject({ direction: 'received', kind: 'Invoice', createdBy: 'manualUpload' });
      expect(body.documents[0]).toMatchObject({ direction: 'sent', createdBy: 'api' });
    });

    it('pages with a stable cursor: no document repeated or skipped while others are written', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await list({ limit: '4', ...(cursor ? { cursor } : {}) });
        expect(res.status).toBe(200);
        expectContract('get', '/api/v1/:partyId/documents', res);
        const body = res.body as ListBody;
        seen.push(...body.documents.map((d) => d.id));
        cursor = body.nextCursor;
        if (pages === 0) {
          // Written after the first page was read: it comes last, on a later page.
          const late = await inject(invoice, 'application/xml', `/api/v1/${LISTED}/generic/receive`);
          ids.received.push((late.body as { id: string }).id);
        }
        pages++;
      } while (cursor && pages < 10);
      expect(pages).toBe(2);
      expect(seen).toEqual([...ids.sent.flatMap((s, i) => [s, ids.received[i]!]), ids.received[3]]);
    });

    it('filters by direction, kind and time', async () => {
      const sent = (await list({ direction: 'sent' })).body as ListBody;
      expect(sent.documents.map((d) => d.id)).toEqual(ids.sent);
      const received = (await list({ direction: 'received' })).body as ListBody;
      expect(received.documents.map((d) => d.id)).toEqual(ids.received);
      // Kind is what detection found: the received ones ran their detection; sent ones here never ran a workflow.
      const invoices = (await list({ kind: 'invoice' })).body as ListBody;
      expect(invoices.documents.map((d) => d.id)).toEqual(ids.received.slice(0, 3));
      const orders = (await list({ kind: 'Order' })).body as ListBody;
      expect(orders.documents).toEqual([]);
      const all = (await list()).body as ListBody;
      const third = await ctx.core.documents.findStored(TENANT, all.documents[2]!.id);
      const since = (await list({ since: third!.createdAt.toISOString() })).body as ListBody;
      expect(since.documents.map((d) => d.id)).toEqual(all.documents.slice(2).map((d) => d.id));
      const until = (await list({ until: third!.createdAt.toISOString() })).body as ListBody;
      expect(until.documents.map((d) => d.id)).toEqual(all.documents.slice(0, 2).map((d) => d.id));
    });

    it('refuses query values out of range with 400 problems', async () => {
      const queries: Array<Record<string, string>> = [
        { limit: '0' },
        { limit: '1001' },
        { limit: 'ten' },
        { direction: 'both' },
        { since: 'yesterday' },
        { until: '2024-13-45T99:00:00Z' },
        { cursor: 'not a cursor' },
        { cursor: Buffer.from('123|nope').toString('base64url') },
        { kind: '<Invoice>' },
      ];
      for (const query of queries) {
        const res = await list(query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expectContract('get', '/api/v1/:partyId/documents', res);
      }
      expect((await list({ limit: '1000' })).status).toBe(200);
    });

    it("lists only the path's party, and refuses parties out of the token's reach", async () => {
      const other = (await list({}, `/api/v1/${SECOND_PARTY}/documents`)).body as ListBody;
      expect(other.documents.some((d) => [...ids.sent, ...ids.received].includes(d.id))).toBe(false);
      const foreign = await list({}, `/api/v1/${FOREIGN_PARTY}/documents`);
      expect(foreign.status).toBe(403);
      expectContract('get', '/api/v1/:partyId/documents', foreign);
      const outside = await list({}, LISTED_PATH, foreignToken);
      expect(outside.status).toBe(403);
      // A user token reaches only its linked parties.
      const client = await ctx.createClient([TENANT]);
      await ctx.core.directory.createUser({
        tenantId: TENANT,
        username: 'lister',
        passwordHash: await hashSecret('Secret123!'),
        partyIds: [PARTY],
      });
      const userToken = await ctx.passwordToken(client, 'lister', 'Secret123!');
      expect((await list({}, LISTED_PATH, userToken)).status).toBe(403);
      expect((await list({}, LIST, userToken)).status).toBe(200);
      expect((await list({}, LISTED_PATH)).status).toBe(200);
      expect((await request(ctx.app).get(LISTED_PATH)).status).toBe(401);
    });

    it('cursors are positions, opaque and round-tripping', () => {
      const p = { createdAt: new Date('2026-01-02T03:04:05.678Z'), documentId: randomUUID() };
      const c = encodeCursor(p);
      expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(c)).toEqual(p);
    });
  });
});
