/**
 * An Invoice Response from one party to another on a real database, with a stand-in SMP lookup and AS4 peer: the
 * buyer's run builds the response from the received invoice (valid under the pinned T111 rules), stores it once as its
 * downloadable document, sends the same AS4 message on every attempt to the supplier's endpoint for the Invoice
 * Response document type and publishes InvoiceResponseSent*; the bytes it sent, received by the supplier, are matched
 * to the supplier's sales invoice and show as the buyer's verdict on its status.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import request from 'supertest';
import type { As4SendOutcome } from '../../src/peppol/as4/sender';
import { ApKeyRing } from '../../src/peppol/pki/key-ring';
import type { RecipientEndpoint } from '../../src/peppol/recipient-lookup';
import { formatId, peppolParticipant, type ParticipantId } from '../../src/peppol/identifiers';
import {
  INVOICE_RESPONSE_DOCUMENT_TYPE,
  INVOICE_RESPONSE_PROCESS,
  readInvoiceResponse,
} from '../../src/peppol/invoice-response';
import { readBusinessReference } from '../../src/peppol/business-reference';
import { buildSbd } from '../../src/peppol/sbdh';
import { Transition } from '../../src/core/document-states';
import { createInvoiceResponseSending, sentInvoiceResponseId } from '../../src/receiving/invoice-response-send';
import { createReceiveDocument, receivedDocumentId } from '../../src/receiving';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import { SentInstanceRepository } from '../../src/storage/peppol/sent-instance.repository';
import { SentReferenceRepository } from '../../src/storage/peppol/sent-reference.repository';
import { createValidator } from '../../src/validation';
import { validatorOptions } from '../../src/main/compose';
import type { PublishEventInput } from '../../src/webhooks/publish';
import { corpusFile } from '../support/corpus';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { testPki } from '../support/peppol/pki-fixture';
import type { TestPki } from '../support/peppol/test-pki';

const SELLER_TENANT = 'tenantIrSeller';
const BUYER_TENANT = 'tenantIrBuyer';
const SELLER = '0184:DK12345678';
const BUYER = '0184:DK87654321';
const BIS3 = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';

describe('an Invoice Response from the buyer reaches the supplier and is matched', () => {
  let ctx: TestContext;
  let pki: TestPki;
  let sellerToken: string;
  let buyerToken: string;
  const published: PublishEventInput[] = [];
  const events = {
    publishEvent: async (input: PublishEventInput) => {
      published.push(input);
      return { event: { id: input.id, label: 'routed' }, deliveries: [] } as never;
    },
  };

  beforeAll(async () => {
    pki = await testPki();
    ctx = await createTestContext('invoice-response-exchange', { workflows: new RecordingWorkflowStarter() });
    await ctx.core.directory.createTenant({ id: SELLER_TENANT, name: 'S' });
    await ctx.core.directory.createTenant({ id: BUYER_TENANT, name: 'B' });
    await ctx.core.directory.createParty({
      tenantId: SELLER_TENANT,
      partyId: SELLER,
      legalEntityId: 'DK:S',
      name: 'S',
    });
    await ctx.core.directory.createParty({ tenantId: BUYER_TENANT, partyId: BUYER, legalEntityId: 'DK:B', name: 'B' });
    sellerToken = await ctx.token(await ctx.createClient([SELLER_TENANT]));
    buyerToken = await ctx.token(await ctx.createClient([BUYER_TENANT]));
  });
  afterAll(async () => ctx.close());

  async function put(tenantId: string, bytes: Buffer) {
    return ctx.core.db.blobs.put(Readable.from([bytes]), {
      limit: bytes.length,
      filename: 'd.xml',
      contentType: 'application/xml',
      metadata: { tenantId },
    });
  }

  /** The seller's delivered sales invoice, its number recorded as the send path records it before the first attempt. */
  async function salesInvoice(): Promise<string> {
    const documentId = randomUUID();
    const bytes = corpusFile(BIS3);
    const blob = await put(SELLER_TENANT, bytes);
    await ctx.core.documents.insertOutbound({
      tenantId: SELLER_TENANT,
      documentId,
      partyId: SELLER,
      createdBy: 'api',
      contentType: 'application/xml',
      size: blob.size,
      sha256: blob.sha256,
      blobId: blob.blobId,
    });
    await ctx.core.documents.accept(SELLER_TENANT, documentId);
    await ctx.core.documents.recordTransition(SELLER_TENANT, documentId, Transition.sendAttempt, { attempt: 1 });
    await ctx.core.documents.recordTransition(SELLER_TENANT, documentId, Transition.delivered);
    const ref = readBusinessReference(bytes);
    if (!ref) throw new Error('no reference');
    await new SentReferenceRepository(ctx.core.db.models).record({
      tenantId: SELLER_TENANT,
      endpoint: peppolParticipant(SELLER).value,
      ...ref,
      documentId,
      partyId: SELLER,
      generation: 0,
    });
    return documentId;
  }

  /** The same invoice as the buyer's received document. */
  async function purchaseInvoice(bytes = corpusFile(BIS3)): Promise<string> {
    const documentId = randomUUID();
    const blob = await put(BUYER_TENANT, bytes);
    await ctx.core.documents.insertInbound({
      tenantId: BUYER_TENANT,
      documentId,
      partyId: BUYER,
      createdBy: 'peppol',
      contentType: 'application/xml',
      size: blob.size,
      sha256: blob.sha256,
      blobId: blob.blobId,
    });
    return documentId;
  }

  function sending(outcomes: Array<As4SendOutcome['outcome']>, lookupFails = false) {
    const lookups: Array<{ participant: string; types: string[]; process: string }> = [];
    const exchanges: Array<{ messageId: string; url: string }> = [];
    const steps = createInvoiceResponseSending({
      documents: ctx.core.documents,
      blobs: ctx.core.db.blobs,
      maxDocumentBytes: 1 << 22,
      heartbeat: () => undefined,
      directory: ctx.core.directory,
      events,
      validator: createValidator(validatorOptions(ctx.config)),
      peppolSender: {
        keys: new ApKeyRing([pki.apSender]),
        apCertificateAuthorities: [pki.apCa.certificate],
        lookup: {
          findEndpoint: async (participant, types, process) => {
            lookups.push({
              participant: formatId(participant as ParticipantId),
              types: types.map((t) => t.value),
              process: process?.value ?? '',
            });
            if (lookupFails)
              return { ok: false, failure: 'participant-unknown', message: 'participant unknown in the SML' } as never;
            const endpoint = { url: 'https://c2.example.test/as4', certificate: pki.apReceiver.certificate };
            return {
              ok: true,
              participant: participant as ParticipantId,
              smpUrl: 'https://smp.example.test',
              documentType: types[0]!,
              process: process!,
              result: { endpoint } as never,
            } satisfies RecipientEndpoint;
          },
        },
        exchange: async (message, url) => {
          const outcome = outcomes[exchanges.length] ?? 'delivered';
          exchanges.push({ messageId: message.messageId, url });
          return outcome === 'delivered'
            ? {
                outcome,
                httpStatus: 200,
                receiptMessageId: 'receipt',
                references: [],
                receiverCertificate: pki.apReceiver.certificate,
                revocationChecked: false,
              }
            : ({ outcome, httpStatus: 503, reason: 'Service Unavailable' } as As4SendOutcome);
        },
      },
    });
    return { steps, lookups, exchanges };
  }

  it('sends the same valid response on every attempt; the supplier receives it matched to its sales invoice', async () => {
    const sales = await salesInvoice();
    const purchase = await purchaseInvoice();
    const s = sending(['retryable', 'delivered']);
    const base = {
      tenantId: BUYER_TENANT,
      documentId: purchase,
      statusCode: 'UQ' as const,
      note: 'Please clarify',
      reasons: [{ code: 'QTY', text: 'Quantity on line 1' }],
      actions: [{ code: 'PIN' }],
      firstAttemptAt: new Date().toISOString(),
    };
    const first = await s.steps.sendInvoiceResponseAttempt({ ...base, attempt: 1 });
    expect(first).toMatchObject({ outcome: 'retryable', to: 'iso6523-actorid-upis::0184:dk12345678' });
    const second = await s.steps.sendInvoiceResponseAttempt({ ...base, attempt: 2 });
    expect(second.outcome).toBe('delivered');
    expect(s.exchanges.map((e) => e.messageId)).toEqual([first.messageId, first.messageId]);
    expect(s.lookups[0]).toEqual({
      participant: 'iso6523-actorid-upis::0184:dk12345678',
      types: [INVOICE_RESPONSE_DOCUMENT_TYPE.value],
      process: INVOICE_RESPONSE_PROCESS.value,
    });
    const responseId = sentInvoiceResponseId(BUYER_TENANT, purchase, 'UQ');
    expect(second.responseDocumentId).toBe(responseId);
    await s.steps.publishInvoiceResponseEvent({
      tenantId: BUYER_TENANT,
      documentId: purchase,
      responseDocumentId: responseId,
      statusCode: 'UQ',
      topic: 'InvoiceResponseSent',
      attempt: 2,
      to: second.to,
      endpoint: second.endpoint,
      messageId: second.messageId,
      eventId: randomUUID(),
    });
    expect(published.at(-1)).toMatchObject({
      topic: 'InvoiceResponseSent',
      tenantId: BUYER_TENANT,
      party: { partyId: BUYER },
      documentId: responseId,
      refToDocumentId: purchase,
      details: { statusCode: 'UQ', status: 'Under query', attempt: '2', protocol: 'peppol', recipient: second.to },
    });

    // The buyer's response: downloadable, valid, delivered, with its attempts on its history.
    const download = await request(ctx.app)
      .get(`/api/v1/${BUYER}/generic/${responseId}/download`)
      .auth(buyerToken, { type: 'bearer' });
    expect(download.status).toBe(200);
    const bytes = Buffer.from(download.text, 'utf8');
    const read = readInvoiceResponse(bytes);
    if (!read.ok) throw new Error(read.reason);
    expect(read.response).toMatchObject({
      id: responseId,
      statusCode: 'UQ',
      sender: peppolParticipant(BUYER),
      receiver: peppolParticipant(SELLER),
      invoice: { id: '12345', issueDate: '2019-01-25', typeCode: '380' },
    });
    const record = await ctx.core.documents.find(BUYER_TENANT, responseId);
    expect(record).toMatchObject({ direction: 'outbound', partyId: BUYER, state: 'delivered' });
    expect(record?.history.map((h) => h.state)).toEqual(
      expect.arrayContaining(['validated', 'sending', 'sending', 'delivered']),
    );

    // The supplier's access point receives those bytes: matched, the verdict on the sales invoice.
    const as4 = new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs);
    const messageId = `${randomUUID()}@buyer-ap`;
    const sbd = buildSbd({
      sender: peppolParticipant(BUYER),
      receiver: peppolParticipant(SELLER),
      documentType: INVOICE_RESPONSE_DOCUMENT_TYPE,
      process: INVOICE_RESPONSE_PROCESS,
      countryC1: 'DK',
      payload: { xml: bytes },
    });
    await as4.store(
      {
        messageId,
        instanceKey: `${formatId(peppolParticipant(BUYER))}|${randomUUID()}`,
        instanceId: randomUUID(),
        tenantId: SELLER_TENANT,
        partyId: SELLER,
        sender: formatId(peppolParticipant(BUYER)),
        receiver: formatId(peppolParticipant(SELLER)),
        documentType: formatId(INVOICE_RESPONSE_DOCUMENT_TYPE),
        process: formatId(INVOICE_RESPONSE_PROCESS),
        countryC1: 'DK',
        fromSeatId: 'POP000111',
        toSeatId: 'POP000222',
        signerSha256: 'x',
        size: sbd.xml.length,
        sha256: 'x',
        referencesSha256: 'x',
        receiptXml: '<r/>',
        receivedAt: new Date(),
      },
      sbd.xml,
    );
    const receive = createReceiveDocument({
      documents: ctx.core.documents,
      blobs: ctx.core.db.blobs,
      maxDocumentBytes: 1 << 22,
      heartbeat: () => undefined,
      as4Inbound: as4,
      sentInstances: new SentInstanceRepository(ctx.core.db.models),
      sentReferences: new SentReferenceRepository(ctx.core.db.models),
      directory: ctx.core.directory,
      validator: createValidator(validatorOptions(ctx.config)),
      events,
    });
    const input = { tenantId: SELLER_TENANT, messageId };
    const detection = await receive.detectReceivedFormat(input);
    const validation = await receive.validateReceivedDocument({ ...input, formatId: 'peppol-invoice-response' });
    expect(validation.kind).toBe('valid');
    const eventId = randomUUID();
    await receive.registerReceivedDocument({ ...input, detection, validation, eventId });
    expect(published.find((e) => e.id === eventId)).toMatchObject({
      topic: 'InvoiceResponseReceived',
      tenantId: SELLER_TENANT,
      documentId: receivedDocumentId(SELLER_TENANT, messageId),
      refToDocumentId: sales,
      details: { statusCode: 'UQ', statusReasonCodes: 'QTY', statusActionCodes: 'PIN', invoiceId: '12345' },
    });
    const status = await request(ctx.app)
      .get(`/api/v1/${SELLER}/salesInvoice/${sales}/status`)
      .auth(sellerToken, { type: 'bearer' });
    expect(status.body).toMatchObject({ state: 'delivered', buyerResponse: { statusCode: 'UQ' } });
  });

  it('ends as failed (no retry) when the supplier is unknown or the invoice cannot be answered', async () => {
    const purchase = await purchaseInvoice();
    const s = sending([], true);
    const base = { tenantId: BUYER_TENANT, documentId: purchase, firstAttemptAt: new Date().toISOString(), attempt: 1 };
    const unknown = await s.steps.sendInvoiceResponseAttempt({ ...base, statusCode: 'AP' });
    expect(unknown).toMatchObject({ outcome: 'failed', reason: 'participant unknown in the SML' });
    expect(s.exchanges).toEqual([]);
    const noBuyer = await purchaseInvoice(
      Buffer.from(
        corpusFile(BIS3)
          .toString('utf8')
          .replace(/<cbc:EndpointID schemeID="0184">DK87654321<\/cbc:EndpointID>/, ''),
      ),
    );
    const cannot = await sending([]).steps.sendInvoiceResponseAttempt({
      ...base,
      documentId: noBuyer,
      statusCode: 'AP',
    });
    expect(cannot).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/buyer electronic address/) });
    expect(
      await ctx.core.documents.findStored(BUYER_TENANT, sentInvoiceResponseId(BUYER_TENANT, noBuyer, 'AP')),
    ).toBeNull();
  });
});
