/**
 * The receiver's processing without HTTP or a database: receipts, duplicate detection by MessageId and by SBDH
 * InstanceIdentifier, resends of a rebuilt message with stable ids, refusals (signed ebMS errors) and storage failures.
 */
import type { X509Certificate } from 'node:crypto';
import { parseXml } from '../../../../src/formats/xml/secure-parser';
import { buildPeppolMessage } from '../../../../src/peppol/as4/message';
import { stableMessageIds } from '../../../../src/peppol/as4/message-ids';
import { As4Receiver, type As4ReceiverOptions, type StoredInbound } from '../../../../src/peppol/as4/receiver';
import { readSignal } from '../../../../src/peppol/as4/signals';
import { verifyEnvelopeSignature, type SignatureReference } from '../../../../src/peppol/as4/signature';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../../../src/peppol/identifiers';
import { buildMls } from '../../../../src/peppol/mls';
import { NS } from '../../../../src/formats/xml/namespaces';
import { ApKeyRing } from '../../../../src/peppol/pki/key-ring';
import { RevocationChecker } from '../../../../src/peppol/pki/revocation';
import { apSubject, issueCertificate, type TestPki } from '../../../support/peppol/test-pki';
import { HEADER, RECEIVER, message, sbd } from '../../../support/as4-messages';
import { MemoryInboundStore } from '../../../support/peppol/memory-inbound-store';
import { startCrlServer, type CrlServer } from '../../../support/peppol/crl-server';
import { testPki } from '../../../support/peppol/pki-fixture';

let pki: TestPki;
beforeAll(async () => {
  pki = await testPki();
}, 120_000);

const HOUR = 3_600_000;

function setup(
  over: Partial<
    Pick<
      As4ReceiverOptions,
      'now' | 'onStored' | 'onStoredFailed' | 'revocation' | 'onRevocationUnknown' | 'findMlsOwner'
    >
  > = {},
): { receiver: As4Receiver; store: MemoryInboundStore } {
  const store = new MemoryInboundStore();
  const receiver = new As4Receiver({
    keys: new ApKeyRing([pki.apReceiver]),
    apCertificateAuthorities: [pki.apCa.certificate],
    store,
    findParty: async (p) =>
      p.value.toLowerCase() === RECEIVER.value ? { tenantId: 't1', partyId: RECEIVER.value } : null,
    maxDecompressedBytes: 10 * 1024 * 1024,
    duplicateWindowMs: 24 * HOUR,
    ...over,
  });
  return { receiver, store };
}

const signalOpts = (msg: { messageId: string; references: SignatureReference[] }, cas: X509Certificate[]) => ({
  sentMessageId: msg.messageId,
  sentReferences: msg.references,
  apCertificateAuthorities: cas,
});

describe('AS4 receiver', () => {
  it('stores the SBD with its header data and answers a receipt the sender accepts', async () => {
    const { receiver, store } = setup();
    const doc = sbd({ instanceIdentifier: 'inst-1' });
    const msg = message(pki, { sbd: doc });
    const a = await receiver.receive(msg.contentType, msg.body);
    expect([a.status, a.outcome, a.contentType]).toEqual([200, 'stored', 'application/soap+xml;charset=UTF-8']);
    expect(store.records).toHaveLength(1);
    const r = store.records[0] as StoredInbound;
    expect(r).toMatchObject({
      messageId: msg.messageId,
      instanceId: 'inst-1',
      tenantId: 't1',
      partyId: RECEIVER.value,
      fromSeatId: 'POP000001',
      toSeatId: 'POP000002',
      countryC1: 'NL',
      size: doc.length,
    });
    expect(r.documentType).toBe(`${HEADER.documentType.scheme}::${HEADER.documentType.value}`);
    expect(store.blobs.get(r.blobId)?.equals(doc)).toBe(true);
    const signal = readSignal(a.body, signalOpts(msg, [pki.apCa.certificate]));
    expect(signal.kind).toBe('receipt');
  });

  it('answers a repeated message with the stored receipt and stores nothing again', async () => {
    const { receiver, store } = setup();
    const msg = message(pki);
    const first = await receiver.receive(msg.contentType, msg.body);
    const again = await receiver.receive(msg.contentType, msg.body);
    expect(again.outcome).toBe('duplicate');
    expect(again.body).toBe(first.body);
    expect(store.records).toHaveLength(1);
  });

  it('confirms a rebuilt resend with stable ids through the stored receipt (same digests, new ciphertext)', async () => {
    const { receiver, store } = setup();
    const ids = stableMessageIds('tenant-a:doc-1');
    const doc = sbd({ instanceIdentifier: 'inst-stable' });
    const build = () =>
      buildPeppolMessage({
        sbd: doc,
        header: HEADER,
        signer: pki.apSender,
        receiverCertificate: pki.apReceiver.certificate,
        timestamp: new Date('2026-01-02T03:04:05.000Z'),
        ...ids,
      });
    const first = build();
    const second = build();
    expect(second.body.equals(first.body)).toBe(false);
    expect(second.references).toEqual(first.references);
    await receiver.receive(first.contentType, first.body);
    const again = await receiver.receive(second.contentType, second.body);
    expect(again.outcome).toBe('duplicate');
    expect(readSignal(again.body, signalOpts(second, [pki.apCa.certificate])).kind).toBe('receipt');
    expect(store.records).toHaveLength(1);
  });

  it('confirms a resend rebuilt with new ids under the same MessageId with a receipt for what it signed', async () => {
    const { receiver, store } = setup();
    const doc = sbd();
    const first = message(pki, { sbd: doc, messageId: 'same@x' });
    const rebuilt = message(pki, { sbd: doc, messageId: 'same@x' });
    expect(rebuilt.references).not.toEqual(first.references);
    const a = await receiver.receive(first.contentType, first.body);
    const b = await receiver.receive(rebuilt.contentType, rebuilt.body);
    expect(b.outcome).toBe('duplicate');
    expect(b.body).not.toBe(a.body);
    expect(readSignal(b.body, signalOpts(rebuilt, [pki.apCa.certificate])).kind).toBe('receipt');
    expect(store.records).toHaveLength(1);
  });

  it('treats the same document (sender + InstanceIdentifier) in a new message as a duplicate, and refuses other content under that id', async () => {
    const { receiver, store } = setup();
    const doc = sbd({ instanceIdentifier: 'inst-2' });
    const original = message(pki, { sbd: doc });
    await receiver.receive(original.contentType, original.body);
    const copy = message(pki, { sbd: doc });
    const a = await receiver.receive(copy.contentType, copy.body);
    expect(a.outcome).toBe('duplicate');
    expect(readSignal(a.body, signalOpts(copy, [pki.apCa.certificate])).kind).toBe('receipt');

    const other = message(pki, {
      sbd: sbd({ instanceIdentifier: 'inst-2', creationDateAndTime: '2020-01-01T00:00:00Z' }),
    });
    const b = await receiver.receive(other.contentType, other.body);
    expect([b.outcome, b.ebmsCode, b.description]).toEqual([
      'refused',
      'EBMS:0004',
      expect.stringMatching(/InstanceIdentifier inst-2 of this sender was already received/),
    ]);
    expect(store.records).toHaveLength(1);
  });

  it('refuses a MessageId reused after the duplicate window', async () => {
    let now = new Date();
    const { receiver, store } = setup({ now: () => now });
    const msg = message(pki);
    await receiver.receive(msg.contentType, msg.body);
    now = new Date(now.getTime() + 25 * HOUR);
    const late = await receiver.receive(msg.contentType, msg.body);
    expect([late.outcome, late.ebmsCode, late.description]).toEqual([
      'refused',
      'EBMS:0004',
      expect.stringMatching(/already used on .*must be unique/),
    ]);
    expect(store.records).toHaveLength(1);
  });

  it('refuses a receiver it does not serve with PEPPOL:NOT_SERVICED, signed, referring to the message', async () => {
    const { receiver, store } = setup();
    const header = { ...HEADER, receiver: peppolParticipant('0088:1111111111111') };
    const msg = message(pki, { header, sbd: sbd({ receiver: header.receiver }) });
    const a = await receiver.receive(msg.contentType, msg.body);
    expect([a.status, a.ebmsCode]).toEqual([200, 'EBMS:0004']);
    const signal = readSignal(a.body, signalOpts(msg, [pki.apCa.certificate]));
    expect(signal).toMatchObject({
      kind: 'error',
      signed: true,
      refToMessageId: msg.messageId,
      errors: [{ errorCode: 'EBMS:0004', errorDetail: 'PEPPOL:NOT_SERVICED' }],
    });
    // The error signal's signature verifies with our certificate.
    expect(verifyEnvelopeSignature(parseXml(a.body), []).certificate.fingerprint256).toBe(
      pki.apReceiver.certificate.fingerprint256,
    );
    expect(store.records).toHaveLength(0);
  });

  describe('MLS addressed to our own service provider id (0242 + our Seat ID digits)', () => {
    const OUR_SPID = peppolParticipant('0242:000002');
    const MLS_HEADER = {
      sender: peppolParticipant('0242:000001'),
      receiver: OUR_SPID,
      documentType: documentTypeId(
        DOCTYPE_SCHEME_BUSDOX,
        'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1',
      ),
      process: processId(PROCESS_SCHEME, 'urn:peppol:edec:mls'),
    };
    const owners = new Map([['inst-we-sent', { tenantId: 't7', partyId: '0106:70707070' }]]);
    const findMlsOwner = (id: string) => Promise.resolve(owners.get(id) ?? null);

    function mlsMessage(referencedInstanceId: string, header: typeof MLS_HEADER = MLS_HEADER) {
      const xml = buildMls({
        responseCode: 'AP',
        referencedInstanceId,
        sender: MLS_HEADER.sender,
        receiver: OUR_SPID,
      }).xml;
      const doc = sbd({
        ...header,
        payload: {
          xml: Buffer.from(xml),
          root: { namespaceURI: NS.ublApplicationResponse, localName: 'ApplicationResponse' },
        },
      });
      return message(pki, { header, sbd: doc });
    }

    const refusal = (a: { body: string }, msg: { messageId: string; references: SignatureReference[] }) =>
      readSignal(a.body, signalOpts(msg, [pki.apCa.certificate]));

    it("stores an MLS that answers a message we sent as the document of that message's party", async () => {
      const { receiver, store } = setup({ findMlsOwner });
      const msg = mlsMessage('inst-we-sent');
      const a = await receiver.receive(msg.contentType, msg.body);
      expect([a.status, a.outcome]).toEqual([200, 'stored']);
      expect(store.records[0]).toMatchObject({
        tenantId: 't7',
        partyId: '0106:70707070',
        receiver: 'iso6523-actorid-upis::0242:000002',
      });
    });

    it('refuses, naming why, an MLS about no message of ours, and any other document sent to our SPID', async () => {
      const { receiver, store } = setup({ findMlsOwner });
      const unknown = mlsMessage('inst-nobody-sent');
      const a = await receiver.receive(unknown.contentType, unknown.body);
      expect([a.status, a.ebmsCode]).toEqual([200, 'EBMS:0004']);
      expect(refusal(a, unknown)).toMatchObject({
        kind: 'error',
        errors: [{ errorCode: 'EBMS:0004', errorDetail: 'PEPPOL:NOT_SERVICED' }],
      });
      expect(JSON.stringify(refusal(a, unknown))).toContain(
        'inst-nobody-sent, which is no message this access point sent',
      );

      const header = { ...HEADER, receiver: OUR_SPID };
      const invoice = message(pki, { header, sbd: sbd({ receiver: OUR_SPID }) });
      const b = await receiver.receive(invoice.contentType, invoice.body);
      expect(b.ebmsCode).toBe('EBMS:0004');
      expect(JSON.stringify(refusal(b, invoice))).toContain('receives message-level status only');

      // Without a way to find the message answered (no sent-message records), an MLS to our SPID is refused too.
      const { receiver: bare } = setup();
      const known = mlsMessage('inst-we-sent');
      expect((await bare.receive(known.contentType, known.body)).ebmsCode).toBe('EBMS:0004');
      expect(store.records).toHaveLength(0);
    });
  });

  it('starts processing only after storing, retries a failed start on a resend, and never withholds the receipt', async () => {
    const starts: string[] = [];
    const failures: string[] = [];
    let failStart = true;
    const { receiver, store } = setup({
      onStored: async (s) => {
        expect(store.records.some((r) => r.messageId === s.messageId)).toBe(true);
        starts.push(s.messageId);
        if (failStart) throw new Error('Temporal unavailable');
      },
      onStoredFailed: (s, e) => failures.push(`${s.messageId}: ${(e as Error).message}`),
    });
    const msg = message(pki);
    const first = await receiver.receive(msg.contentType, msg.body);
    expect(first.outcome).toBe('stored');
    expect(failures).toEqual([`${msg.messageId}: Temporal unavailable`]);
    failStart = false;
    const again = await receiver.receive(msg.contentType, msg.body);
    expect(again.outcome).toBe('duplicate');
    expect(starts).toEqual([msg.messageId, msg.messageId]);
    // A refused message starts nothing.
    const refused = await receiver.receive('text/plain', Buffer.from('x'));
    expect(refused.outcome).toBe('refused');
    expect(starts).toHaveLength(2);
  });

  it('answers 503 with EBMS:0202 when the message cannot be stored, and accepts it on the next attempt', async () => {
    const { receiver, store } = setup();
    const msg = message(pki);
    store.failNext = true;
    const a = await receiver.receive(msg.contentType, msg.body);
    expect([a.status, a.ebmsCode, a.description]).toEqual([
      503,
      'EBMS:0202',
      'the message could not be stored, try again later',
    ]);
    // The cause is kept for the log, not told to the peer.
    expect((a.internalError as Error).message).toBe('database unavailable');
    expect(a.body).not.toContain('database unavailable');
    expect(store.records).toHaveLength(0);
    expect((await receiver.receive(msg.contentType, msg.body)).outcome).toBe('stored');
  });

  describe('with revocation checks (CRLs from a local server)', () => {
    let crl: CrlServer;
    beforeAll(async () => {
      crl = await startCrlServer();
    });
    afterAll(async () => {
      await crl?.close();
    });
    beforeEach(() => crl.files.set('/ap-ca.crl', pki.crls.apCa));
    const checker = (failureMode: 'hard' | 'soft' = 'hard') =>
      new RevocationChecker({ dispatcher: crl.dispatcher, timeoutMs: 2000, failureMode });

    it('stores a message whose signer is not revoked and says it checked', async () => {
      const { receiver, store } = setup({ revocation: checker() });
      const msg = message(pki);
      const a = await receiver.receive(msg.contentType, msg.body);
      expect([a.outcome, a.revocationChecked]).toEqual(['stored', true]);
      expect(store.records).toHaveLength(1);
      expect(crl.hits.get('/ap-ca.crl')).toBeGreaterThanOrEqual(1);
      // Without a checker the answer says revocation was not checked.
      const plain = await setup().receiver.receive(msg.contentType, msg.body);
      expect([plain.outcome, plain.revocationChecked]).toEqual(['stored', false]);
    });

    it('refuses a message signed with a revoked certificate (EBMS:0101, signed, nothing stored), also under soft fail', async () => {
      for (const mode of ['hard', 'soft'] as const) {
        const { receiver, store } = setup({ revocation: checker(mode) });
        const msg = message(pki, { signer: pki.apRevoked });
        const a = await receiver.receive(msg.contentType, msg.body);
        expect([a.status, a.outcome, a.ebmsCode]).toEqual([200, 'refused', 'EBMS:0101']);
        expect(a.description).toMatch(
          /^sending access point certificate: .*POP000001.* was revoked on .* \(keyCompromise\)$/,
        );
        const signal = readSignal(a.body, signalOpts(msg, [pki.apCa.certificate]));
        expect(signal).toMatchObject({
          kind: 'error',
          signed: true,
          refToMessageId: msg.messageId,
          errors: [{ errorCode: 'EBMS:0101' }],
        });
        expect(store.records).toHaveLength(0);
        expect(store.blobs.size).toBe(0);
      }
    });

    it('refuses when the status cannot be determined (hard fail), accepts and reports it under soft fail', async () => {
      crl.files.set('/ap-ca.crl', 503);
      const msg = message(pki);
      const hard = setup({ revocation: checker('hard') });
      const a = await hard.receiver.receive(msg.contentType, msg.body);
      expect([a.outcome, a.ebmsCode]).toEqual(['refused', 'EBMS:0101']);
      expect(a.description).toMatch(/revocation status of .* cannot be determined: .*ap-ca\.crl: HTTP 503/);
      expect(hard.store.records).toHaveLength(0);

      const unknown: string[] = [];
      const soft = setup({ revocation: checker('soft'), onRevocationUnknown: (m) => unknown.push(m) });
      const b = await soft.receiver.receive(msg.contentType, msg.body);
      expect([b.outcome, b.revocationChecked]).toEqual(['stored', true]);
      expect(unknown).toEqual([expect.stringMatching(/HTTP 503/)]);
    });

    it('refuses an expired sender certificate before any CRL is fetched (EBMS:0101)', async () => {
      const expired = await issueCertificate(pki.apCa, {
        subject: apSubject('POP000001'),
        notBefore: new Date(Date.now() - 900 * 86_400_000),
        notAfter: new Date(Date.now() - 86_400_000),
        crlUrls: ['http://crl.test-pki.invoice-gateway.invalid/ap-ca.crl'],
      });
      crl.hits.clear();
      const { receiver, store } = setup({ revocation: checker() });
      const msg = message(pki, { signer: expired });
      const a = await receiver.receive(msg.contentType, msg.body);
      expect([a.outcome, a.ebmsCode]).toEqual(['refused', 'EBMS:0101']);
      expect(a.description).toMatch(/expired on/);
      expect(crl.hits.size).toBe(0);
      expect(store.records).toHaveLength(0);
    });
  });
});
