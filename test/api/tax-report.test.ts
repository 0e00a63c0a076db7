/**
 * The tax report steps on a real database: the report a sales invoice needs is derived, validated with the pinned
 * official TDD artefacts and stored once as the party's outbound document (a retried step stores nothing twice); a
 * country without an authority is skipped, an invoice without the terms a report needs is refused; each step is a
 * side entry on the invoice's history that never changes its state, and the status resource shows the latest as
 * `taxReport`; TaxReportSent / TaxReportError carry the report's details. An MLS answering a report (its SBDH instance
 * kept with `reportOf`) names the reported invoice and its sender, for the report's run.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { corpusFile, requireCorpus } from '../support/corpus';
import {
  readStatus,
  receiveDocumentSteps,
  recordingEvents,
  runReceiveSteps,
  storeAcceptedOutbound,
  storeAs4Arrival,
} from '../support/received-fixtures';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { createTaxReporting, taxReportDocumentId, type TaxReportSteps } from '../../src/reporting/tax-report';
import {
  parseTddConfig,
  VIDA_TDD_DOCUMENT_TYPE_ID,
  VIDA_TDD_PROCESS_ID,
  type TddConfig,
} from '../../src/reporting/tdd';
import { createValidator } from '../../src/validation';
import { validatorOptions } from '../../src/main/compose';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import { SentInstanceRepository } from '../../src/storage/peppol/sent-instance.repository';
import { buildMls } from '../../src/peppol/mls';
import { NS } from '../../src/formats/xml/namespaces';
import { formatId, peppolParticipant } from '../../src/peppol/identifiers';
import { MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../../src/peppol/smp-publisher';
import type { PublishEventInput } from '../../src/webhooks/publish';
import type { PreparedTaxReport } from '../../workflows/contracts/report-tax';

const TENANT = 'tenantTax';
const PARTY = '0184:DK12345678';
const INVOICE = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';
const AUTHORITY = '000777-taxsim.dk';

function config(countries: string[], profile?: 'sk-1'): TddConfig {
  return parseTddConfig({
    version: '1.0.0',
    serviceProviderId: '000000',
    documentTypeId: VIDA_TDD_DOCUMENT_TYPE_ID,
    processId: VIDA_TDD_PROCESS_ID,
    authorities: Object.fromEntries(
      countries.map((cc) => [
        cc,
        { id: cc, name: `Tax ${cc}`, receiver: AUTHORITY, roles: ['C2', 'C3'], ...(profile ? { profile } : {}) },
      ]),
    ),
  });
}

interface StatusBody {
  state: string;
  history: Array<{ state: string; detail?: string }>;
  taxReport?: { step: string; at: string; detail?: string };
}

describe('tax report steps: plan, derive, validate, store, history and events', () => {
  let ctx: TestContext;
  let token: string;
  const published: PublishEventInput[] = [];
  const events = recordingEvents(published);
  const validator = () => createValidator(validatorOptions(ctx.config));
  let validatorInstance: ReturnType<typeof validator>;

  function steps(countries: string[], profile?: 'sk-1'): TaxReportSteps {
    return createTaxReporting({
      documents: ctx.core.documents,
      blobs: ctx.core.db.blobs,
      maxDocumentBytes: ctx.config.http.maxUploadBytes,
      heartbeat: () => undefined,
      directory: ctx.core.directory,
      events,
      peppolSender: { unavailable: 'not in this test' },
      taxReporting: {
        config: config(countries, profile),
        validator: validatorInstance,
        acknowledgementTimeoutMs: 60_000,
      },
    });
  }

  beforeAll(async () => {
    requireCorpus('en16931/ubl-examples');
    ctx = await createTestContext('tax-report', { workflows: new RecordingWorkflowStarter() });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'T' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: 'DK:A', name: 'A' });
    token = await ctx.token(await ctx.createClient([TENANT]));
    validatorInstance = validator();
  });
  afterAll(async () => ctx.close());

  async function salesInvoice(bytes: Buffer = corpusFile(INVOICE)): Promise<string> {
    return storeAcceptedOutbound(ctx, TENANT, PARTY, bytes);
  }

  const status = (documentId: string, kind?: string) => readStatus<StatusBody>(ctx.app, token, PARTY, documentId, kind);

  it('derives, validates and stores the C2 report once; the invoice’s state stays its own', async () => {
    const documentId = await salesInvoice();
    const s = steps(['DK']);
    const first = await s.prepareTaxReport({ tenantId: TENANT, documentId, direction: 'outbound' });
    const reportDocumentId = taxReportDocumentId(TENANT, documentId, 'C2');
    expect(first).toEqual({
      kind: 'report',
      role: 'C2',
      country: 'DK',
      authority: AUTHORITY,
      reportDocumentId,
      invoiceUuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      acknowledgedBy: 'iso6523-actorid-upis::0242:000777',
    });
    // A retried step finds the stored report: the same answer, one document.
    const again = await s.prepareTaxReport({ tenantId: TENANT, documentId, direction: 'outbound' });
    expect(again).toEqual(first);
    const tdd = await status(reportDocumentId);
    expect(tdd.state).toBe('validated');
    const bytes = await request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${reportDocumentId}/download`)
      .auth(token, { type: 'bearer' });
    expect(bytes.status).toBe(200);
    expect(bytes.text).toContain('urn:peppol:schema:vida-taxdata:1.0');
    expect(bytes.text).toContain(`>${(first as { invoiceUuid: string }).invoiceUuid}<`);
    const inv = await status(documentId);
    expect(inv.state).toBe('accepted');
    expect(inv.taxReport).toMatchObject({ step: 'built' });
    expect(inv.taxReport?.detail).toContain(reportDocumentId);
    expect(inv.history.filter((h) => h.state === 'tax-report')).toHaveLength(1);
  });

  it('an authority of the Slovak profile gets the Slovak TDD, validated with the Slovak rules', async () => {
    const documentId = await salesInvoice();
    const report = await steps(['DK'], 'sk-1').prepareTaxReport({
      tenantId: TENANT,
      documentId,
      direction: 'outbound',
    });
    expect(report).toMatchObject({ kind: 'report', role: 'C2', country: 'DK' });
    const reportDocumentId = taxReportDocumentId(TENANT, documentId, 'C2');
    const tdd = await status(reportDocumentId);
    expect(tdd.state).toBe('validated');
    expect(tdd.history.find((h) => h.state === 'validated')?.detail).toContain('peppol-sk-tdd@1.0.0');
    const bytes = await request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${reportDocumentId}/download`)
      .auth(token, { type: 'bearer' });
    expect(bytes.text).toContain('urn:peppol:schema:sk-taxdata:1.0');
    expect(bytes.text).toContain('urn:peppol:taxdata:sk-1');
  });

  it('a country without an authority is skipped; a report without the terms it needs is refused', async () => {
    const skippedId = await salesInvoice();
    const skipped = await steps(['BE']).prepareTaxReport({
      tenantId: TENANT,
      documentId: skippedId,
      direction: 'outbound',
    });
    expect(skipped).toMatchObject({ kind: 'skipped', role: 'C2', country: 'DK' });
    expect((await status(skippedId)).taxReport).toMatchObject({ step: 'skipped' });

    // No seller VAT identifier (BT-31): the Invoice UUID has no input, so no report can be made.
    const noVat = corpusFile(INVOICE)
      .toString('utf8')
      .replace(/<cac:PartyTaxScheme>\s*<cbc:CompanyID>DK12345678<\/cbc:CompanyID>[\s\S]*?<\/cac:PartyTaxScheme>/, '');
    expect(noVat).not.toContain('<cbc:CompanyID>DK12345678</cbc:CompanyID>');
    const refusedId = await salesInvoice(Buffer.from(noVat, 'utf8'));
    const refused = await steps(['DK']).prepareTaxReport({
      tenantId: TENANT,
      documentId: refusedId,
      direction: 'outbound',
    });
    expect(refused).toMatchObject({ kind: 'refused', role: 'C2', country: 'DK', authority: AUTHORITY });
    expect((refused as { reason: string }).reason).toContain('BT-31');
    const st = await status(refusedId);
    expect(st.taxReport).toMatchObject({ step: 'refused' });
    expect(st.state).toBe('accepted');
    expect(await ctx.core.documents.findStored(TENANT, taxReportDocumentId(TENANT, refusedId, 'C2'))).toBeNull();
  });

  it('publishes TaxReportSent on acceptance and TaxReportError on rejection, with the report’s details', async () => {
    const documentId = await salesInvoice();
    const s = steps(['DK']);
    const report = await s.prepareTaxReport({ tenantId: TENANT, documentId, direction: 'outbound' });
    const submitted = await s.publishTaxReportEvent({
      tenantId: TENANT,
      documentId,
      eventId: randomUUID(),
      report,
      outcome: 'submitted',
      messageId: 'm-1@gw',
      to: `iso6523-actorid-upis::0242:${AUTHORITY}`,
    });
    expect(submitted.eventId).toBeNull();
    expect((await status(documentId)).taxReport).toMatchObject({ step: 'submitted' });
    const mlsDocumentId = randomUUID();
    const eventId = randomUUID();
    await s.publishTaxReportEvent({
      tenantId: TENANT,
      documentId,
      eventId,
      report,
      outcome: 'accepted',
      statusCode: 'AP',
      mlsDocumentId,
    });
    const event = published.find((e) => e.id === eventId);
    expect(event).toMatchObject({
      topic: 'TaxReportSent',
      tenantId: TENANT,
      party: { partyId: PARTY, legalEntityId: 'DK:A' },
      documentId,
      details: {
        id: documentId,
        role: 'C2',
        country: 'DK',
        authority: `iso6523-actorid-upis::0242:${AUTHORITY}`,
        reportType: 'submit',
        reportDocumentId: (report as Extract<PreparedTaxReport, { kind: 'report' }>).reportDocumentId,
        outcome: 'accepted',
        statusCode: 'AP',
        mlsDocumentId,
      },
    });
    const st = await status(documentId);
    expect(st.taxReport).toMatchObject({ step: 'accepted' });
    expect(st.taxReport?.detail).toContain(mlsDocumentId);

    const rejectedId = randomUUID();
    await s.publishTaxReportEvent({
      tenantId: TENANT,
      documentId,
      eventId: rejectedId,
      report,
      outcome: 'rejected',
      statusCode: 'RE',
      reason: 'BV [ibr-tdd-17] wrong',
    });
    expect(published.find((e) => e.id === rejectedId)).toMatchObject({
      topic: 'TaxReportError',
      details: { outcome: 'rejected', statusCode: 'RE', reason: 'BV [ibr-tdd-17] wrong' },
    });
  });

  it('an MLS answering a report names the reported invoice and its sender', async () => {
    const sent = new SentInstanceRepository(ctx.core.db.models);
    const as4 = new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs);
    const receiving = receiveDocumentSteps(ctx, {
      as4Inbound: as4,
      sentInstances: sent,
      validator: validatorInstance,
      events,
    });
    const documentId = await salesInvoice();
    const reportDocumentId = taxReportDocumentId(TENANT, documentId, 'C2');
    const instanceId = randomUUID();
    await sent.record({
      instanceId,
      tenantId: TENANT,
      documentId: reportDocumentId,
      partyId: PARTY,
      generation: 0,
      reportOf: documentId,
    });
    const authority = peppolParticipant('0242:000777');
    const ours = peppolParticipant('0242:000000');
    const mls = buildMls({
      responseCode: 'RE',
      referencedInstanceId: instanceId,
      sender: authority,
      receiver: ours,
      description: 'Report refused',
      lines: [{ reasonCode: 'BV', ruleId: 'ibr-tdd-17', description: 'wrong', location: '/TaxData' }],
    });
    const { messageId } = await storeAs4Arrival(as4, {
      messageId: `${randomUUID()}@c5`,
      tenantId: TENANT,
      partyId: PARTY,
      sender: authority,
      receiver: ours,
      documentType: MLS_DOCUMENT_TYPE,
      process: MLS_PROCESS,
      countryC1: 'DK',
      payload: {
        xml: Buffer.from(mls.xml, 'utf8'),
        root: { namespaceURI: NS.ublApplicationResponse, localName: 'ApplicationResponse' },
      },
      seats: { from: 'PDK000000', to: 'PDK000000' },
    });
    const { received } = await runReceiveSteps(receiving, { tenantId: TENANT, messageId });
    expect(received.mls).toEqual({
      statusCode: 'RE',
      refToDocumentId: reportDocumentId,
      reportOf: documentId,
      sender: formatId(authority),
      reason: 'Report refused; BV [ibr-tdd-17] wrong',
    });
  });
});
