/**
 * An Invoice Response between two gateways on real servers: the buyer's gateway (API + worker on the Temporal dev
 * server, our AP key as sender, lookups through a local SML zone and a signing SMP) answers a received invoice with
 * POST …/purchaseInvoice/{documentId}/response; its sendInvoiceResponse run finds the supplier's access point for the
 * Invoice Response document type and delivers over AS4 (a verified receipt); the supplier's gateway stores the message
 * and its receive steps match the response to the supplier's sales invoice, whose status shows the buyer's verdict.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import request from 'supertest';
import { Client, Connection } from '@temporalio/client';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { Transition } from '../../src/core/document-states';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { validatorOptions } from '../../src/main/compose';
import { TRANSPORT_PROFILE_AS4_V2, formatId, peppolParticipant } from '../../src/peppol/identifiers';
import { readBusinessReference } from '../../src/peppol/business-reference';
import { INVOICE_RESPONSE_DOCUMENT_TYPE, INVOICE_RESPONSE_PROCESS } from '../../src/peppol/invoice-response';
import { naptrName } from '../../src/peppol/sml';
import { createReceiveDocument, receivedDocumentId } from '../../src/receiving';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import { SentInstanceRepository } from '../../src/storage/peppol/sent-instance.repository';
import { SentReferenceRepository } from '../../src/storage/peppol/sent-reference.repository';
import { createValidator } from '../../src/validation';
import type { PublishEventInput } from '../../src/webhooks/publish';
import type { SendInvoiceResponseResult } from '../../workflows/contracts/send-invoice-response';
import { corpusFile } from '../support/corpus';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSmp } from '../support/peppol/local-smp';
import { testPki, testApEnv } from '../support/peppol/pki-fixture';
import type { TestPki } from '../support/peppol/test-pki';
import { requireEnv } from '../support/services';
import { createTestContext, type TestContext } from '../support/test-app';
import { testWorkflowBundle } from '../support/workflow-bundle';

const ZONE = 'participant.sml.responses.test';
const BIS3 = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';
/** BT-34 and BT-49 of BIS3. */
const SELLER = '0184:DK12345678';
const BUYER = '0184:DK87654321';
/** The supplier's party, registered with the capitals of the invoice (participant ids compare case-insensitively). */
const SELLER_PARTY = SELLER;
const FAST: RetrySchedule = { kind: 'table', delaysMs: [300, 300] };

describe('an Invoice Response from one gateway to another (real Temporal, DNS, SMP and AS4)', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `invoice-response-peppol-${randomUUID()}`;
  let pki: TestPki;
  let dir: string;
  let dns: LocalDnsZone;
  let smp: LocalSmp;
  let supplier: TestContext;
  let front: Server;
  let frontUrl: string;
  let buyer: TestContext;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let supplierTenant: string;
  let buyerToken: string;
  let supplierToken: string;

  beforeAll(async () => {
    pki = await testPki();
    dir = mkdtempSync(path.join(os.tmpdir(), 'invoice-response-peppol-'));
    dns = await new LocalDnsZone().start();
    smp = await new LocalSmp(pki.smp, '/smp').start();

    // The supplier's gateway: the receiving access point of the seller.
    supplier = await createTestContext('irsupplier', {
      env: {
        ...testApEnv('ap-receiver'),
      },
    });
    supplierTenant = (await supplier.core.directory.createTenant({ name: 'suppliers' }))._id;
    await supplier.core.directory.createParty({
      tenantId: supplierTenant,
      partyId: SELLER_PARTY,
      legalEntityId: 'DK:S',
      name: 'Company A',
    });
    supplierToken = await supplier.token(await supplier.createClient([supplierTenant]));
    front = createServer((req, res) => {
      supplier.app(req, res);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const seller = peppolParticipant(SELLER);
    dns.set(naptrName(seller, ZONE), [
      { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
    ]);
    smp.publish(seller, INVOICE_RESPONSE_DOCUMENT_TYPE, [
      {
        process: INVOICE_RESPONSE_PROCESS,
        endpoints: [
          {
            transportProfile: TRANSPORT_PROFILE_AS4_V2,
            url: `${frontUrl}/as4`,
            certificate: pki.apReceiver.certificate,
          },
        ],
      },
    ]);

    // The buyer's gateway: API + worker, our AP key as the sender certificate.
    const truststore = path.join(dir, 'smp-ca.pem');
    writeFileSync(truststore, pki.smpCa.certificate.toString());
    starter = await TemporalWorkflowStarter.connect({
      address: temporalAddress,
      namespace: 'default',
      taskQueue,
      searchAttributes: false,
      peppolSendSchedule: FAST,
    });
    buyer = await createTestContext('irbuyer', {
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        WEBHOOK_SEARCH_ATTRIBUTES: 'false',
        ...testApEnv('ap-sender'),
        PEPPOL_SMP_TRUSTSTORE: truststore,
        PEPPOL_SML_ZONE: ZONE,
        PEPPOL_DNS_SERVERS: dns.address,
        PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
      },
    });
    await buyer.core.directory.createTenant({ id: 'tenantIrBuyers', name: 'B' });
    await buyer.core.directory.createParty({
      tenantId: 'tenantIrBuyers',
      partyId: BUYER,
      legalEntityId: 'DK:B',
      name: 'Company B',
    });
    buyerToken = await buyer.token(await buyer.createClient(['tenantIrBuyers']));
    worker = await startWorker(buyer.config, { workflowBundle: await testWorkflowBundle() });
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await starter?.close();
    await buyer?.close();
    if (front) {
      front.closeAllConnections();
      await new Promise((r) => front.close(r));
    }
    await Promise.all([supplier?.close(), dns?.stop(), smp?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function put(ctx: TestContext, tenantId: string, bytes: Buffer) {
    return ctx.core.db.blobs.put(Readable.from([bytes]), {
      limit: bytes.length,
      filename: 'd.xml',
      contentType: 'application/xml',
      metadata: { tenantId },
    });
  }

  it('delivers the buyer’s response; the supplier matches it to its sales invoice', async () => {
    const bytes = corpusFile(BIS3);
    // The supplier's delivered sales invoice, its number recorded as the send path records it.
    const sales = randomUUID();
    const salesBlob = await put(supplier, supplierTenant, bytes);
    await supplier.core.documents.insertOutbound({
      tenantId: supplierTenant,
      documentId: sales,
      partyId: SELLER_PARTY,
      createdBy: 'api',
      contentType: 'application/xml',
      size: salesBlob.size,
      sha256: salesBlob.sha256,
      blobId: salesBlob.blobId,
    });
    await supplier.core.documents.accept(supplierTenant, sales);
    await supplier.core.documents.recordTransition(supplierTenant, sales, Transition.sendAttempt, { attempt: 1 });
    await supplier.core.documents.recordTransition(supplierTenant, sales, Transition.delivered);
    const refs = new SentReferenceRepository(supplier.core.db.models);
    await refs.record({
      tenantId: supplierTenant,
      endpoint: peppolParticipant(SELLER).value,
      ...readBusinessReference(bytes)!,
      documentId: sales,
      partyId: SELLER_PARTY,
      generation: 0,
    });

    // The buyer's received copy, as its receive run leaves it.
    const purchase = randomUUID();
    const blob = await put(buyer, 'tenantIrBuyers', bytes);
    await buyer.core.documents.insertInbound({
      tenantId: 'tenantIrBuyers',
      documentId: purchase,
      partyId: BUYER,
      createdBy: 'peppol',
      contentType: 'application/xml',
      size: blob.size,
      sha256: blob.sha256,
      blobId: blob.blobId,
    });
    await buyer.core.documents.recordTransition(
      'tenantIrBuyers',
      purchase,
      Transition.received,
      { detail: 'peppol-bis3-invoice' },
      {
        format: {
          id: 'peppol-bis3-invoice',
          name: 'Peppol BIS Billing 3.0',
          syntax: 'UBL',
          documentType: 'Invoice',
          customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
          profileId: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
          documentTypeId: 'x',
        },
      },
    );

    const started = await request(buyer.app)
      .post(`/api/v1/${BUYER}/purchaseInvoice/${purchase}/response`)
      .auth(buyerToken, { type: 'bearer' })
      .send({ status: 'AP', note: 'Approved for payment' });
    expect(started.status).toBe(202);
    const conn = await Connection.connect({ address: temporalAddress });
    let result: SendInvoiceResponseResult;
    try {
      result = (await new Client({ connection: conn }).workflow
        .getHandle(started.body.run as string)
        .result()) as SendInvoiceResponseResult;
    } finally {
      await conn.close();
    }
    expect({ reason: '', ...result }).toMatchObject({
      outcome: 'sent',
      attempts: 1,
      reason: '',
      responseDocumentId: started.body.id,
    });

    // The buyer's side: the response delivered, InvoiceResponseSent with both ids.
    const status = await buyer.core.documents.find('tenantIrBuyers', started.body.id as string);
    expect(status).toMatchObject({ direction: 'outbound', state: 'delivered' });
    const events = await buyer.core.db.models.WebhookEvent.find({ topic: /^InvoiceResponse/ })
      .lean()
      .exec();
    expect(events).toEqual([
      expect.objectContaining({
        topic: 'InvoiceResponseSent',
        documentId: started.body.id,
        refToDocumentId: purchase,
        details: expect.objectContaining({ statusCode: 'AP', protocol: 'peppol', attempt: '1' }),
      }),
    ]);

    // The supplier's access point holds the message: its receive steps match it to the sales invoice.
    const stored = await supplier.core.db.models.As4Inbound.findOne({ tenantId: supplierTenant }).lean().exec();
    expect(stored?.documentType).toBe(formatId(INVOICE_RESPONSE_DOCUMENT_TYPE));
    const published: PublishEventInput[] = [];
    const receive = createReceiveDocument({
      documents: supplier.core.documents,
      blobs: supplier.core.db.blobs,
      maxDocumentBytes: 1 << 22,
      heartbeat: () => undefined,
      as4Inbound: new As4InboundRepository(supplier.core.db.models, supplier.core.db.blobs),
      sentInstances: new SentInstanceRepository(supplier.core.db.models),
      sentReferences: refs,
      directory: supplier.core.directory,
      validator: createValidator(validatorOptions(supplier.config)),
      events: {
        publishEvent: async (input: PublishEventInput) => {
          published.push(input);
          return { event: { id: input.id, label: 'routed' }, deliveries: [] } as never;
        },
      },
    });
    const input = { tenantId: supplierTenant, messageId: stored!._id };
    const detection = await receive.detectReceivedFormat(input);
    const validation = await receive.validateReceivedDocument({ ...input, formatId: 'peppol-invoice-response' });
    expect(validation.kind).toBe('valid');
    await receive.registerReceivedDocument({ ...input, detection, validation, eventId: randomUUID() });
    expect(published).toEqual([
      expect.objectContaining({
        topic: 'InvoiceResponseReceived',
        documentId: receivedDocumentId(supplierTenant, input.messageId),
        refToDocumentId: sales,
        details: expect.objectContaining({ statusCode: 'AP', description: 'Approved for payment', invoiceId: '12345' }),
      }),
    ]);
    const salesStatus = await request(supplier.app)
      .get(`/api/v1/${SELLER_PARTY}/salesInvoice/${sales}/status`)
      .auth(supplierToken, { type: 'bearer' });
    expect(salesStatus.body).toMatchObject({ state: 'delivered', buyerResponse: { statusCode: 'AP' } });
  }, 120_000);
});
