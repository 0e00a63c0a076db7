/**
 * The automatic MLS decision of the receive run on a real database: an invoice received over AS4, validated with the
 * official rules, answered when the party has MLS on ("reviews", the party's Peppol configuration else the
 * environment's; off by default) or the sender asked (SBDH MLS_TYPE): AP only under ALWAYS_SEND (the party's Peppol
 * hook, else the environment's), RE with the failing rules for an invalid invoice, nothing for other cases.
 */
import { randomUUID } from 'node:crypto';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { invalidInvoice, receiveDocumentSteps, runReceiveSteps, storeAs4Arrival } from '../support/received-fixtures';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { receivedDocumentId, type ReceiveDocumentSteps } from '../../src/receiving';
import { decideAutomaticMls, type AutomaticMlsDeps } from '../../src/receiving/mls-auto';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import { PeppolDirectoryRepository } from '../../src/storage/peppol/peppol-directory.repository';
import type { HookRecord } from '../../src/storage/hooks/hook.repository';
import type { MlsType } from '../../src/peppol/sbdh';
import { BILLING_PROCESS, BIS3_INVOICE } from '../../src/peppol/smp-publisher';
import { peppolParticipant } from '../../src/peppol/identifiers';

const TENANT = 'tenantAutoMls';
const DEFAULTS_TENANT = 'tenantAutoMlsDefaults';
const PARTY = '0106:71717171';
const OTHER_PARTY = '0106:71717172';
const DEFAULTS_PARTY = '0106:71717173';
const SENDER = peppolParticipant('0088:7315458756324');

function peppolHook(partyId: string | null, mlsType: MlsType | null, isActive = true): HookRecord {
  return { id: randomUUID(), action: 'peppol', isActive, partyId, mlsType } as unknown as HookRecord;
}

describe('automatic MLS decision of a received invoice', () => {
  let ctx: TestContext;
  let steps: ReceiveDocumentSteps;
  let as4: As4InboundRepository;
  let peppol: PeppolDirectoryRepository;
  let hooks: HookRecord[] = [];
  let deps: Omit<AutomaticMlsDeps, 'hooks'>;

  beforeAll(async () => {
    ctx = await createTestContext('automatic-mls', { workflows: new RecordingWorkflowStarter() });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'A' });
    await ctx.core.directory.createTenant({ id: DEFAULTS_TENANT, name: 'D' });
    for (const [tenantId, partyId] of [
      [TENANT, PARTY],
      [TENANT, OTHER_PARTY],
      [DEFAULTS_TENANT, DEFAULTS_PARTY],
    ] as const)
      await ctx.core.directory.createParty({ tenantId, partyId, legalEntityId: `NL:${partyId}`, name: partyId });
    as4 = new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs);
    peppol = new PeppolDirectoryRepository(ctx.core.db.models);
    const base = {
      documents: ctx.core.documents,
      blobs: ctx.core.db.blobs,
      maxDocumentBytes: ctx.config.http.maxUploadBytes,
      heartbeat: () => undefined,
      as4Inbound: as4,
    };
    deps = { ...base, peppolDirectory: peppol };
    steps = receiveDocumentSteps(ctx, { as4Inbound: as4 });
    // MLS on for PARTY; OTHER_PARTY has a configuration with it off; DEFAULTS_PARTY has none (its tenant's applies).
    await peppol.putParticipant({ tenantId: TENANT, partyId: PARTY, registered: false, services: [], reviews: true });
    await peppol.putParticipant({
      tenantId: TENANT,
      partyId: OTHER_PARTY,
      registered: false,
      services: [],
      reviews: false,
    });
    await peppol.putTenantConfig(TENANT, { services: [], reviews: true });
    await peppol.putTenantConfig(DEFAULTS_TENANT, { services: [], reviews: true });
  }, 120_000);
  afterAll(async () => ctx.close());

  beforeEach(() => {
    hooks = [];
  });

  /** An invoice received over AS4 for `partyId`, run through detection, validation and registration. */
  async function receive(invoice: Buffer, o: { tenantId?: string; partyId?: string; mlsType?: MlsType } = {}) {
    const tenantId = o.tenantId ?? TENANT;
    const partyId = o.partyId ?? PARTY;
    const { messageId } = await storeAs4Arrival(as4, {
      tenantId,
      partyId,
      sender: SENDER,
      receiver: peppolParticipant(partyId),
      documentType: BIS3_INVOICE,
      process: BILLING_PROCESS,
      countryC1: 'NL',
      instanceId: randomUUID(),
      ...(o.mlsType ? { mlsType: o.mlsType } : {}),
      payload: { xml: invoice },
    });
    const { detection, validation, received } = await runReceiveSteps(steps, { tenantId, messageId }, 'required');
    if (!detection.ok || !validation) throw new Error('not validated');
    expect(received.documentId).toBe(receivedDocumentId(tenantId, messageId));
    const decide = () =>
      decideAutomaticMls(
        { ...deps, hooks: { listForRouting: () => Promise.resolve(hooks) } },
        {
          tenantId,
          messageId,
          documentId: received.documentId,
          documentType: detection.format.documentType,
          validation,
        },
      );
    return { validation, decide, messageId };
  }

  const VALID = corpusFile(SAMPLE_UBL_INVOICE);

  it('sends nothing by default: MLS off for the party and no MLS_TYPE from the sender', async () => {
    const r = await receive(VALID, { partyId: OTHER_PARTY });
    expect(r.validation.kind).toBe('valid');
    expect(await r.decide()).toEqual({ send: false, reason: 'not-requested' });
  });

  it('answers an accepted invoice only under ALWAYS_SEND: the party hook first, else the environment hook', async () => {
    const r = await receive(VALID);
    // MLS on, no mlsType anywhere: FAILURE_ONLY.
    expect(await r.decide()).toEqual({ send: false, reason: 'failure-only' });
    hooks = [peppolHook(null, 'ALWAYS_SEND')];
    expect(await r.decide()).toEqual({ send: true, responseCode: 'AP', lines: [], requestedBy: ['party'] });
    // The party's own hook wins over the environment's.
    hooks = [peppolHook(null, 'ALWAYS_SEND'), peppolHook(PARTY, 'FAILURE_ONLY')];
    expect(await r.decide()).toEqual({ send: false, reason: 'failure-only' });
    hooks = [peppolHook(null, 'FAILURE_ONLY'), peppolHook(PARTY, 'ALWAYS_SEND')];
    expect((await r.decide()).send).toBe(true);
    // Another party's hook and a switched-off hook do not count.
    hooks = [peppolHook(OTHER_PARTY, 'ALWAYS_SEND'), peppolHook(PARTY, 'ALWAYS_SEND', false)];
    expect(await r.decide()).toEqual({ send: false, reason: 'failure-only' });
  });

  it("answers the sender's MLS_TYPE ALWAYS_SEND with an AP even when MLS is off for the party", async () => {
    const r = await receive(VALID, { partyId: OTHER_PARTY, mlsType: 'ALWAYS_SEND' });
    expect(await r.decide()).toEqual({ send: true, responseCode: 'AP', lines: [], requestedBy: ['sender'] });
    const failureOnly = await receive(VALID, { partyId: OTHER_PARTY, mlsType: 'FAILURE_ONLY' });
    expect(await failureOnly.decide()).toEqual({ send: false, reason: 'failure-only' });
  });

  it('rejects an invalid invoice with RE, one line per failing rule (reason code, rule id, location)', async () => {
    const r = await receive(invalidInvoice());
    expect(r.validation).toMatchObject({ kind: 'invalid' });
    const d = await r.decide();
    if (!d.send) throw new Error(`no MLS: ${d.reason}`);
    expect(d.responseCode).toBe('RE');
    expect(d.requestedBy).toEqual(['party']);
    expect(d.description).toMatch(/^The document was rejected: \d+ failures? \(BV/);
    expect(d.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ reasonCode: 'BV', ruleId: 'BR-CL-01', location: expect.stringMatching(/^\//) }),
      ]),
    );
    // MLS off for the party and FAILURE_ONLY from the sender: a rejection is still answered (the sender asked).
    const asked = await receive(invalidInvoice(), { partyId: OTHER_PARTY, mlsType: 'FAILURE_ONLY' });
    expect(await asked.decide()).toMatchObject({ send: true, responseCode: 'RE', requestedBy: ['sender'] });
    const unasked = await receive(invalidInvoice(), { partyId: OTHER_PARTY });
    expect(await unasked.decide()).toEqual({ send: false, reason: 'not-requested' });
  });

  it("takes the environment's reviews setting for a party without a Peppol configuration", async () => {
    const r = await receive(invalidInvoice(), { tenantId: DEFAULTS_TENANT, partyId: DEFAULTS_PARTY });
    expect(await r.decide()).toMatchObject({ send: true, responseCode: 'RE', requestedBy: ['party'] });
  });

  it('answers nothing automatically for a document without a verdict or of another kind, saying why', async () => {
    const r = await receive(VALID);
    hooks = [peppolHook(PARTY, 'ALWAYS_SEND')];
    const base = { tenantId: TENANT, messageId: 'unused', documentId: 'unused' };
    const notValidated = await decideAutomaticMls(
      { ...deps, hooks: { listForRouting: () => Promise.resolve(hooks) } },
      { ...base, documentType: 'Invoice', validation: { kind: 'not-validated', reason: 'rule pack missing' } },
    );
    expect(notValidated).toEqual({ send: false, reason: 'not-validated: rule pack missing' });
    const order = await decideAutomaticMls(
      { ...deps, hooks: { listForRouting: () => Promise.resolve(hooks) } },
      { ...base, documentType: 'Order', validation: r.validation },
    );
    expect(order).toEqual({ send: false, reason: 'not-answered: Order documents get no automatic MLS' });
  });

  it('refuses to decide for a message of another tenant', async () => {
    const r = await receive(VALID);
    const other = { ...deps, hooks: { listForRouting: () => Promise.resolve(hooks) } };
    await expect(
      decideAutomaticMls(other, {
        tenantId: DEFAULTS_TENANT,
        messageId: r.messageId,
        documentId: 'x',
        documentType: 'Invoice',
        validation: r.validation,
      }),
    ).rejects.toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
  });
});
