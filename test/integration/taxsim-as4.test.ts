/**
 * taxsim as a Peppol access point on 127.0.0.1: a reporter (playing the gateway, access point POP000001, service
 * provider 0242:000001) finds taxsim's participant through a local SML zone and taxsim's own SMP, sends a Tax Data
 * Document derived by the library from a corpus invoice over AS4 with the project's sender, gets taxsim's signed
 * receipt, and taxsim's MLS comes back as a separate AS4 message to the reporter's receiving endpoint, found through
 * the SML zone and a local SMP, referencing the SBDH InstanceIdentifier the reporter sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildPeppolMessage } from '../../src/peppol/as4/message';
import { As4Receiver, type StoredInbound } from '../../src/peppol/as4/receiver';
import { sendAs4Message, type As4SendOutcome } from '../../src/peppol/as4/sender';
import {
  TRANSPORT_PROFILE_AS4_V2,
  formatId,
  peppolParticipant,
  spidOfSeatId,
  type ParticipantId,
} from '../../src/peppol/identifiers';
import { readMls, type Mls } from '../../src/peppol/mls';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import { ApKeyRing } from '../../src/peppol/pki/key-ring';
import { RecipientLookup } from '../../src/peppol/recipient-lookup';
import { businessDocumentOf, buildSbd, readSbdHeader } from '../../src/peppol/sbdh';
import { createDnsResolver, naptrName } from '../../src/peppol/sml';
import { SmpClient } from '../../src/peppol/smp-client';
import { MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../../src/peppol/smp-publisher';
import { startTaxsim, TAXSIM_SEAT_ID, TDD_DOCUMENT_TYPE, TDD_PROCESS, type RunningTaxsim } from '../../src/taxsim';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSmp } from '../support/peppol/local-smp';
import { MemoryInboundStore } from '../support/peppol/memory-inbound-store';
import { testPki } from '../support/peppol/pki-fixture';
import { apSubject, issueCertificate, type TestPki } from '../support/peppol/test-pki';
import { eventually } from '../support/poll';
import { bis3Tdd } from '../support/taxsim';
import { requirePacks, validator } from '../unit/validation/support';

jest.setTimeout(120_000);

const ZONE = 'participant.sml.taxsim.test';
const TAXSIM_DK = '0242:000950-taxsim.tax_dk';
const SELLER = peppolParticipant('0184:DK12345678');
/** The reporter's access point (the test PKI's sender certificate) and its service provider id. */
const REPORTER_SEAT = 'POP000001';

describe('taxsim over Peppol AS4 (real DNS, SMP and AS4 on 127.0.0.1)', () => {
  let pki: TestPki;
  let taxsimKey: KeyMaterial;
  let dns: LocalDnsZone;
  let smp: LocalSmp;
  let taxsim: RunningTaxsim;
  let lookup: RecipientLookup;
  let reporterStore: MemoryInboundStore;
  let reporterServer: Server;
  const reporterSpid = spidOfSeatId(REPORTER_SEAT);
  /** SBDH InstanceIdentifiers the reporter sent: an MLS to its SPID must reference one of them. */
  const sentInstances = new Set<string>();

  beforeAll(async () => {
    requirePacks(['peppol-vida-tdd-xsd', 'peppol-vida-tdd']);
    pki = await testPki();
    taxsimKey = await issueCertificate(pki.apCa, { subject: apSubject(TAXSIM_SEAT_ID) });
    dns = await new LocalDnsZone().start();
    smp = await new LocalSmp(pki.smp, '/smp').start();
    lookup = new RecipientLookup({
      zone: ZONE,
      resolver: createDnsResolver({ servers: [dns.address], timeoutMs: 2000, tries: 2 }),
      client: new SmpClient({
        smpCertificateAuthorities: [pki.smpCa.certificate],
        apCertificateAuthorities: [pki.apCa.certificate],
        timeoutMs: 2000,
      }),
    });

    // The reporter's receiving access point: the gateway's AS4 receiver, taking MLS addressed to its SPID that
    // answer a message it sent.
    reporterStore = new MemoryInboundStore();
    const receiver = new As4Receiver({
      keys: new ApKeyRing([pki.apSender]),
      apCertificateAuthorities: [pki.apCa.certificate],
      store: reporterStore,
      findParty: async () => null,
      findMlsOwner: async (instanceId) =>
        sentInstances.has(instanceId) ? { tenantId: 'reporter', partyId: formatId(SELLER) } : null,
      maxDecompressedBytes: 10 * 1024 * 1024,
      duplicateWindowMs: 3_600_000,
    });
    reporterServer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void receiver.receive(req.headers['content-type'] ?? '', Buffer.concat(chunks)).then((a) => {
          res.writeHead(a.status, { 'content-type': a.contentType }).end(a.body);
        });
      });
    });
    await new Promise<void>((r) => reporterServer.listen(0, '127.0.0.1', r));
    const reporterAs4 = `http://127.0.0.1:${(reporterServer.address() as AddressInfo).port}/as4`;
    dns.set(naptrName(reporterSpid, ZONE), [
      { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
    ]);
    smp.publish(reporterSpid, MLS_DOCUMENT_TYPE, [
      {
        process: MLS_PROCESS,
        endpoints: [
          { transportProfile: TRANSPORT_PROFILE_AS4_V2, url: reporterAs4, certificate: pki.apSender.certificate },
        ],
      },
    ]);

    taxsim = await startTaxsim({
      participants: { DK: TAXSIM_DK },
      validator: validator(),
      peppol: {
        keys: new ApKeyRing([taxsimKey]),
        apCertificateAuthorities: [pki.apCa.certificate],
        lookup,
        smpSigner: pki.smp,
        mlsRetryDelaysMs: [300, 300],
      },
      limits: { maxAs4Bytes: 2 * 1024 * 1024 },
    });
    // taxsim's participant is published by taxsim's own SMP, found through the SML zone.
    dns.set(naptrName(peppolParticipant(TAXSIM_DK), ZONE), [
      {
        type: 'NAPTR',
        order: 100,
        preference: 10,
        flags: 'U',
        service: 'Meta:SMP',
        regexp: `!^.*$!${taxsim.smpUrl!}!`,
      },
    ]);
  }, 120_000);

  afterAll(async () => {
    await taxsim?.stop();
    reporterServer?.closeAllConnections();
    await new Promise((r) => reporterServer?.close(r));
    await Promise.all([dns?.stop(), smp?.stop()]);
  });

  /** Looks taxsim's participant up like the gateway does and sends one TDD over AS4; the SBDH instance id too. */
  async function report(
    xml: string,
    options: { instanceId?: string; send?: boolean } = {},
  ): Promise<{ out: As4SendOutcome; instanceId: string; message: ReturnType<typeof buildPeppolMessage>; url: string }> {
    const found = await lookup.findEndpoint(TAXSIM_DK, [TDD_DOCUMENT_TYPE], TDD_PROCESS);
    if (!found.ok) throw new Error(`taxsim not found: ${found.message}`);
    const receiver: ParticipantId = peppolParticipant(TAXSIM_DK);
    const header = { sender: SELLER, receiver, documentType: TDD_DOCUMENT_TYPE, process: TDD_PROCESS };
    const sbd = buildSbd({
      ...header,
      countryC1: 'DK',
      ...(options.instanceId ? { instanceIdentifier: options.instanceId } : {}),
      mlsTo: reporterSpid,
      mlsType: 'ALWAYS_SEND',
      payload: { xml },
    });
    sentInstances.add(sbd.header.instanceIdentifier);
    const message = buildPeppolMessage({
      sbd: sbd.xml,
      header,
      signer: pki.apSender,
      receiverCertificate: found.result.endpoint.certificate,
    });
    const url = found.result.endpoint.url;
    const out = await sendAs4Message(message, url, {
      apCertificateAuthorities: [pki.apCa.certificate],
      receiverCertificate: found.result.endpoint.certificate,
      timeoutMs: 60_000,
    });
    return { out, instanceId: sbd.header.instanceIdentifier, message, url };
  }

  /** The MLS the reporter's endpoint received for an instance id, read with every MLS rule. */
  function mlsFor(instanceId: string): Promise<{ mls: Mls; record: StoredInbound }> {
    return eventually(
      async () => {
        for (const record of reporterStore.records) {
          const sbd = reporterStore.blobs.get(record.blobId)!;
          const read = readMls(businessDocumentOf(sbd));
          if (read.ok && read.mls.referencedInstanceId === instanceId) return { mls: read.mls, record };
        }
        return undefined;
      },
      60_000,
      `the MLS for ${instanceId}`,
      100,
    );
  }

  it('accepts a TDD sent over AS4 and its MLS AP comes back over AS4 to the MLS_TO service provider', async () => {
    const { out, instanceId, message } = await report(bis3Tdd({ receiver: TAXSIM_DK }));
    expect(out.outcome).toBe('delivered');
    expect(taxsim.as4Url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/as4$/);

    const { mls, record } = await mlsFor(instanceId);
    expect(mls).toMatchObject({
      responseCode: 'AP',
      referencedInstanceId: instanceId,
      sender: { value: '0242:000950' },
      receiver: { value: reporterSpid.value },
      lines: [],
    });
    // A separate AS4 message from taxsim's access point, addressed to the reporter's SPID as an MLS.
    expect(record).toMatchObject({
      fromSeatId: TAXSIM_SEAT_ID,
      toSeatId: REPORTER_SEAT,
      receiver: formatId(reporterSpid),
      documentType: formatId(MLS_DOCUMENT_TYPE),
      partyId: formatId(SELLER),
    });
    const header = readSbdHeader(reporterStore.blobs.get(record.blobId)!).header;
    expect(formatId(header.sender)).toBe('iso6523-actorid-upis::0242:000950');

    await taxsim.idle();
    const [listed] = taxsim.ledger.list();
    expect(listed).toMatchObject({
      channel: 'as4',
      as4MessageId: message.messageId,
      sbdhInstanceId: instanceId,
      fromSeatId: REPORTER_SEAT,
      verdict: 'accepted',
      facts: { role: 'C2', typeCode: 'S', invoiceNumber: '12345' },
    });
    expect(listed!.mls?.delivery).toMatch(/^delivered after 1 attempt/);
  });

  it('answers an invalid TDD with an MLS RE naming the failed rule (BV)', async () => {
    const xml = bis3Tdd({ receiver: TAXSIM_DK, role: 'C3' }).replace(
      '<pxs:ReporterRole>C3</pxs:ReporterRole>',
      '<pxs:ReporterRole>C9</pxs:ReporterRole>',
    );
    const { out, instanceId } = await report(xml);
    expect(out.outcome).toBe('delivered');
    const { mls } = await mlsFor(instanceId);
    expect(mls.responseCode).toBe('RE');
    expect(mls.lines).toContainEqual(expect.objectContaining({ reasonCode: 'BV', ruleId: 'ibr-tdd-09' }));
  });

  it('answers a resent AS4 message with a receipt only: judged once, one MLS', async () => {
    const first = await report(bis3Tdd({ receiver: TAXSIM_DK, role: 'C3' }));
    expect(first.out.outcome).toBe('delivered');
    await mlsFor(first.instanceId);
    await taxsim.idle();
    const reports = taxsim.ledger.size;
    const mlsCount = reporterStore.records.length;
    const again = await sendAs4Message(first.message, first.url, {
      apCertificateAuthorities: [pki.apCa.certificate],
      receiverCertificate: taxsimKey.certificate,
    });
    expect(again.outcome).toBe('delivered');
    await taxsim.idle();
    expect(taxsim.ledger.size).toBe(reports);
    expect(reporterStore.records.length).toBe(mlsCount);
    // The C2 report of the first test and this C3 report are of one invoice: matched term by term.
    const c3 = taxsim.ledger.list().find((r) => r.sbdhInstanceId === first.instanceId)!;
    expect(taxsim.ledger.matchOf(c3)).toMatchObject({ status: 'matched', differences: [] });
  });

  it('answers 500 when told to, and the sender may retry', async () => {
    taxsim.faults.set({ mode: 'http-500', count: 1 });
    const { out } = await report(bis3Tdd({ receiver: TAXSIM_DK, reportType: 'resubmit' }));
    expect(out).toMatchObject({ outcome: 'retryable', httpStatus: 500 });
    const retried = await report(bis3Tdd({ receiver: TAXSIM_DK, reportType: 'resubmit' }));
    expect(retried.out.outcome).toBe('delivered');
    expect((await mlsFor(retried.instanceId)).mls.responseCode).toBe('AP');
  });

  it('refuses an AS4 body over its limit with a signed ebMS error (413) and judges nothing', async () => {
    const before = taxsim.ledger.size;
    const res = await fetch(taxsim.as4Url!, {
      method: 'POST',
      headers: { 'content-type': 'multipart/related; boundary=x; type="application/soap+xml"' },
      body: Buffer.alloc(3 * 1024 * 1024, 0x61),
    });
    expect(res.status).toBe(413);
    const text = await res.text();
    expect(text).toContain('EBMS:0004');
    expect(text).toContain('exceeds 2097152 bytes');
    expect(taxsim.ledger.size).toBe(before);
  });
});
