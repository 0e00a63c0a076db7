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
import { runAdmin } from '../../src/main/admin';
import { validatorOptions } from '../../src/main/compose';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import { SentInstanceRepository } from '../../src/storage/peppol/sent-instance.repository';
import { buildMls } from '../../src/peppol/mls';
import { NS } from '../../src/formats/xml/namespaces';
import { formatId, peppolParticipant } from '../../src/peppol/identifiers';
import { MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../../src/peppol/smp-publisher';
import type { PublishEventInput } from '../../src/webhooks/publish';
import type { PreparedTaxReport, TaxReportEventInput } from '../../workflows/contracts/report-tax';

const TENANT = 'tenantTax';
const PARTY = '0184:DK12345678';
const INVOICE = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';
const AUTHORITY = '000777-taxsim.dk';
const OTHER_TENANT = 'tenantTaxOther';
const OTHER_PARTY = '0184:DK87654321';

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
  taxReport?: { step: string; at: string; report: number; reportType: string; detail?: string };
}

describe('tax report steps: plan, derive, validate, store, history and events', () => {
  let ctx: TestContext;
  let token: string;
  let foreignToken: string;
  const starter = new RecordingWorkflowStarter();
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
    // The API only needs to know reporting is configured (the worker reads the file).
    ctx = await createTestContext('tax-report', {
      workflows: starter,
      env: { TAX_REPORTING_CONFIG: '/nonexistent/tax-reporting.json' },
    });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'T' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: 'DK:A', name: 'A' });
    await ctx.core.directory.createTenant({ id: OTHER_TENANT, name: 'O' });
    await ctx.core.directory.createParty({
      tenantId: OTHER_TENANT,
      partyId: OTHER_PARTY,
      legalEntityId: 'DK:B',
      name: 'B',
    });
    token = await ctx.token(await ctx.createClient([TENANT]));
    foreignToken = await ctx.token(await ctx.createClient([OTHER_TENANT]));
    validatorInstance = validator();
  });
  afterAll(async () => ctx.close());

  async function salesInvoice(bytes: Buffer = corpusFile(INVOICE)): Promise<string> {
    return storeAcceptedOutbound(ctx, TENANT, PARTY, bytes);
  }

  const status = (documentId: string, kind?: string) => readStatus<StatusBody>(ctx.app, token, PARTY, documentId, kind);

  /** A step of a report as its run publishes it: whether it published an event, and the event. */
  async function publishStep(
    s: TaxReportSteps,
    documentId: string,
    report: PreparedTaxReport,
    fields: Omit<TaxReportEventInput, 'tenantId' | 'documentId' | 'eventId' | 'report'>,
  ) {
    const eventId = randomUUID();
    const r = await s.publishTaxReportEvent({ tenantId: TENANT, documentId, eventId, report, ...fields });
    return { eventId: r.eventId, event: published.find((e) => e.id === eventId) };
  }

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
      ref: { sequence: 1, typeCode: 'S' },
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
    const submitted = await publishStep(s, documentId, report, {
      outcome: 'submitted',
      messageId: 'm-1@gw',
      to: `iso6523-actorid-upis::0242:${AUTHORITY}`,
    });
    expect(submitted.eventId).toBeNull();
    expect((await status(documentId)).taxReport).toMatchObject({ step: 'submitted' });
    const mlsDocumentId = randomUUID();
    const { event } = await publishStep(s, documentId, report, {
      outcome: 'accepted',
      statusCode: 'AP',
      mlsDocumentId,
    });
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

    const rejected = await publishStep(s, documentId, report, {
      outcome: 'rejected',
      statusCode: 'RE',
      reason: 'BV [ibr-tdd-17] wrong',
    });
    expect(rejected.event).toMatchObject({
      topic: 'TaxReportError',
      details: { outcome: 'rejected', statusCode: 'RE', reason: 'BV [ibr-tdd-17] wrong' },
    });
  });

  it.each([1, 2])(
    'an MLS answering report %d names the reported invoice, the report and its sender',
    async (sequence) => {
      const sent = new SentInstanceRepository(ctx.core.db.models);
      const as4 = new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs);
      const receiving = receiveDocumentSteps(ctx, {
        as4Inbound: as4,
        sentInstances: sent,
        validator: validatorInstance,
        events,
      });
      const documentId = await salesInvoice();
      const ref = sequence > 1 ? ({ sequence, typeCode: 'R' } as const) : undefined;
      const reportDocumentId = taxReportDocumentId(TENANT, documentId, 'C2', ref);
      const instanceId = randomUUID();
      await sent.record({
        instanceId,
        tenantId: TENANT,
        documentId: reportDocumentId,
        partyId: PARTY,
        generation: 0,
        reportOf: documentId,
        ...(ref ? { reportSequence: sequence } : {}),
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
        ...(ref ? { reportSequence: sequence } : {}),
        sender: formatId(authority),
        reason: 'Report refused; BV [ibr-tdd-17] wrong',
      });
    },
  );

  /** POST …/taxReport for the document; the answer's status and body. */
  const ask = (documentId: string, body: unknown, opts: { kind?: string; auth?: string; party?: string } = {}) => {
    const r = request(ctx.app).post(
      `/api/v1/${opts.party ?? PARTY}/${opts.kind ?? 'salesInvoice'}/${documentId}/taxReport`,
    );
    return (opts.auth === '' ? r : r.auth(opts.auth ?? token, { type: 'bearer' })).send(body as object);
  };

  /** Runs the report the API started the way its run does: prepare, then the authority's answer. */
  async function runReport(s: TaxReportSteps, documentId: string, answer: 'AP' | 'RE') {
    const input = starter.taxReportsStarted.at(-1)!;
    expect(input).toMatchObject({
      tenantId: TENANT,
      documentId,
      direction: 'outbound',
      acknowledgementTimeoutMs: 1_440 * 60_000,
    });
    const report = await s.prepareTaxReport({
      tenantId: TENANT,
      documentId,
      direction: 'outbound',
      report: input.report!,
    });
    const { event } = await publishStep(s, documentId, report, {
      outcome: answer === 'AP' ? 'accepted' : 'rejected',
      statusCode: answer,
    });
    return {
      report: report as Extract<PreparedTaxReport, { kind: 'report' }>,
      event: event!,
    };
  }

  it('resubmits, then disregards, through the API: each a numbered report of its own, with its own TDD', async () => {
    const documentId = await salesInvoice();
    const s = steps(['DK']);
    // Nothing can be asked for before the gateway's own report, nor while it runs.
    let res = await ask(documentId, { reportType: 'resubmit' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('has no tax report yet');
    const first = await s.prepareTaxReport({ tenantId: TENANT, documentId, direction: 'outbound' });
    res = await ask(documentId, { reportType: 'disregard' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('report 1 (submit) is still in progress');
    await publishStep(s, documentId, first, { outcome: 'accepted', statusCode: 'AP' });

    res = await ask(documentId, { reportType: 'submit' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('send a correction as a resubmit');
    res = await ask(documentId, { reportType: 'resubmit' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: documentId,
      report: 2,
      reportType: 'resubmit',
      run: `report-tax:${TENANT}:${documentId}:2`,
    });
    expect(starter.taxReportsStarted.at(-1)?.report).toEqual({ sequence: 2, typeCode: 'R' });
    // The same number runs once: a second request before the run wrote anything is refused, not started twice.
    const again = await ask(documentId, { reportType: 'resubmit' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain('its tax report 2 was started already');

    const resubmit = await runReport(s, documentId, 'AP');
    expect(resubmit.report.reportDocumentId).toBe(
      taxReportDocumentId(TENANT, documentId, 'C2', { sequence: 2, typeCode: 'R' }),
    );
    expect(resubmit.report.reportDocumentId).not.toBe((first as typeof resubmit.report).reportDocumentId);
    expect(resubmit.report.invoiceUuid).toBe((first as typeof resubmit.report).invoiceUuid);
    const tdd = await request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${resubmit.report.reportDocumentId}/download`)
      .auth(token, { type: 'bearer' });
    expect(tdd.text).toContain('<pxs:TaxDataTypeCode>R</pxs:TaxDataTypeCode>');
    expect(tdd.text).toContain(`<cbc:UUID>${resubmit.report.reportDocumentId}</cbc:UUID>`);
    expect(resubmit.event).toMatchObject({
      topic: 'TaxReportSent',
      details: { reportType: 'resubmit', report: '2', outcome: 'accepted' },
    });
    let st = await status(documentId);
    expect(st.taxReport).toMatchObject({ step: 'accepted', report: 2, reportType: 'resubmit' });
    expect(st.taxReport?.detail).toContain('Tax report (2, resubmit, C2, DK) accepted');

    res = await ask(documentId, { reportType: 'disregard' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ report: 3, reportType: 'disregard' });
    const disregard = await runReport(s, documentId, 'AP');
    const d = await request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${disregard.report.reportDocumentId}/download`)
      .auth(token, { type: 'bearer' });
    expect(d.text).toContain('<pxs:TaxDataTypeCode>D</pxs:TaxDataTypeCode>');
    for (const reportType of ['submit', 'resubmit', 'disregard']) {
      res = await ask(documentId, { reportType });
      expect(res.status).toBe(409);
      expect(res.body.detail).toContain('nothing follows a disregard');
    }
    st = await status(documentId);
    expect(st.state).toBe('accepted');
    expect(st.history.filter((h) => h.state === 'tax-report')).toHaveLength(6);
  });

  it('after a rejected submit, only a submit again', async () => {
    const documentId = await salesInvoice();
    const s = steps(['DK']);
    const first = await s.prepareTaxReport({ tenantId: TENANT, documentId, direction: 'outbound' });
    await publishStep(s, documentId, first, { outcome: 'rejected', statusCode: 'RE' });
    const res = await ask(documentId, { reportType: 'disregard' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('a disregard needs a submit the tax authority accepted first');
    expect((await ask(documentId, { reportType: 'submit' })).body).toMatchObject({ report: 2, reportType: 'submit' });
    const again = await runReport(s, documentId, 'AP');
    expect(again.event.details).toMatchObject({ reportType: 'submit', report: '2' });
  });

  /** A body sent as it is, under the given media type. */
  const raw = (documentId: string, type: string, body: string) =>
    request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/${documentId}/taxReport`)
      .auth(token, { type: 'bearer' })
      .set('Content-Type', type)
      .send(body);

  it('refuses bad requests and documents out of reach, starting nothing', async () => {
    const documentId = await salesInvoice();
    const before = starter.taxReportsStarted.length;
    const cases: Array<[number, ReturnType<typeof ask>]> = [
      [400, ask(documentId, {})],
      [400, ask(documentId, { reportType: 'cancel' })],
      [400, ask(documentId, { reportType: ['resubmit'] })],
      [400, raw(documentId, 'application/json', '{"reportType":')],
      [415, raw(documentId, 'text/plain', 'resubmit')],
      [413, ask(documentId, { reportType: 'resubmit', pad: 'x'.repeat(20_000) })],
      // A sales invoice is not a purchase invoice; another tenant's token reaches neither.
      [404, ask(documentId, { reportType: 'resubmit' }, { kind: 'purchaseInvoice' })],
      [404, ask(randomUUID(), { reportType: 'resubmit' })],
      [403, ask(documentId, { reportType: 'resubmit' }, { auth: foreignToken })],
      [404, ask(documentId, { reportType: 'resubmit' }, { auth: foreignToken, party: OTHER_PARTY })],
      [401, ask(documentId, { reportType: 'resubmit' }, { auth: '' })],
      [401, ask(documentId, { reportType: 'resubmit' }, { auth: 'not-a-token' })],
    ];
    for (const [expected, pending] of cases) {
      const res = await pending;
      expect({ status: res.status, type: res.headers['content-type'] }).toEqual({
        status: expected,
        type: expect.stringContaining('application/problem+json'),
      });
    }
    expect(starter.taxReportsStarted.length).toBe(before);
  });

  it('answers 503 where tax reporting is not configured', async () => {
    const plain = await createTestContext('tax-report-off');
    try {
      await plain.core.directory.createTenant({ id: TENANT, name: 'T' });
      await plain.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: 'DK:A', name: 'A' });
      const t = await plain.token(await plain.createClient([TENANT]));
      const documentId = await storeAcceptedOutbound(plain, TENANT, PARTY, corpusFile(INVOICE));
      const res = await request(plain.app)
        .post(`/api/v1/${PARTY}/salesInvoice/${documentId}/taxReport`)
        .auth(t, { type: 'bearer' })
        .send({ reportType: 'resubmit' });
      expect(res.status).toBe(503);
      expect(res.body.detail).toBe('Tax reporting is not configured on this gateway');
    } finally {
      await plain.close();
    }
  });

  it('an operator asks for a report with the admin CLI, under the same rules', async () => {
    const documentId = await salesInvoice();
    const s = steps(['DK']);
    const first = await s.prepareTaxReport({ tenantId: TENANT, documentId, direction: 'outbound' });
    const cli = (type: string, services: Parameters<typeof runAdmin>[2] = { taxReports: starter }, doc = documentId) =>
      runAdmin(
        ctx.core,
        ['document', 'tax-report', '--tenant', TENANT, '--document-id', doc, '--type', type],
        services,
      );
    await expect(cli('disregard')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('still in progress'),
    });
    await publishStep(s, documentId, first, { outcome: 'accepted', statusCode: 'AP' });
    await expect(cli('cancel')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(cli('disregard', { taxReports: starter }, randomUUID())).rejects.toMatchObject({
      code: 'DOCUMENT_NOT_FOUND',
    });
    await expect(cli('disregard', {})).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(await cli('disregard')).toEqual({
      id: documentId,
      report: 2,
      reportType: 'disregard',
      run: `report-tax:${TENANT}:${documentId}:2`,
    });
    expect(starter.taxReportsStarted.at(-1)).toMatchObject({
      documentId,
      direction: 'outbound',
      report: { sequence: 2, typeCode: 'D' },
    });
  });
});
