/**
 * A month of real traffic through the real hook points: our AS4 sending step (sendOverAs4) to our own receiver over a
 * socket on 127.0.0.1 (the real app, receiver and database), so each message is recorded once as sent and once as
 * received. The month's TSR and EUSR are generated from what was recorded, validated with the official packs, add up
 * to the messages exchanged, and the TSR itself goes out over AS4 (here to our own receiver serving the reporting
 * participant).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Document } from '@xmldom/xmldom';
import { parseXml } from '../../src/formats';
import {
  documentTypeId,
  DOCTYPE_SCHEME_BUSDOX,
  formatId,
  peppolParticipant,
  processId,
  PROCESS_SCHEME,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from '../../src/peppol/identifiers';
import { ApKeyRing } from '../../src/peppol/pki/key-ring';
import {
  monthOf,
  NETWORK_REPORTS_TENANT,
  prepareReport,
  reportDocumentId,
  sendReport,
  type NetworkReportingDeps,
} from '../../src/reporting/peppol';
import { sendOverAs4, storeGeneratedDocument } from '../../src/sending/as4-send';
import { ReportingItemRepository } from '../../src/storage/reporting/reporting-item.repository';
import { createValidator } from '../../src/validation';
import { validatorOptions } from '../../src/main/compose';
import { BILLING, INVOICE, RECEIVER } from '../support/as4-messages';
import { testPki, testApEnv } from '../support/peppol/pki-fixture';
import type { TestPki } from '../support/peppol/test-pki';
import { createTestContext, type TestContext } from '../support/test-app';

const MLS_TYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1',
);
const MLS_PROCESS = processId(PROCESS_SCHEME, 'urn:peppol:edec:mls');
const SELLER_A = peppolParticipant('0208:0000000001');
const SELLER_B = peppolParticipant('0208:0000000002');
const OPENPEPPOL = '9925:be0848934496';

let pki: TestPki;
let ctx: TestContext;
let server: Server;
let url: string;
let deps: NetworkReportingDeps;

beforeAll(async () => {
  pki = await testPki();
  ctx = await createTestContext('peppolreporting', {
    env: {
      ...testApEnv('ap-receiver'),
      PEPPOL_REPORTING_COUNTRY: 'BE',
    },
  });
  const tenant = await ctx.core.directory.createTenant({ name: 'receiving tenant' });
  await ctx.core.directory.createParty({
    tenantId: tenant._id,
    partyId: RECEIVER.value,
    legalEntityId: `NL:${RECEIVER.value}`,
    name: 'Receiver BV',
  });
  // Our receiver serves the reporting participant too, so the report can travel the same real path.
  await ctx.core.directory.createParty({
    tenantId: tenant._id,
    partyId: OPENPEPPOL,
    legalEntityId: `BE:${OPENPEPPOL}`,
    name: 'Reporting receiver',
  });
  server = createServer(ctx.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/as4`;
  deps = {
    documents: ctx.core.documents,
    blobs: ctx.core.db.blobs,
    maxDocumentBytes: 10 * 1024 * 1024,
    heartbeat: () => undefined,
    peppolSender: {
      keys: new ApKeyRing([pki.apSender]),
      apCertificateAuthorities: [pki.apCa.certificate],
      lookup: {
        findEndpoint: async (participant, types, process) => ({
          ok: true,
          participant: participant as ParticipantId,
          smpUrl: 'https://smp.example.test',
          documentType: types[0]!,
          process: process!,
          result: { endpoint: { url, certificate: pki.apReceiver.certificate } } as never,
        }),
      },
    },
    reportingItems: new ReportingItemRepository(ctx.core.db.models),
    reportValidator: createValidator(validatorOptions(ctx.core.config)),
  };
}, 180_000);

afterAll(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  await ctx?.close();
});

const XML = (root: string, id: string) =>
  Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><${root} xmlns="urn:oasis:names:specification:ubl:schema:xsd:${root}-2">` +
      `<ID>${id}</ID></${root}>`,
  );

const firstAttempts = new Map<string, Date>();

/** One document of a sending party, stored as the MLS path stores its documents, then sent through sendOverAs4. */
async function send(
  n: number,
  sender: ParticipantId,
  documentType: DocumentTypeId = INVOICE,
  process: ProcessId = BILLING,
  seed = `doc-${n}`,
) {
  const documentId = `out-${seed}`;
  const bytes = XML(documentType === INVOICE ? 'Invoice' : 'ApplicationResponse', seed);
  await storeGeneratedDocument(deps, {
    tenantId: 'sender-tenant',
    documentId,
    partyId: sender.value,
    bytes,
    kind: 'test',
    createdBy: 'test',
    format: { id: 'test', name: 'test', syntax: 'UBL', documentType: 'Invoice' },
  });
  return sendOverAs4(deps, {
    tenantId: 'sender-tenant',
    documentId,
    partyId: sender.value,
    bytes,
    sender,
    receiver: RECEIVER,
    documentType,
    process,
    countryC1: 'BE',
    idSeed: `sender-tenant:${documentId}`,
    attempt: 1,
    firstAttemptAt: firstAttempts.get(seed) ?? firstAttempts.set(seed, new Date()).get(seed)!,
    label: 'Test',
  });
}

const texts = (doc: Document, name: string) =>
  Array.from(doc.getElementsByTagName(name)).map((e) => Number(e.textContent));
function subtotalSum(doc: Document, container: string, type: string, field: string): number {
  return Array.from(doc.getElementsByTagName(container))
    .filter((s) => s.getAttribute('type') === type)
    .reduce((a, s) => a + Number(s.getElementsByTagName(field).item(0)?.textContent), 0);
}

describe('a month of traffic → TSR and EUSR', () => {
  it('records each exchange once per direction, and the month reports add up and pass the official rules', async () => {
    const outcomes = [
      await send(1, SELLER_A),
      await send(2, SELLER_A),
      await send(3, SELLER_B),
      await send(4, SELLER_A, MLS_TYPE, MLS_PROCESS),
      // The same document again: the same AS4 message (stable ids), confirmed again, recorded once.
      await send(5, SELLER_B, INVOICE, BILLING, 'doc-3'),
    ];
    expect(outcomes.map((o) => o.outcome)).toEqual(['delivered', 'delivered', 'delivered', 'delivered', 'delivered']);
    expect(outcomes[4]!.messageId).toBe(outcomes[2]!.messageId);

    const month = monthOf(new Date());
    const items = await ctx.core.db.models.ReportingItem.find().lean().exec();
    expect(items.filter((i) => i.direction === 'sent')).toHaveLength(4);
    expect(items.filter((i) => i.direction === 'received')).toHaveLength(4);
    const received = items.find((i) => i.direction === 'received' && !i.mls)!;
    expect(received).toMatchObject({
      otherSeatId: 'POP000001',
      countryC1: 'BE',
      countryC4: 'NL',
      endUserId: formatId(RECEIVER),
      transportProtocol: 'peppol-transport-as4-v2_0',
    });
    expect(items.find((i) => i.direction === 'sent')).toMatchObject({ otherSeatId: 'POP000002' });

    const tsr = await prepareReport(deps, month, 'tsr');
    const eusr = await prepareReport(deps, month, 'eusr');
    expect(tsr).toMatchObject({ created: true, delivered: false, attempts: 0 });
    const stored = await ctx.core.documents.find(NETWORK_REPORTS_TENANT, reportDocumentId(month, 'tsr'));
    expect(stored?.validation ?? stored?.history.map((h) => h.detail).join(' ')).toBeTruthy();
    expect(stored!.history.map((h) => h.detail ?? '').join(' ')).toContain('peppol-tsr@1.0.5');

    const read = async (documentId: string) => {
      const doc = await ctx.core.documents.findStored(NETWORK_REPORTS_TENANT, documentId);
      return parseXml((await ctx.core.db.blobs.read(doc!.blobId)).toString('utf8'));
    };
    const t = await read(tsr.documentId);
    // Loopback: every message went out and came in once.
    expect(texts(t, 'Incoming')[0]).toBe(4);
    expect(texts(t, 'Outgoing')[0]).toBe(4);
    for (const type of ['PerTP', 'PerSP-DT-PR']) {
      expect(subtotalSum(t, 'Subtotal', type, 'Incoming')).toBe(4);
      expect(subtotalSum(t, 'Subtotal', type, 'Outgoing')).toBe(4);
    }
    expect(subtotalSum(t, 'Subtotal', 'PerSP-DT-PR-CC', 'Incoming')).toBe(4);
    expect(t.documentElement!.getElementsByTagName('ReporterID').item(0)?.textContent).toBe('POP000001');

    const e = await read(eusr.documentId);
    const fullSet = e.getElementsByTagName('FullSet').item(0)!;
    const count = (name: string) => Number(fullSet.getElementsByTagName(name).item(0)?.textContent);
    // Sending end users: SELLER_A and SELLER_B (the MLS leaves none); receiving: RECEIVER.
    expect([count('SendingEndUsers'), count('ReceivingEndUsers'), count('SendingOrReceivingEndUsers')]).toEqual([
      2, 1, 3,
    ]);

    // Generated once: a second run keeps the stored report.
    expect(await prepareReport(deps, month, 'tsr')).toMatchObject({ documentId: tsr.documentId, created: false });

    // The report goes out over AS4 under our SPID, to the reporting participant, with our country as COUNTRY_C1.
    const sent = await sendReport(deps, { receiver: OPENPEPPOL, country: 'BE' }, { month, kind: 'tsr', attempt: 1 });
    expect(sent).toMatchObject({ outcome: 'delivered', to: `iso6523-actorid-upis::${OPENPEPPOL}` });
    const inbound = await ctx.core.db.models.As4Inbound.findById(sent.messageId).lean().exec();
    expect(inbound).toMatchObject({ sender: 'iso6523-actorid-upis::0242:000001', countryC1: 'BE' });
    expect(await prepareReport(deps, month, 'tsr')).toMatchObject({ delivered: true, attempts: 1 });
    const reportItem = await ctx.core.db.models.ReportingItem.findById(`sent:${sent.messageId}`).lean().exec();
    expect(reportItem).toMatchObject({ networkReport: true, mls: false });
  }, 120_000);

  it('refuses to send without our country, and names what is missing', async () => {
    await expect(
      sendReport(deps, { receiver: OPENPEPPOL, country: undefined }, { month: '2026-01', kind: 'tsr', attempt: 1 }),
    ).rejects.toThrow(/PEPPOL_REPORTING_COUNTRY/);
  });
});
