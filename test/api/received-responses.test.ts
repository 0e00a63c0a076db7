/**
 * Received Invoice Responses, orders and order responses on a real database: an Invoice Response is matched to the
 * sales invoice it answers (number + issue date, sent from the seller endpoint it is addressed to, within the
 * addressed party's tenant only), the buyer's verdict goes on that invoice's history without hiding its final state and
 * shows in its status, and InvoiceResponseReceived names both documents; unreadable ones get their kind's own error
 * topic, never InvoiceReceivedError; orders and order responses get their own topics.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import {
  readStatus,
  receiveDocumentSteps,
  recordingEvents,
  recordSent,
  runReceiveSteps,
  storeAcceptedOutbound,
  storeAs4Arrival,
} from '../support/received-fixtures';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { receivedDocumentId, type ReceiveDocumentSteps } from '../../src/receiving';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import { SentReferenceRepository } from '../../src/storage/peppol/sent-reference.repository';
import {
  INVOICE_RESPONSE_DOCUMENT_TYPE,
  INVOICE_RESPONSE_PROCESS,
  buildInvoiceResponse,
  type InvoiceResponseBuildInput,
} from '../../src/peppol/invoice-response';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  formatId,
  peppolParticipant,
  processId,
  type DocumentTypeId,
} from '../../src/peppol/identifiers';
import type { PublishEventInput } from '../../src/webhooks/publish';

const TENANT = 'tenantRespIn';
const OTHER_TENANT = 'tenantRespOther';
const PARTY = '0106:71717171';
const FOREIGN_PARTY = '0106:72727272';
const BUYER = peppolParticipant('0088:5790000435951');
const ORDER_DOCTYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1',
);
const ORDER_RESPONSE_DOCTYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:OrderResponse-2::OrderResponse##urn:fdc:peppol.eu:poacc:trns:order_response:3::2.1',
);
const ORDERING = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:poacc:bis:ordering:3');

interface StatusBody {
  state: string;
  history: Array<{ state: string; detail?: string; responseCode?: string }>;
  buyerResponse?: { statusCode: string; responseDocumentId: string; detail?: string };
}

/** An electronic address as an invoice writes it (EAS scheme code, then the value) from `<icd>:<value>`. */
function easEndpoint(participant: string): { scheme: string; value: string } {
  return { scheme: participant.slice(0, 4), value: participant.slice(5) };
}

function response(invoiceId: string, over: Partial<InvoiceResponseBuildInput> = {}): Buffer {
  return Buffer.from(
    buildInvoiceResponse({
      id: randomUUID(),
      issuedAt: new Date(),
      statusCode: 'AP',
      sender: { endpoint: easEndpoint(BUYER.value), name: 'Buyer' },
      receiver: { endpoint: easEndpoint(PARTY), name: 'Seller' },
      invoice: { id: invoiceId, issueDate: '2026-01-15', typeCode: '380' },
      ...over,
    }),
  );
}

const ORDER = (id: string) =>
  Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:fdc:peppol.eu:poacc:trns:order:3</cbc:CustomizationID>
  <cbc:ProfileID>urn:fdc:peppol.eu:poacc:bis:ordering:3</cbc:ProfileID>
  <cbc:ID>${id}</cbc:ID>
  <cbc:IssueDate>2026-02-01</cbc:IssueDate>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cac:BuyerCustomerParty><cac:Party><cbc:EndpointID schemeID="0088">5790000435951</cbc:EndpointID>
    <cac:PartyLegalEntity><cbc:RegistrationName>Buyer</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:BuyerCustomerParty>
  <cac:SellerSupplierParty><cac:Party><cbc:EndpointID schemeID="0106">71717171</cbc:EndpointID>
    <cac:PartyLegalEntity><cbc:RegistrationName>Seller</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:SellerSupplierParty>
  <cac:AnticipatedMonetaryTotal><cbc:PayableAmount currencyID="EUR">100.00</cbc:PayableAmount></cac:AnticipatedMonetaryTotal>
  <cac:OrderLine><cac:LineItem><cbc:ID>1</cbc:ID><cbc:Quantity unitCode="C62">1</cbc:Quantity>
    <cac:Item><cbc:Name>Thing</cbc:Name></cac:Item></cac:LineItem></cac:OrderLine>
</Order>`);

const ORDER_RESPONSE = (orderId: string, code = 'AP') =>
  Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<OrderResponse xmlns="urn:oasis:names:specification:ubl:schema:xsd:OrderResponse-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:fdc:peppol.eu:poacc:trns:order_response:3</cbc:CustomizationID>
  <cbc:ProfileID>urn:fdc:peppol.eu:poacc:bis:ordering:3</cbc:ProfileID>
  <cbc:ID>OR-1</cbc:ID>
  <cbc:IssueDate>2026-02-02</cbc:IssueDate>
  <cbc:OrderResponseCode>${code}</cbc:OrderResponseCode>
  <cac:OrderReference><cbc:ID>${orderId}</cbc:ID></cac:OrderReference>
  <cac:SellerSupplierParty><cac:Party><cbc:EndpointID schemeID="0088">5790000435951</cbc:EndpointID>
    <cac:PartyLegalEntity><cbc:RegistrationName>Seller</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:SellerSupplierParty>
  <cac:BuyerCustomerParty><cac:Party><cbc:EndpointID schemeID="0106">71717171</cbc:EndpointID>
    <cac:PartyLegalEntity><cbc:RegistrationName>Buyer</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:BuyerCustomerParty>
</OrderResponse>`);

describe('received invoice responses and orders: matched, recorded and announced on their own topics', () => {
  let ctx: TestContext;
  let token: string;
  let steps: ReceiveDocumentSteps;
  let as4: As4InboundRepository;
  let refs: SentReferenceRepository;
  const published: PublishEventInput[] = [];

  beforeAll(async () => {
    ctx = await createTestContext('received-responses', { workflows: new RecordingWorkflowStarter() });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'R' });
    await ctx.core.directory.createTenant({ id: OTHER_TENANT, name: 'O' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: 'NL:R', name: 'R' });
    await ctx.core.directory.createParty({
      tenantId: OTHER_TENANT,
      partyId: FOREIGN_PARTY,
      legalEntityId: 'NL:O',
      name: 'O',
    });
    token = await ctx.token(await ctx.createClient([TENANT]));
    as4 = new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs);
    refs = new SentReferenceRepository(ctx.core.db.models);
    steps = receiveDocumentSteps(ctx, { as4Inbound: as4, sentReferences: refs, events: recordingEvents(published) });
  });
  afterAll(async () => ctx.close());

  /** A delivered sales invoice of `partyId` whose number was recorded as sent from `endpoint`. */
  async function sentInvoice(tenantId: string, partyId: string, endpoint = partyId) {
    const documentId = await storeAcceptedOutbound(ctx, tenantId, partyId, corpusFile(SAMPLE_UBL_INVOICE));
    await recordSent(ctx, tenantId, documentId);
    const number = `INV-${randomUUID().slice(0, 8)}`;
    await refs.record({
      tenantId,
      endpoint,
      kind: 'invoice',
      number,
      issueDate: '2026-01-15',
      documentId,
      partyId,
      generation: 0,
    });
    return { documentId, number };
  }

  /** A document arriving over AS4 for PARTY of TENANT: stored as the receiver stores it, then the run's steps. */
  async function receive(payload: Buffer, documentType: DocumentTypeId, tenantId = TENANT, partyId = PARTY) {
    const { messageId } = await storeAs4Arrival(as4, {
      tenantId,
      partyId,
      sender: BUYER,
      receiver: peppolParticipant(partyId),
      documentType,
      process: documentType === INVOICE_RESPONSE_DOCUMENT_TYPE ? INVOICE_RESPONSE_PROCESS : ORDERING,
      countryC1: 'DK',
      payload: { xml: payload },
    });
    const { detection, validation, received, eventId } = await runReceiveSteps(
      steps,
      { tenantId, messageId },
      'if-detected',
    );
    return { documentId: receivedDocumentId(tenantId, messageId), detection, validation, received, eventId };
  }

  const status = (documentId: string, kind?: string) => readStatus<StatusBody>(ctx.app, token, PARTY, documentId, kind);

  it('matches a response to the invoice it answers: verdict on its status, final state kept, event with both ids', async () => {
    const invoice = await sentInvoice(TENANT, PARTY);
    const r = await receive(
      response(invoice.number, { statusCode: 'RE', reasons: [{ code: 'PRI', text: 'Price too high' }] }),
      INVOICE_RESPONSE_DOCUMENT_TYPE,
    );
    expect(r.detection).toMatchObject({ ok: true, format: { id: 'peppol-invoice-response' } });
    expect(r.validation).toMatchObject({ kind: 'valid' });
    expect(r.received).toMatchObject({
      documentId: r.documentId,
      topic: 'InvoiceResponseReceived',
      refToDocumentId: invoice.documentId,
    });
    const event = published.find((e) => e.id === r.eventId);
    expect(event).toMatchObject({
      topic: 'InvoiceResponseReceived',
      party: { partyId: PARTY, legalEntityId: 'NL:R' },
      documentId: r.documentId,
      refToDocumentId: invoice.documentId,
      details: {
        statusCode: 'RE',
        status: 'Rejected',
        statusReasonCodes: 'PRI',
        statusReasons: 'Price too high',
        invoiceId: invoice.number,
        invoiceIssueDate: '2026-01-15',
        sender: formatId(BUYER),
        documentTypeId: formatId(INVOICE_RESPONSE_DOCUMENT_TYPE),
        validation: 'valid',
      },
    });
    let s = await status(invoice.documentId);
    expect(s.state).toBe('delivered');
    expect(s.buyerResponse).toMatchObject({ statusCode: 'RE', responseDocumentId: r.documentId });
    expect(s.buyerResponse?.detail).toMatch(
      /^Invoice response RE \(Rejected\) from .*PRI \(Prices incorrect\): Price too high/,
    );

    // A later verdict is its own entry; the latest shows, the earlier stays on the history.
    const paid = await receive(response(invoice.number, { statusCode: 'PD' }), INVOICE_RESPONSE_DOCUMENT_TYPE);
    s = await status(invoice.documentId);
    expect(s.state).toBe('delivered');
    expect(s.buyerResponse).toMatchObject({ statusCode: 'PD', responseDocumentId: paid.documentId });
    expect(s.history.filter((h) => h.state === 'invoice-response-received').map((h) => h.responseCode)).toEqual([
      'RE',
      'PD',
    ]);

    // The response is downloadable by the party; its own status is its verdict.
    const download = await request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${r.documentId}/download`)
      .auth(token, { type: 'bearer' });
    expect(download.status).toBe(200);
    expect(String(download.text ?? download.body)).toContain(invoice.number);
    expect((await status(r.documentId, 'purchaseInvoice')).state).toBe('validated');
  });

  it('matches nothing for another issue date, another seller endpoint or another tenant: refToDocumentId empty', async () => {
    const invoice = await sentInvoice(TENANT, PARTY);
    const otherDate = await receive(
      response(invoice.number, { invoice: { id: invoice.number, issueDate: '2026-01-16', typeCode: '380' } }),
      INVOICE_RESPONSE_DOCUMENT_TYPE,
    );
    expect(published.find((e) => e.id === otherDate.eventId)).toMatchObject({
      topic: 'InvoiceResponseReceived',
      refToDocumentId: '',
      message: expect.stringContaining(`unknown invoice ${invoice.number}`),
    });
    const otherSeller = await receive(
      response(invoice.number, { receiver: { endpoint: easEndpoint('0106:99999999'), name: 'X' } }),
      INVOICE_RESPONSE_DOCUMENT_TYPE,
    );
    expect(published.find((e) => e.id === otherSeller.eventId)?.refToDocumentId).toBe('');
    // Another tenant's invoice with the same number and seller endpoint is never matched.
    const foreign = await sentInvoice(OTHER_TENANT, FOREIGN_PARTY, PARTY);
    const cross = await receive(response(foreign.number), INVOICE_RESPONSE_DOCUMENT_TYPE);
    expect(published.find((e) => e.id === cross.eventId)?.refToDocumentId).toBe('');
    const foreignRecord = await ctx.core.documents.find(OTHER_TENANT, foreign.documentId);
    expect(foreignRecord?.buyerResponse ?? null).toBeNull();
    expect((await status(invoice.documentId)).buyerResponse).toBeUndefined();
  });

  it('announces an unreadable response on InvoiceResponseReceivedError with the reason, stored', async () => {
    const invoice = await sentInvoice(TENANT, PARTY);
    const xml = response(invoice.number)
      .toString('utf8')
      .replace(/<cac:DocumentReference>[\s\S]*<\/cac:DocumentReference>/, '');
    const r = await receive(Buffer.from(xml), INVOICE_RESPONSE_DOCUMENT_TYPE);
    // The official rules refuse it too: its validation entry (after the detection entry) is its state.
    expect(r.received).toMatchObject({ topic: 'InvoiceResponseReceivedError', state: 'invalid' });
    const event = published.find((e) => e.id === r.eventId);
    expect(event).toMatchObject({
      topic: 'InvoiceResponseReceivedError',
      documentId: r.documentId,
      details: { reason: expect.stringMatching(/names no invoice/) },
    });
    const broken = await receive(
      Buffer.from('<ApplicationResponse xmlns="urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2"/>'),
      INVOICE_RESPONSE_DOCUMENT_TYPE,
    );
    expect(broken.received.topic).toBe('InvoiceResponseReceivedError');
    expect(published.find((e) => e.id === broken.eventId)?.details?.['reason']).toBeTruthy();
    expect(published.filter((e) => e.topic === 'InvoiceReceivedError')).toEqual([]);
    expect((await status(r.documentId, 'purchaseInvoice')).state).toBe('invalid');
    expect((await status(broken.documentId, 'purchaseInvoice')).state).toBe('rejected');
    expect((await status(invoice.documentId)).buyerResponse).toBeUndefined();
  });

  it('announces orders and order responses on their own topics; an order response matches our sent order', async () => {
    const order = await receive(ORDER('PO-77'), ORDER_DOCTYPE);
    expect(order.received.topic).toBe('OrderReceived');
    expect(published.find((e) => e.id === order.eventId)).toMatchObject({
      topic: 'OrderReceived',
      documentId: order.documentId,
      details: { orderId: 'PO-77', buyer: formatId(BUYER) },
    });
    const ourOrder = randomUUID();
    await refs.record({
      tenantId: TENANT,
      endpoint: PARTY,
      kind: 'order',
      number: 'PO-OURS-1',
      issueDate: '2026-02-01',
      documentId: ourOrder,
      partyId: PARTY,
      generation: 0,
    });
    const answered = await receive(ORDER_RESPONSE('PO-OURS-1'), ORDER_RESPONSE_DOCTYPE);
    expect(published.find((e) => e.id === answered.eventId)).toMatchObject({
      topic: 'OrderResponseReceived',
      refToDocumentId: ourOrder,
      details: { statusCode: 'AP', status: 'Accepted', orderId: 'PO-OURS-1' },
    });
    const unknown = await receive(ORDER_RESPONSE('PO-NOT-OURS', 'RE'), ORDER_RESPONSE_DOCTYPE);
    expect(published.find((e) => e.id === unknown.eventId)).toMatchObject({
      topic: 'OrderResponseReceived',
      refToDocumentId: '',
    });
    const badOrder = await receive(
      Buffer.from('<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"/>'),
      ORDER_DOCTYPE,
    );
    expect(badOrder.received.topic).toBe('OrderReceivedError');
    const badResponse = await receive(ORDER_RESPONSE('PO-1', 'ZZ'), ORDER_RESPONSE_DOCTYPE);
    expect(published.find((e) => e.id === badResponse.eventId)).toMatchObject({
      topic: 'OrderResponseReceivedError',
      details: { reason: expect.stringMatching(/ZZ/) },
    });
  });
});
