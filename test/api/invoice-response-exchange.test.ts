/**
 * An Invoice Response from one party to another on a real database, with a stand-in SMP lookup and AS4 peer: the
 * buyer's run builds the response from the received invoice (valid under the pinned T111 rules), stores it once as its
 * downloadable document, sends the same AS4 message on every attempt to the supplier's endpoint for the Invoice
 * Response document type and publishes InvoiceResponseSent*; the bytes it sent, received by the supplier, are matched
 * to the supplier's sales invoice and show as the buyer's verdict on its status.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { As4SendOutcome } from '../../src/peppol/as4/sender';
import { formatId, peppolParticipant } from '../../src/peppol/identifiers';
import {
  INVOICE_RESPONSE_DOCUMENT_TYPE,
  INVOICE_RESPONSE_PROCESS,
  readInvoiceResponse,
} from '../../src/peppol/invoice-response';
import { readBusinessReference } from '../../src/peppol/business-reference';
import { createInvoiceResponseSending, sentInvoiceResponseId } from '../../src/receiving/invoice-response-send';
import { receivedDocumentId } from '../../src/receiving';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import { SentReferenceRepository } from '../../src/storage/peppol/sent-reference.repository';
import { createValidator } from '../../src/validation';
import { validatorOptions } from '../../src/main/compose';
import type { PublishEventInput } from '../../src/webhooks/publish';
import { corpusFile } from '../support/corpus';
import {
  receiveDocumentSteps,
  recordingEvents,
  recordSent,
  standInPeppolSender,
  storeAcceptedOutbound,
  storeAs4Arrival,
  storeDocument,
} from '../support/received-fixtures';
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
  const events = recordingEvents(published);

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

  /** The seller's delivered sales invoice, its number recorded as the send path records it before the first attempt. */
  async function salesInvoice(): Promise<string> {
    const bytes = corpusFile(BIS3);
    const documentId = await storeAcceptedOutbound(ctx, SELLER_TENANT, SELLER, bytes, 'd.xml');
    await recordSent(ctx, SELLER_TENANT, documentId);
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
  function purchaseInvoice(bytes = corpusFile(BIS3)): Promise<string> {
    return storeDocument(ctx, {
      tenantId: BUYER_TENANT,
      partyId: BUYER,
      bytes,
      direction: 'inbound',
      createdBy: 'peppol',
      filename: 'd.xml',
    });
  }

  function sending(outcomes: Array<As4SendOutcome['outcome']>, lookupFails = false) {
    const lookups: Array<{ participant: string; types: string[]; process: string }> = [];
    const { peppolSender, exchanges } = standInPeppolSender(pki, outcomes, {
      lookupFails,
      onLookup: (participant, types, process) =>
        lookups.push({
          participant: formatId(participant),
          types: types.map((t) => t.value),
          process: process?.value ?? '',
        }),
    });
    const steps = createInvoiceResponseSending({
      documents: ctx.core.documents,
      blobs: ctx.core.db.blobs,
      maxDocumentBytes: 1 << 22,
      heartbeat: () => undefined,
      directory: ctx.core.directory,
      events,
      validator: createValidator(validatorOptions(ctx.config)),
      peppolSender,
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
    const { messageId } = await storeAs4Arrival(as4, {
      messageId: `${randomUUID()}@buyer-ap`,
      tenantId: SELLER_TENANT,
      partyId: SELLER,
      sender: peppolParticipant(BUYER),
      receiver: peppolParticipant(SELLER),
      documentType: INVOICE_RESPONSE_DOCUMENT_TYPE,
      process: INVOICE_RESPONSE_PROCESS,
      countryC1: 'DK',
      payload: { xml: bytes },
    });
    const receive = receiveDocumentSteps(ctx, { maxDocumentBytes: 1 << 22, as4Inbound: as4, events });
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
