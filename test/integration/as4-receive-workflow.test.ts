/**
 * A received AS4 message on the real Temporal dev server: POST /as4 stores it and starts receiveDocument, whose
 * worker detects the business document's format inside the SBD and records it on the message.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import request from 'supertest';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { receiveDocumentWorkflowId } from '../../src/core/identifiers';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import type { TestPki } from '../support/peppol/test-pki';
import { injectedMessageId, type ReceiveDocumentResult } from '../../workflows/contracts/receive-document';
import { SEND_MLS_WORKFLOW, sendMlsWorkflowId } from '../../workflows/contracts/send-mls';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { DOCTYPE_SCHEME_BUSDOX, documentTypeId, formatId } from '../../src/peppol/identifiers';
import { extractFromPdf } from '../../src/formats';
import { HEADER, RECEIVER, message, sbd } from '../support/as4-messages';
import { requireEnv } from '../support/services';
import { createTestContext, type TestContext } from '../support/test-app';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';
import { testWorkflowBundle } from '../support/workflow-bundle';

describe('receiveDocument on the real Temporal dev server', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `receive-document-${randomUUID()}`;
  let pki: TestPki;
  let ctx: TestContext;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let tenantId: string;

  beforeAll(async () => {
    pki = await testPki();
    starter = await TemporalWorkflowStarter.connect({ address: temporalAddress, namespace: 'default', taskQueue });
    ctx = await createTestContext('asfourreceivewf', {
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        PEPPOL_AP_KEYSTORE: path.join(TEST_PKI_DIR, 'ap-receiver.p12'),
        PEPPOL_AP_KEYSTORE_PASSWORD: 'test',
        PEPPOL_AP_CA: path.join(TEST_PKI_DIR, 'ap-ca.crt.pem'),
      },
    });
    tenantId = (await ctx.core.directory.createTenant({ name: 'receiving tenant' }))._id;
    await ctx.core.directory.createParty({
      tenantId,
      partyId: RECEIVER.value,
      legalEntityId: `NL:${RECEIVER.value}`,
      name: 'Receiver BV',
    });
    const workflowBundle = await testWorkflowBundle();
    worker = await startWorker(ctx.config, { workflowBundle });
  }, 300_000);

  afterAll(async () => {
    await worker?.stop();
    await starter?.close();
    await ctx?.close();
  });

  async function received(msg: {
    contentType: string;
    body: Buffer;
    messageId: string;
  }): Promise<ReceiveDocumentResult> {
    const res = await request(ctx.app).post('/as4').set('Content-Type', msg.contentType).send(msg.body);
    expect(res.status).toBe(200);
    const conn = await Connection.connect({ address: temporalAddress });
    try {
      return (await new Client({ connection: conn }).workflow
        .getHandle(receiveDocumentWorkflowId(tenantId, msg.messageId))
        .result()) as ReceiveDocumentResult;
    } finally {
      await conn.close();
    }
  }

  it('detects the invoice inside the SBD and records it on the received message', async () => {
    const msg = message(pki);
    const result = await received(msg);
    expect(result).toMatchObject({
      messageId: msg.messageId,
      state: 'detected',
      detection: { ok: true, format: { id: expect.stringMatching(/ubl/) } },
    });
    const record = await ctx.core.db.models.As4Inbound.findById(msg.messageId).lean().exec();
    expect(record).toMatchObject({
      state: 'detected',
      stateDetail: result.detection.ok ? result.detection.format.id : '',
      format: { id: expect.stringMatching(/ubl/) },
    });
  });

  it('hands the invoice to its party: a purchase document (as received, or converted) and an InvoiceReceived event', async () => {
    const msg = message(pki);
    const result = await received(msg);
    // Validated with the official rules of its format before it is announced: the verdict is on the document.
    expect(result.validation).toMatchObject({ kind: 'valid' });
    expect(result.received).toMatchObject({ state: 'validated', topic: 'InvoiceReceived' });
    const documentId = result.received.documentId;
    const doc = await ctx.core.documents.find(tenantId, documentId);
    expect(doc).toMatchObject({
      direction: 'inbound',
      partyId: RECEIVER.value,
      createdBy: 'peppol',
      state: 'validated',
      format: { id: expect.stringMatching(/ubl/) },
      validation: { isValid: true, errorCount: 0 },
    });

    const event = await ctx.core.db.models.WebhookEvent.findById(result.received.eventId).lean().exec();
    expect(event).toMatchObject({ topic: 'InvoiceReceived', documentId, createdBy: 'peppol' });
    expect(event?.details).toMatchObject({
      id: documentId,
      sender: formatId(HEADER.sender),
      createdBy: 'peppol',
      documentTypeId: formatId(HEADER.documentType),
      messageId: msg.messageId,
      validation: 'valid',
    });

    const client = await ctx.createClient([tenantId]);
    const token = await ctx.token(client);
    const base = `/api/v1/${RECEIVER.value}/purchaseInvoice/${documentId}`;
    const asReceived = await request(ctx.app)
      .get(`${base}/download`)
      .auth(token, { type: 'bearer' })
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(asReceived.status).toBe(200);
    const xml = (asReceived.body as Buffer).toString('utf8');
    expect(xml).toMatch(/^<(\w+:)?Invoice /);
    expect(xml).toContain('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2');

    const cii = await request(ctx.app)
      .get(`${base}/download`)
      .query({ targetFormat: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100' })
      .auth(token, { type: 'bearer' });
    expect(cii.status).toBe(200);
    expect(cii.headers['x-transform-target-format']).toMatch(/cii/);
    expect(cii.text).toContain('<rsm:CrossIndustryInvoice');

    const pdf = await request(ctx.app)
      .get(`${base}/download`)
      .query({ targetFormat: 'facturx-en16931' })
      .auth(token, { type: 'bearer' })
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(extractFromPdf(pdf.body as Buffer).xml.toString('utf8')).toContain('<rsm:CrossIndustryInvoice');

    const unknown = await request(ctx.app)
      .get(`${base}/download`)
      .query({ targetFormat: 'urn:example:nothing' })
      .auth(token, { type: 'bearer' });
    expect(unknown.status).toBe(400);

    // Another party's id, a sales document's id and a deleted one are all 404.
    const seller = await ctx.core.directory.createParty({
      tenantId,
      partyId: '0106:77777777',
      legalEntityId: 'NL:0106:77777777',
      name: 'Other',
    });
    expect(
      (
        await request(ctx.app)
          .get(`/api/v1/${seller.partyId}/purchaseInvoice/${documentId}/download`)
          .auth(token, { type: 'bearer' })
      ).status,
    ).toBe(404);
    expect((await request(ctx.app).delete(base).auth(token, { type: 'bearer' })).status).toBe(204);
    expect((await request(ctx.app).get(`${base}/download`).auth(token, { type: 'bearer' })).status).toBe(404);
    expect(await ctx.core.documents.find(tenantId, documentId)).toBeNull();
  });

  it('stores and announces an invalid invoice with its verdict (BV, the failing rule), never dropping it', async () => {
    const xml = corpusFile(SAMPLE_UBL_INVOICE)
      .toString('utf8')
      .replace('<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>', '<cbc:InvoiceTypeCode>999</cbc:InvoiceTypeCode>');
    const msg = message(pki, { sbd: sbd({ payload: { xml: Buffer.from(xml, 'utf8') } }) });
    const result = await received(msg);
    expect(result.validation).toMatchObject({ kind: 'invalid', reasonCodes: expect.arrayContaining(['BV']) });
    expect(result.received).toMatchObject({ state: 'invalid', topic: 'InvoiceReceived' });
    const doc = await ctx.core.documents.find(tenantId, result.received.documentId);
    expect(doc).toMatchObject({ state: 'invalid', validation: { isValid: false } });
    expect(doc?.validation?.assertions.map((a) => a.ruleId)).toContain('BR-CL-01');
    const event = await ctx.core.db.models.WebhookEvent.findById(result.received.eventId).lean().exec();
    expect(event?.details).toMatchObject({
      validation: 'invalid',
      validationReasonCodes: expect.stringContaining('BV'),
    });
    expect(String(event?.details?.['validationRules'])).toContain('BR-CL-01');
  });

  it('answers nothing by default: MLS off for the party and no MLS_TYPE in the SBDH', async () => {
    const result = await received(message(pki));
    expect(result.validation).toMatchObject({ kind: 'valid' });
    expect(result.automaticMls).toEqual({ sent: false, reason: 'not-requested' });
  });

  it("starts the document's MLS run with an RE and the failing rule when the sender asked (SBDH MLS_TYPE)", async () => {
    const xml = corpusFile(SAMPLE_UBL_INVOICE)
      .toString('utf8')
      .replace('<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>', '<cbc:InvoiceTypeCode>999</cbc:InvoiceTypeCode>');
    const msg = message(pki, { sbd: sbd({ mlsType: 'FAILURE_ONLY', payload: { xml: Buffer.from(xml, 'utf8') } }) });
    const result = await received(msg);
    const workflowId = sendMlsWorkflowId(tenantId, result.received.documentId);
    expect(result.automaticMls).toEqual({ sent: true, responseCode: 'RE', workflowId, started: true });
    const conn = await Connection.connect({ address: temporalAddress });
    try {
      const handle = new Client({ connection: conn }).workflow.getHandle(workflowId);
      const history = await handle.fetchHistory();
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      expect(started?.workflowType?.name).toBe(SEND_MLS_WORKFLOW);
      const payload = started?.input?.payloads?.[0];
      expect(payload).toBeDefined();
      const input = defaultPayloadConverter.fromPayload(payload!);
      expect(input).toMatchObject({
        tenantId,
        documentId: result.received.documentId,
        responseCode: 'RE',
        requestedBy: 'policy',
        description: expect.stringMatching(/^The document was rejected: \d+ failures? \(BV/),
        lines: expect.arrayContaining([expect.objectContaining({ reasonCode: 'BV', ruleId: 'BR-CL-01' })]),
      });
      // This test's network has no SML for the sender's service provider id: the run is not left retrying.
      await handle.terminate('test over');
    } finally {
      await conn.close();
    }
  });

  it('runs a document injected through POST generic/receive on the same receive path (manualUpload)', async () => {
    const client = await ctx.createClient([tenantId]);
    const token = await ctx.token(client);
    const res = await request(ctx.app)
      .post(`/api/v1/${RECEIVER.value}/generic/receive`)
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send(corpusFile(SAMPLE_UBL_INVOICE));
    expect(res.status).toBe(200);
    const documentId = (res.body as { id: string }).id;
    const conn = await Connection.connect({ address: temporalAddress });
    let result: ReceiveDocumentResult;
    try {
      result = (await new Client({ connection: conn }).workflow
        .getHandle(receiveDocumentWorkflowId(tenantId, injectedMessageId(documentId)))
        .result()) as ReceiveDocumentResult;
    } finally {
      await conn.close();
    }
    expect(result).toMatchObject({
      state: 'detected',
      validation: { kind: 'valid' },
      received: { documentId, state: 'validated', topic: 'InvoiceReceived' },
    });
    const event = await ctx.core.db.models.WebhookEvent.findById(result.received.eventId).lean().exec();
    expect(event).toMatchObject({ topic: 'InvoiceReceived', documentId, createdBy: 'manualUpload' });
    expect(event?.details).toMatchObject({ id: documentId, createdBy: 'manualUpload', validation: 'valid' });
    const status = await request(ctx.app)
      .get(`/api/v1/${RECEIVER.value}/purchaseInvoice/${documentId}/status`)
      .auth(token, { type: 'bearer' });
    expect(status.body).toMatchObject({ state: 'validated', verdict: { verdict: 'valid' } });
    // As the AS4 path: no message was received, none recorded.
    expect(await ctx.core.db.models.As4Inbound.findById(injectedMessageId(documentId)).lean().exec()).toBeNull();
  });

  it('records a business document it cannot read as rejected, with the reason', async () => {
    // A well-formed envelope around a document no format of ours reads.
    const documentType = documentTypeId(DOCTYPE_SCHEME_BUSDOX, 'urn:example:unknown::Order##urn:example:custom::1.0');
    const doc = sbd({
      documentType,
      payload: { xml: Buffer.from('<x:Order xmlns:x="urn:example:unknown"><x:ID>1</x:ID></x:Order>') },
    });
    const msg = message(pki, { sbd: doc, header: { ...HEADER, documentType } });
    const result = await received(msg);
    expect(result).toMatchObject({ state: 'rejected', detection: { ok: false, code: 'UNKNOWN_FORMAT' } });
    const record = await ctx.core.db.models.As4Inbound.findById(msg.messageId).lean().exec();
    expect(record).toMatchObject({ state: 'rejected', stateDetail: expect.stringMatching(/^UNKNOWN_FORMAT: /) });
    // The party still gets what arrived, and an InvoiceReceivedError saying why it could not be read.
    expect(result.received).toMatchObject({ state: 'rejected', topic: 'InvoiceReceivedError' });
    const event = await ctx.core.db.models.WebhookEvent.findById(result.received.eventId).lean().exec();
    expect(event).toMatchObject({ topic: 'InvoiceReceivedError', documentId: result.received.documentId });
    expect(event?.details).toMatchObject({ reasonCode: 'UNKNOWN_FORMAT', messageId: msg.messageId });
  });
});
