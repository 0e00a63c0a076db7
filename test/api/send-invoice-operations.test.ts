import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type mongoose from 'mongoose';
import request from 'supertest';
import * as secureParser from '../../src/formats/xml/secure-parser';
import { validatorOptions } from '../../src/main/compose';
import type { As4SendOutcome } from '../../src/peppol/as4/sender';
import {
  DOCTYPE_SCHEME_BUSDOX,
  documentTypeId,
  type DocumentTypeId,
  type ProcessId,
} from '../../src/peppol/identifiers';
import { ApKeyRing } from '../../src/peppol/pki/key-ring';
import type { RecipientEndpoint } from '../../src/peppol/recipient-lookup';
import { BILLING_PROCESS } from '../../src/peppol/smp-publisher';
import { createSendInvoice, type SendInvoiceDeps } from '../../src/sending';
import { inProcessTransform, type TransformRunner } from '../../src/transform';
import { createValidator } from '../../src/validation';
import type { PublishEventInput } from '../../src/webhooks/publish';
import type { SendInvoiceInput } from '../../workflows/contracts/send-invoice';
import { corpusFile } from '../support/corpus';
import { requireEnv, uniqueDbUri } from '../support/services';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { testPki } from '../support/peppol/pki-fixture';

type CommandStartedEvent = InstanceType<typeof mongoose.mongo.CommandStartedEvent>;

const TENANT = 'tenantSendOps';
/** The invoice's seller (BT-34 of BIS3_FILE): an upload is sent only for the party it names. */
const PARTY = '0007:5566778899';
const BUYER = '0106:12345670';
/** A Peppol BIS Billing 3.0 invoice (valid under the pinned rules), addressed to BUYER. */
const BIS3_FILE = 'en16931/unit-tests/testfiles/BIS_Billing_30-Telefoni.xml';
const ORIGINAL_BUYER_ENDPOINT = '<cbc:EndpointID schemeID="0007">2244668800</cbc:EndpointID>';
const BUYER_ENDPOINT = `<cbc:EndpointID schemeID="0106">${BUYER.slice(5)}</cbc:EndpointID>`;
const CII_DOCUMENT_TYPE =
  'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100::CrossIndustryInvoice##urn:cen.eu:en16931:2017::D16B';

/**
 * What the whole sendInvoice path (document check, recipient, delivery attempts, the final event: the workflow's
 * steps in its order) costs per invoice: record reads, reads of its stored bytes, XML parses, party lookups and
 * conversions. The workflow carries what the check found, so later steps read and parse nothing again; a conversion
 * is computed once per document, however many attempts follow. A change that adds one should fail here.
 */
describe('operations of the sendInvoice path', () => {
  let ctx: TestContext;
  let token: string;
  const sent: { name: string; collection: string }[] = [];
  const invoice = Buffer.from(corpusFile(BIS3_FILE).toString('utf8').replace(ORIGINAL_BUYER_ENDPOINT, BUYER_ENDPOINT));
  const validator = () => createValidator(validatorOptions(ctx.config));

  beforeAll(async () => {
    const { mongodbUri } = requireEnv();
    const letters = randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 8);
    ctx = await createTestContext('sendops', {
      workflows: new RecordingWorkflowStarter(),
      env: { MONGODB_URI: `${uniqueDbUri(mongodbUri, `sendops${letters}`)}?monitorCommands=true` },
    });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'Send ops' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: `SE:${PARTY}`, name: 'S' });
    token = await ctx.token(await ctx.createClient([TENANT]));
    ctx.core.db.connection.getClient().on('commandStarted', (e: CommandStartedEvent) => {
      sent.push({ name: e.commandName, collection: String((e.command as Record<string, unknown>)[e.commandName]) });
    });
  }, 60_000);
  afterAll(async () => ctx.close());

  async function upload(): Promise<SendInvoiceInput> {
    const res = await request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/send`)
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send(invoice);
    expect(res.status).toBe(200);
    return { tenantId: TENANT, documentId: (res.body as { id: string }).id };
  }

  /** The recipient's SMP: it lists only `accepts` (or every type when absent). */
  async function sender(outcomes: As4SendOutcome['outcome'][], accepts?: string) {
    const pki = await testPki();
    const exchanges: string[] = [];
    const findEndpoint = async (
      participant: unknown,
      types: readonly DocumentTypeId[],
      process?: ProcessId,
    ): Promise<
      RecipientEndpoint | { ok: false; failure: 'document-type-not-supported'; reason: never; message: string }
    > => {
      const type = types[0]!;
      if (accepts && type.value !== accepts)
        return { ok: false, failure: 'document-type-not-supported', reason: undefined as never, message: 'not listed' };
      const endpoint = { url: 'https://ap.example.test/as4', certificate: pki.apReceiver.certificate };
      return {
        ok: true,
        participant: participant as RecipientEndpoint['participant'],
        smpUrl: 'https://smp.example.test',
        documentType: type,
        process: process ?? BILLING_PROCESS,
        result: { endpoint } as never,
      };
    };
    const peppolSender: SendInvoiceDeps['peppolSender'] = {
      lookup: { findEndpoint: findEndpoint },
      keys: new ApKeyRing([pki.apSender]),
      apCertificateAuthorities: [pki.apCa.certificate],
      // The receiving access point: what it answers is not what this test measures.
      exchange: async (message) => {
        const outcome = outcomes[exchanges.length] ?? 'delivered';
        exchanges.push(message.messageId);
        return outcome === 'delivered'
          ? {
              outcome,
              httpStatus: 200,
              receiptMessageId: `receipt-${exchanges.length}`,
              references: [],
              receiverCertificate: pki.apReceiver.certificate,
              revocationChecked: false,
            }
          : ({ outcome, httpStatus: 503, reason: 'Service Unavailable' } as As4SendOutcome);
      },
    };
    return { peppolSender, exchanges };
  }

  function steps(peppolSender: SendInvoiceDeps['peppolSender'], transform: TransformRunner) {
    const published: PublishEventInput[] = [];
    const use = createSendInvoice({
      documents: ctx.core.documents,
      directory: ctx.core.directory,
      blobs: ctx.core.db.blobs,
      maxDocumentBytes: 1 << 22,
      heartbeat: () => undefined,
      validator: shared,
      transform,
      peppolSender,
      email: { unavailable: 'not used here' },
      https: { sender: { send: () => Promise.reject(new Error('no https channel here')) }, maxTimeoutMs: 1_000 },
      // No channel hook: Peppol is the implicit channel.
      hooks: { listForRouting: async () => [], get: async () => null },
      passesFilter: () => true,
      events: {
        publishEvent: async (input) => {
          published.push(input);
          return { event: { id: input.id, label: 'routed' }, deliveries: [] } as never;
        },
      },
    });
    return { use, published };
  }

  let shared: ReturnType<typeof createValidator>;
  beforeAll(async () => {
    shared = validator();
    // Rule packs load on first use: loaded before anything is counted.
    await shared.validate(invoice);
  }, 120_000);

  async function counted<T>(work: () => Promise<T>) {
    const from = sent.length;
    const parses = jest.spyOn(secureParser, 'parseXml');
    const reads = jest.spyOn(secureParser, 'parseXmlForReading');
    try {
      const value = await work();
      const calls = sent.slice(from);
      const count = (collection: string) =>
        calls.filter((c) => c.name === 'find' && c.collection === collection).length;
      return {
        value,
        records: count('documents'),
        bytes: count(ctx.core.db.blobs.filesCollection),
        parties: count('parties'),
        // Parses of the invoice (or of an SBD carrying it); the AS4 envelope, which only references it, is not one.
        parses: [...parses.mock.calls, ...reads.mock.calls].filter((c) => String(c[0]).includes(BUYER_ENDPOINT)).length,
      };
    } finally {
      parses.mockRestore();
      reads.mockRestore();
    }
  }

  it('a missing rule pack is the installation’s fault: the step is retried, the invoice waits detected, then validates', async () => {
    const input = await upload();
    const { peppolSender } = await sender([]);
    const installed = shared;
    shared = createValidator({
      ...validatorOptions(ctx.config),
      rulesDir: path.join(os.tmpdir(), `no-rules-${randomUUID()}`),
    });
    try {
      await expect(steps(peppolSender, inProcessTransform).use.checkDocument(input)).rejects.toMatchObject({
        code: 'DEPENDENCY_UNAVAILABLE',
        retryable: true,
        message: expect.stringContaining('the document waits'),
      });
    } finally {
      shared = installed;
    }
    expect((await ctx.core.documents.find(TENANT, input.documentId))?.state).toBe('detected');
    // The operator fetched the packs: the retried step validates.
    await expect(steps(peppolSender, inProcessTransform).use.checkDocument(input)).resolves.toMatchObject({
      validation: { kind: 'valid' },
    });
    expect((await ctx.core.documents.find(TENANT, input.documentId))?.state).toBe('validated');
  }, 120_000);

  it('a delivered, unconverted invoice: one record read, two byte reads, two parses, no party lookup', async () => {
    const input = await upload();
    const { peppolSender, exchanges } = await sender(['delivered']);
    const { use, published } = steps(peppolSender, inProcessTransform);
    const run = await counted(async () => {
      const checked = await use.checkDocument(input);
      expect(checked).toMatchObject({ detection: { ok: true }, validation: { kind: 'valid' } });
      if (!checked.detection.ok) throw new Error('not detected');
      const { facts } = checked;
      const format = checked.detection.format;
      const channel = await use.chooseChannel({
        ...input,
        eventId: randomUUID(),
        topic: 'SendInvoice',
        kind: 'Invoice',
        facts,
        format,
        first: true,
        tried: [],
      });
      expect(channel).toMatchObject({ ok: true, channel: { kind: 'peppol', hookId: null } });
      // The run's first attempt: resolution and send in one step.
      const firstAttemptAt = new Date().toISOString();
      const first = await use.resolveAndSendPeppol({ ...input, format, facts, attempt: 1, firstAttemptAt });
      if (!('sent' in first)) throw new Error(`not found: ${first.resolved.message}`);
      expect(first.resolved.route.endpointUrl).toBe(first.sent.endpoint);
      expect(first.sent.outcome).toBe('delivered');
      return use.publishSendEvent({
        ...input,
        topic: 'InvoiceSent',
        eventId: randomUUID(),
        facts,
        stage: 'delivery',
        message: 'delivered',
        attempt: 1,
      });
    });
    expect(exchanges).toHaveLength(1);
    expect({ records: run.records, bytes: run.bytes, parses: run.parses, parties: run.parties }).toEqual({
      records: 1,
      bytes: 2,
      parses: 2,
      parties: 0,
    });
    expect(published).toEqual([
      expect.objectContaining({ topic: 'SendInvoice', details: expect.objectContaining({ channel: 'peppol' }) }),
      expect.objectContaining({ topic: 'InvoiceSent', party: { partyId: PARTY, legalEntityId: `SE:${PARTY}` } }),
    ]);
    expect((await ctx.core.documents.find(TENANT, input.documentId))?.state).toBe('delivered');
  }, 120_000);

  it('a converted invoice is converted once, though its first attempt fails temporarily', async () => {
    const input = await upload();
    const { peppolSender, exchanges } = await sender(['retryable', 'delivered'], CII_DOCUMENT_TYPE);
    const conversions: string[] = [];
    const transform: TransformRunner = (bytes, options) => {
      conversions.push(options.targetFormat);
      return inProcessTransform(bytes, options);
    };
    const { use } = steps(peppolSender, transform);
    const checked = await use.checkDocument(input);
    if (!checked.detection.ok) throw new Error('not detected');
    const { facts } = checked;
    const resolved = await use.resolveRecipient({ ...input, format: checked.detection.format, facts });
    if (resolved.kind !== 'found') throw new Error(`not found: ${resolved.message}`);
    const target = resolved.route.transform?.targetFormat;
    expect(resolved.route.documentType.value).toBe(documentTypeId(DOCTYPE_SCHEME_BUSDOX, CII_DOCUMENT_TYPE).value);
    expect(target).toBeDefined();
    expect(conversions.filter((c) => c === target)).toHaveLength(1);
    const firstAttemptAt = new Date().toISOString();
    const before = conversions.length;
    const first = await use.sendPeppol({ ...input, facts, route: resolved.route, attempt: 1, firstAttemptAt });
    expect(first.outcome).toBe('retryable');
    const second = await use.sendPeppol({ ...input, facts, route: resolved.route, attempt: 2, firstAttemptAt });
    expect(second.outcome).toBe('delivered');
    expect(exchanges).toHaveLength(2);
    // Both attempts sent the bytes stored when the route was chosen: nothing was converted again.
    expect(conversions.length).toBe(before);
  }, 120_000);
  it('converts again, to the same bytes, when the stored conversion was removed before an attempt', async () => {
    const input = await upload();
    const { peppolSender, exchanges } = await sender(['retryable', 'delivered'], CII_DOCUMENT_TYPE);
    const conversions: string[] = [];
    const { use } = steps(peppolSender, (bytes, options) => {
      conversions.push(options.targetFormat);
      return inProcessTransform(bytes, options);
    });
    const checked = await use.checkDocument(input);
    if (!checked.detection.ok) throw new Error('not detected');
    const { facts } = checked;
    const resolved = await use.resolveRecipient({ ...input, format: checked.detection.format, facts });
    if (resolved.kind !== 'found' || !resolved.route.transform) throw new Error('no converted route');
    const { blobId } = resolved.route.transform;
    const stored = await ctx.core.db.blobs.read(blobId);
    const firstAttemptAt = new Date().toISOString();
    await use.sendPeppol({ ...input, facts, route: resolved.route, attempt: 1, firstAttemptAt });
    // Reconciliation removes bytes no record refers to; the next attempt must still send the same document.
    await ctx.core.db.blobs.delete(blobId);
    const before = conversions.length;
    const out = await use.sendPeppol({ ...input, facts, route: resolved.route, attempt: 2, firstAttemptAt });
    expect(out.outcome).toBe('delivered');
    expect(conversions.slice(before)).toEqual([resolved.route.transform.targetFormat]);
    expect(exchanges).toHaveLength(2);
    const again = await inProcessTransform(await ctx.core.db.blobs.read(facts.blobId), {
      targetFormat: resolved.route.transform.targetFormat,
    });
    expect(Buffer.compare(again.body, stored)).toBe(0);
  }, 120_000);
});
