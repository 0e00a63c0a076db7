/**
 * Sending the MLS of a received document, on a real database with a stand-in SMP lookup and AS4 peer: the address
 * (MLS_TO, else the sending access point's SPID), the document built (our SPID, the SBDH InstanceIdentifier it
 * answers, the status and reasons), stored once as the party's downloadable document with its attempts on its
 * history, every attempt the same AS4 message, and MessageLevelStatusSent with the spec's details.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { As4SendOutcome } from '../../src/peppol/as4/sender';
import { formatId, peppolParticipant, type ParticipantId } from '../../src/peppol/identifiers';
import { readMls } from '../../src/peppol/mls';
import { BILLING_PROCESS, BIS3_INVOICE } from '../../src/peppol/smp-publisher';
import { createMlsSending, sentMlsDocumentId, type MlsSentDeps } from '../../src/receiving/mls-send';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import type { PublishEventInput } from '../../src/webhooks/publish';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { recordingEvents, standInPeppolSender, storeAs4Arrival, storeDocument } from '../support/received-fixtures';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { testPki } from '../support/peppol/pki-fixture';
import type { TestPki } from '../support/peppol/test-pki';

const TENANT = 'tenantMlsSend';
const PARTY = '0106:81818181';
const SELLER = peppolParticipant('0088:7315458756324');

describe('sending the MLS of a received document', () => {
  let ctx: TestContext;
  let pki: TestPki;
  let as4: As4InboundRepository;
  let token: string;

  beforeAll(async () => {
    pki = await testPki();
    ctx = await createTestContext('mls-send', { workflows: new RecordingWorkflowStarter() });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'S' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: 'NL:S', name: 'S' });
    token = await ctx.token(await ctx.createClient([TENANT]));
    as4 = new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs);
  });
  afterAll(async () => ctx.close());

  /** A received invoice as the receiver and the receive step store it (message, then the party's document). */
  async function receivedInvoice(mlsTo?: ParticipantId) {
    const instanceId = randomUUID();
    const { messageId } = await storeAs4Arrival(as4, {
      tenantId: TENANT,
      partyId: PARTY,
      sender: SELLER,
      receiver: peppolParticipant(PARTY),
      documentType: BIS3_INVOICE,
      process: BILLING_PROCESS,
      countryC1: 'BE',
      instanceId,
      ...(mlsTo ? { mlsTo, mlsType: 'ALWAYS_SEND' as const } : {}),
      payload: { xml: corpusFile(SAMPLE_UBL_INVOICE) },
      seats: { from: 'POP000777', to: 'POP000001' },
    });
    const documentId = await storeDocument(ctx, {
      tenantId: TENANT,
      partyId: PARTY,
      bytes: corpusFile(SAMPLE_UBL_INVOICE),
      direction: 'inbound',
      channel: 'peppol',
      createdBy: 'peppol',
      filename: 'r.xml',
      metadata: { as4MessageId: messageId },
    });
    return { documentId, instanceId };
  }

  function mlsSending(outcomes: Array<As4SendOutcome['outcome']>) {
    const lookups: string[] = [];
    const published: PublishEventInput[] = [];
    const { peppolSender, exchanges } = standInPeppolSender(pki, outcomes, {
      onLookup: (participant) => lookups.push(formatId(participant)),
    });
    const deps: MlsSentDeps = {
      documents: ctx.core.documents,
      blobs: ctx.core.db.blobs,
      maxDocumentBytes: 1 << 22,
      heartbeat: () => undefined,
      as4Inbound: as4,
      directory: ctx.core.directory,
      events: recordingEvents(published),
      peppolSender,
    };
    return { steps: createMlsSending(deps), lookups, exchanges, published };
  }

  it('sends AP to the sending access point (0242 + its Seat ID digits), stored and on the MLS history', async () => {
    const invoice = await receivedInvoice();
    const s = mlsSending(['retryable', 'delivered']);
    const firstAttemptAt = new Date().toISOString();
    const base = { tenantId: TENANT, documentId: invoice.documentId, responseCode: 'AP' as const, firstAttemptAt };
    const first = await s.steps.sendMlsAttempt({ ...base, attempt: 1 });
    expect(first).toMatchObject({ outcome: 'retryable', to: 'iso6523-actorid-upis::0242:000777' });
    const second = await s.steps.sendMlsAttempt({ ...base, attempt: 2 });
    expect(second.outcome).toBe('delivered');
    expect(s.lookups).toEqual(['iso6523-actorid-upis::0242:000777', 'iso6523-actorid-upis::0242:000777']);
    // Every attempt is the same AS4 message.
    expect(s.exchanges.map((e) => e.messageId)).toEqual([first.messageId, first.messageId]);
    expect(s.exchanges[0]?.url).toBe('https://c2.example.test/as4');

    const mlsDocumentId = sentMlsDocumentId(TENANT, invoice.documentId);
    expect(second.mlsDocumentId).toBe(mlsDocumentId);
    const download = await request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${mlsDocumentId}/download`)
      .auth(token, { type: 'bearer' });
    expect(download.status).toBe(200);
    const read = readMls(Buffer.from(download.text, 'utf8'));
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    expect(read.mls).toMatchObject({
      id: mlsDocumentId,
      responseCode: 'AP',
      referencedInstanceId: invoice.instanceId,
      sender: peppolParticipant('0242:000001'),
      receiver: peppolParticipant('0242:000777'),
      lines: [],
    });
    const record = await ctx.core.documents.find(TENANT, mlsDocumentId);
    expect(record).toMatchObject({ direction: 'outbound', partyId: PARTY, state: 'delivered' });
    expect(record?.history.filter((h) => h.state === 'sending')).toHaveLength(2);

    const eventId = randomUUID();
    await s.steps.publishMlsSent({
      tenantId: TENANT,
      documentId: invoice.documentId,
      mlsDocumentId,
      responseCode: 'AP',
      attempt: 2,
      messageId: second.messageId,
      to: second.to,
      eventId,
    });
    expect(s.published).toEqual([
      expect.objectContaining({
        id: eventId,
        topic: 'MessageLevelStatusSent',
        tenantId: TENANT,
        party: { partyId: PARTY, legalEntityId: 'NL:S' },
        documentId: mlsDocumentId,
        refToDocumentId: invoice.documentId,
        details: expect.objectContaining({
          statusCode: 'AP',
          status: 'Accept',
          description: '',
          profileId: 'urn:peppol:edec:mls',
          sourceDocumentTypeId: '',
          attempt: '2',
          protocol: 'peppol',
        }),
      }),
    ]);
  });

  it('sends RE with its lines and rule ids to MLS_TO when it belongs to the sending access point', async () => {
    const invoice = await receivedInvoice(peppolParticipant('0242:000777-MLS'));
    const s = mlsSending(['delivered']);
    const out = await s.steps.sendMlsAttempt({
      tenantId: TENANT,
      documentId: invoice.documentId,
      responseCode: 'RE',
      description: 'Invalid invoice',
      lines: [{ reasonCode: 'BV', ruleId: 'BR-CL-01', description: 'Invoice type code' }],
      attempt: 1,
      firstAttemptAt: new Date().toISOString(),
    });
    expect(out).toMatchObject({ outcome: 'delivered', to: 'iso6523-actorid-upis::0242:000777-mls' });
    const stored = await ctx.core.documents.findStored(TENANT, out.mlsDocumentId);
    const read = readMls(await ctx.core.db.blobs.read(stored!.blobId));
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    expect(read.mls.lines).toEqual([
      { location: 'NA', reasonCode: 'BV', ruleId: 'BR-CL-01', description: '[BR-CL-01] Invoice type code' },
    ]);
  });

  it('refuses a document it does not know', async () => {
    const s = mlsSending([]);
    await expect(
      s.steps.sendMlsAttempt({
        tenantId: TENANT,
        documentId: randomUUID(),
        responseCode: 'AP',
        attempt: 1,
        firstAttemptAt: new Date().toISOString(),
      }),
    ).rejects.toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
  });
});
