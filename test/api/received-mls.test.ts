/**
 * A received message-level status (MLS) on a real database: read with the MLS rules (the corpus's bad files refused with
 * the rule they break), stored as a document of its own, matched to the sales invoice it answers by the SBDH
 * InstanceIdentifier our message carried (never another tenant's), recorded on that invoice's history without hiding
 * its final state, and announced as MessageLevelStatusReceived; an MLS about an unknown document is announced too.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { requireCorpus, SAMPLE_UBL_INVOICE, corpusFile } from '../support/corpus';
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
import { SentInstanceRepository } from '../../src/storage/peppol/sent-instance.repository';
import { Transition } from '../../src/core/document-states';
import { buildMls, type MlsBuildInput } from '../../src/peppol/mls';
import { NS } from '../../src/formats/xml/namespaces';
import { formatId, peppolParticipant } from '../../src/peppol/identifiers';
import { MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../../src/peppol/smp-publisher';
import type { PublishEventInput } from '../../src/webhooks/publish';
import type { ReceiveDocumentInput } from '../../workflows/contracts/receive-document';

const TENANT = 'tenantMlsIn';
const OTHER_TENANT = 'tenantMlsOther';
const PARTY = '0106:61616161';
const FOREIGN_PARTY = '0106:62626262';
const THEIR_SPID = peppolParticipant('0242:000111');
const OUR_SPID = peppolParticipant('0242:000222');
const BAD_DIR = path.join(requireCorpus('peppol/mls'), 'bad');

interface StatusBody {
  state: string;
  history: Array<{ state: string; key?: string; detail?: string }>;
}

describe('received MLS: refused, matched, recorded and announced', () => {
  let ctx: TestContext;
  let token: string;
  let steps: ReceiveDocumentSteps;
  let as4: As4InboundRepository;
  let sent: SentInstanceRepository;
  const published: PublishEventInput[] = [];

  beforeAll(async () => {
    ctx = await createTestContext('received-mls', { workflows: new RecordingWorkflowStarter() });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'M' });
    await ctx.core.directory.createTenant({ id: OTHER_TENANT, name: 'O' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: 'NL:M', name: 'M' });
    await ctx.core.directory.createParty({
      tenantId: OTHER_TENANT,
      partyId: FOREIGN_PARTY,
      legalEntityId: 'NL:O',
      name: 'O',
    });
    token = await ctx.token(await ctx.createClient([TENANT]));
    as4 = new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs);
    sent = new SentInstanceRepository(ctx.core.db.models);
    steps = receiveDocumentSteps(ctx, { as4Inbound: as4, sentInstances: sent, events: recordingEvents(published) });
  });
  afterAll(async () => ctx.close());

  /** A sales invoice of `partyId`, sent over Peppol: its instance identifier recorded, delivered or not. */
  async function sentInvoice(tenantId: string, partyId: string, delivered: boolean) {
    const documentId = await storeAcceptedOutbound(ctx, tenantId, partyId, corpusFile(SAMPLE_UBL_INVOICE));
    await recordSent(ctx, tenantId, documentId, delivered);
    const instanceId = randomUUID();
    await sent.record({ instanceId, tenantId, documentId, partyId, generation: 0 });
    return { documentId, instanceId };
  }

  function mlsXml(referencedInstanceId: string, over: Partial<MlsBuildInput> = {}): Buffer {
    const built = buildMls({
      responseCode: 'AP',
      referencedInstanceId,
      sender: THEIR_SPID,
      receiver: OUR_SPID,
      ...over,
    });
    return Buffer.from(built.xml, 'utf8');
  }

  /** An MLS arriving over AS4 for `partyId` of TENANT: stored as the receiver stores it, then the run's steps. */
  async function receiveOverAs4(payload: Buffer, tenantId = TENANT, partyId = PARTY) {
    const { messageId } = await storeAs4Arrival(as4, {
      tenantId,
      partyId,
      sender: THEIR_SPID,
      receiver: peppolParticipant(partyId),
      documentType: MLS_DOCUMENT_TYPE,
      process: MLS_PROCESS,
      countryC1: 'NL',
      payload: { xml: payload, root: { namespaceURI: NS.ublApplicationResponse, localName: 'ApplicationResponse' } },
    });
    const { detection, received, eventId } = await runReceiveSteps(steps, { tenantId, messageId });
    return { messageId, detection, received, eventId };
  }

  const status = (documentId: string, kind?: string) => readStatus<StatusBody>(ctx.app, token, PARTY, documentId, kind);

  it('matches an MLS to the invoice it answers: history entry, final state kept, event with both ids', async () => {
    const invoice = await sentInvoice(TENANT, PARTY, true);
    const r = await receiveOverAs4(mlsXml(invoice.instanceId));
    expect(r.detection).toMatchObject({ ok: true, format: { id: 'peppol-mls' } });
    const mlsId = receivedDocumentId(TENANT, r.messageId);
    expect(r.received).toMatchObject({
      documentId: mlsId,
      topic: 'MessageLevelStatusReceived',
      mls: { statusCode: 'AP', refToDocumentId: invoice.documentId },
    });
    const event = published.find((e) => e.id === r.eventId);
    expect(event).toMatchObject({
      topic: 'MessageLevelStatusReceived',
      tenantId: TENANT,
      party: { partyId: PARTY, legalEntityId: 'NL:M' },
      documentId: mlsId,
      refToDocumentId: invoice.documentId,
      details: {
        statusCode: 'AP',
        status: 'Accept',
        description: '',
        documentTypeId: formatId(MLS_DOCUMENT_TYPE),
        profileId: 'urn:peppol:edec:mls',
        referencedInstanceId: invoice.instanceId,
      },
    });
    const s = await status(invoice.documentId);
    expect(s.state).toBe('delivered');
    const entry = s.history.find((h) => h.state === 'mls-received');
    expect(entry?.detail).toMatch(/^MLS AP \(Accept\) from iso6523-actorid-upis::0242:000111/);
    expect(entry?.detail).toContain(mlsId);
    // The MLS itself is downloadable by the party.
    const download = await request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${mlsId}/download`)
      .auth(token, { type: 'bearer' });
    expect(download.status).toBe(200);
    expect(download.text).toContain('urn:peppol:edec:mls:1.0');
  });

  it('records a rejection with its reasons and rule ids; a retried step writes and announces the same', async () => {
    const invoice = await sentInvoice(TENANT, PARTY, true);
    const payload = mlsXml(invoice.instanceId, {
      responseCode: 'RE',
      description: 'Invalid invoice',
      lines: [
        { reasonCode: 'BV', ruleId: 'BR-CO-10', description: 'Sum of lines', location: '/Invoice' },
        { reasonCode: 'BW', ruleId: 'PEPPOL-EN16931-R001', description: 'Warning' },
      ],
    });
    const r = await receiveOverAs4(payload);
    const event = published.find((e) => e.id === r.eventId);
    expect(event?.details).toMatchObject({
      statusCode: 'RE',
      status: 'Reject',
      description: 'Invalid invoice',
      statusReasonCodes: 'BV,BW',
      ruleIds: 'BR-CO-10,PEPPOL-EN16931-R001',
    });
    const before = (await status(invoice.documentId)).history.length;
    const again = await steps.registerReceivedDocument({
      tenantId: TENANT,
      messageId: r.messageId,
      detection: r.detection,
      eventId: r.eventId,
    });
    expect(again).toEqual(r.received);
    const s = await status(invoice.documentId);
    expect(s.history).toHaveLength(before);
    expect(s.state).toBe('delivered');
    expect(s.history.find((h) => h.state === 'mls-received')?.detail).toContain('BV BR-CO-10, BW PEPPOL-EN16931-R001');
  });

  it('does not hide a state that is not final yet, and the final entry still wins', async () => {
    const invoice = await sentInvoice(TENANT, PARTY, false);
    await receiveOverAs4(mlsXml(invoice.instanceId, { responseCode: 'AB' }));
    expect((await status(invoice.documentId)).state).toBe('mls-received');
    await ctx.core.documents.recordTransition(TENANT, invoice.documentId, Transition.delivered);
    expect((await status(invoice.documentId)).state).toBe('delivered');
  });

  it('announces an MLS about an unknown document (empty refToDocumentId), and never matches another tenant', async () => {
    const unknown = await receiveOverAs4(mlsXml(randomUUID()));
    expect(unknown.received).toMatchObject({ mls: { statusCode: 'AP', refToDocumentId: null } });
    expect(published.find((e) => e.id === unknown.eventId)).toMatchObject({
      topic: 'MessageLevelStatusReceived',
      refToDocumentId: '',
      party: { partyId: PARTY },
      documentId: receivedDocumentId(TENANT, unknown.messageId),
    });

    const foreign = await sentInvoice(OTHER_TENANT, FOREIGN_PARTY, true);
    const r = await receiveOverAs4(mlsXml(foreign.instanceId));
    expect(r.received).toMatchObject({ mls: { refToDocumentId: null } });
    const foreignRecord = await ctx.core.documents.find(OTHER_TENANT, foreign.documentId);
    expect(foreignRecord?.history.some((h) => h.state === 'mls-received')).toBe(false);
  });

  it.each([
    ['mls-05a.xml', 'SCH-MLS-05'],
    ['mls-17a.xml', 'SCH-MLS-17'],
    ['mls-24a.xml', 'SCH-MLS-24'],
  ])('refuses the bad %s with %s: recorded with the rule, announced to nobody', async (file, rule) => {
    const count = published.length;
    const r = await receiveOverAs4(readFileSync(path.join(BAD_DIR, file)));
    expect(r.received).toMatchObject({ state: 'rejected', mls: { refused: expect.stringContaining(`[${rule}]`) } });
    expect(r.received.topic).toBeUndefined();
    expect(published).toHaveLength(count);
    const doc = await status(receivedDocumentId(TENANT, r.messageId), 'purchaseInvoice');
    expect(doc.state).toBe('rejected');
    expect(doc.history.find((h) => h.state === 'rejected')?.detail).toContain(`[${rule}]`);
  });

  it('reads an MLS injected through the API on the same path', async () => {
    const invoice = await sentInvoice(TENANT, PARTY, true);
    const res = await request(ctx.app)
      .post(`/api/v1/${PARTY}/generic/receive`)
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send(mlsXml(invoice.instanceId));
    expect(res.status).toBe(200);
    const documentId = (res.body as { id: string }).id;
    const input: ReceiveDocumentInput = {
      tenantId: TENANT,
      messageId: `injected:${documentId}`,
      injected: { documentId },
    };
    const { received, eventId } = await runReceiveSteps(steps, input);
    expect(received).toMatchObject({ documentId, mls: { statusCode: 'AP', refToDocumentId: invoice.documentId } });
    expect(published.find((e) => e.id === eventId)).toMatchObject({
      createdBy: 'manualUpload',
      documentId,
      refToDocumentId: invoice.documentId,
    });
  });
});
