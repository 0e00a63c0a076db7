/**
 * Interoperability with phase4, the reference Java AS4 implementation, over real sockets on 127.0.0.1, with the
 * project's test PKI: our sender → phase4's receiver and phase4's sender → our receiver (POST /as4 on the real app and
 * database). Messages are compressed, signed and encrypted both ways; receipts are verified on both sides (ours by
 * readSignal, phase4's by its own non-repudiation check). Error paths: unknown receiver, bad signature, wrong
 * certificate, duplicate.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sendAs4Message, type SendAs4Options } from '../../src/peppol/as4/sender';
import { peppolParticipant } from '../../src/peppol/identifiers';
import { parseSbd } from '../../src/peppol/sbdh';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import { writePkcs12 } from '../../src/peppol/pki/pkcs12';
import {
  apSubject,
  createIntermediateCa,
  createRootCa,
  issueCertificate,
  type TestPki,
} from '../support/peppol/test-pki';
import { HEADER, RECEIVER, message, rewrap, sbd } from '../support/as4-messages';
import { Phase4Receiver, Phase4Sender, type HarnessKeys } from '../support/phase4-harness';
import { createTestContext, type TestContext } from '../support/test-app';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';

jest.setTimeout(180_000);

const pkiFile = (name: string): string => path.join(TEST_PKI_DIR, name);
const keys = (entry: string): HarnessKeys => ({
  keystore: pkiFile(`${entry}.p12`),
  password: 'test',
  alias: entry,
  truststore: pkiFile('ap-truststore.p12'),
  apCa: pkiFile('ap-ca.crt.pem'),
});

let pki: TestPki;
let foreign: KeyMaterial;
let tmp: string;
let ctx: TestContext;
let server: Server;
let ourUrl: string;
let phase4In: Phase4Receiver;
let phase4Out: Phase4Sender;

beforeAll(async () => {
  pki = await testPki();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'as4-phase4-'));
  const root = await createRootCa({ subject: 'C=NL, O=Elsewhere, CN=Foreign Root' });
  const ca = await createIntermediateCa(root, { subject: 'C=NL, O=Elsewhere, CN=Foreign AP CA' });
  foreign = await issueCertificate(ca, { subject: apSubject('POP000001') });
  writeFileSync(
    path.join(tmp, 'foreign.p12'),
    writePkcs12({ password: 'test', key: { ...foreign, alias: 'foreign' } }),
  );

  ctx = await createTestContext('asfourphasefour', {
    env: {
      PEPPOL_AP_KEYSTORE: pkiFile('ap-receiver.p12'),
      PEPPOL_AP_KEYSTORE_PASSWORD: 'test',
      PEPPOL_AP_CA: pkiFile('ap-ca.crt.pem'),
    },
  });
  const tenant = await ctx.core.directory.createTenant({ name: 'receiving tenant' });
  await ctx.core.directory.createParty({
    tenantId: tenant._id,
    partyId: RECEIVER.value,
    legalEntityId: `NL:${RECEIVER.value}`,
    name: 'Receiver BV',
  });
  server = createServer(ctx.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  ourUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/as4`;

  // phase4 plays the receiving AP POP000002 on its own port, and the sending AP POP000001.
  [phase4In, phase4Out] = await Promise.all([
    Phase4Receiver.start(keys('ap-receiver'), { outDir: path.join(tmp, 'phase4-in'), served: [RECEIVER.value] }),
    Phase4Sender.start({ ...keys('ap-sender'), seatId: 'POP000001' }),
  ]);
}, 600_000);

afterAll(async () => {
  await Promise.all([phase4In?.stop(), phase4Out?.stop()]);
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  await ctx?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const sendOpts = (): SendAs4Options => ({
  apCertificateAuthorities: [pki.apCa.certificate],
  receiverCertificate: pki.apReceiver.certificate,
  timeoutMs: 60_000,
});

async function storedCount(): Promise<number> {
  return ctx.core.db.models.As4Inbound.countDocuments().exec();
}

describe('our sender → phase4 receiver', () => {
  it('delivers a compressed, signed, encrypted message; phase4 stores the SBD and its receipt verifies', async () => {
    const doc = sbd();
    const msg = message(pki, { sbd: doc });
    const out = await sendAs4Message(msg, phase4In.url, sendOpts());
    expect(out).toMatchObject({ outcome: 'delivered', httpStatus: 200, references: msg.references });
    expect(readFileSync(await phase4In.received(msg.messageId)).equals(doc)).toBe(true);

    // Sent again (an attempt whose answer was lost): phase4 recognises the MessageId.
    const again = await sendAs4Message(msg, phase4In.url, sendOpts());
    expect(again).toMatchObject({ outcome: 'duplicate', reason: expect.stringMatching(/duplicate/) });
  });

  it("delivers an SBDH with MLS_TO (our service provider id) and MLS_TYPE, which phase4's SBDH reader accepts", async () => {
    const doc = sbd({ mlsTo: peppolParticipant('0242:000001'), mlsType: 'ALWAYS_SEND' });
    const msg = message(pki, { sbd: doc });
    const out = await sendAs4Message(msg, phase4In.url, sendOpts());
    expect(out).toMatchObject({ outcome: 'delivered', httpStatus: 200 });
    const stored = readFileSync(await phase4In.received(msg.messageId)).toString('utf8');
    expect(stored).toContain('<sh:Type>MLS_TO</sh:Type><sh:InstanceIdentifier>0242:000001</sh:InstanceIdentifier>');
    expect(stored).toContain('<sh:Type>MLS_TYPE</sh:Type><sh:InstanceIdentifier>ALWAYS_SEND</sh:InstanceIdentifier>');
  });

  it('gets a permanent failure for an unknown receiver (EBMS:0004 PEPPOL:NOT_SERVICED)', async () => {
    const header = { ...HEADER, receiver: peppolParticipant('0088:1111111111111') };
    const out = await sendAs4Message(
      message(pki, { header, sbd: sbd({ receiver: header.receiver }) }),
      phase4In.url,
      sendOpts(),
    );
    expect(out).toMatchObject({
      outcome: 'failed',
      errors: [expect.objectContaining({ errorCode: 'EBMS:0004', errorDetail: 'PEPPOL:NOT_SERVICED' })],
    });
  });

  it('gets a permanent failure for a bad signature (a header changed after signing)', async () => {
    const msg = message(pki);
    const tampered = {
      ...msg,
      body: rewrap(msg, { soap: (x) => x.replace(/<eb:ConversationId>[^<]*</, '<eb:ConversationId>changed<') }),
    };
    const out = await sendAs4Message(tampered, phase4In.url, sendOpts());
    expect(out.outcome).toBe('failed');
    expect(out).toMatchObject({ reason: expect.stringMatching(/EBMS:01/) });
  });

  it('gets a permanent failure when signing with a certificate from another CA', async () => {
    const out = await sendAs4Message(message(pki, { signer: foreign }), phase4In.url, sendOpts());
    expect(out.outcome).toBe('failed');
    expect(out).toMatchObject({ reason: expect.stringMatching(/EBMS:01/) });
  });
});

describe('phase4 sender → our receiver', () => {
  const sbdFile = (name: string, doc: Buffer): string => {
    const file = path.join(tmp, name);
    writeFileSync(file, doc);
    return file;
  };

  it('receives, stores and receipts a phase4 message; phase4 verifies our receipt; a resend is a duplicate', async () => {
    const doc = sbd();
    const file = sbdFile('good.xml', doc);
    const before = await storedCount();
    const r = await phase4Out.send(ourUrl, pkiFile('ap-receiver.crt.pem'), file, 'phase4-good-1@phase4-test');
    expect(r).toMatchObject({ result: 'success', receiptCheck: 'RECEIPT_OK' });
    const record = await ctx.core.db.models.As4Inbound.findById('phase4-good-1@phase4-test').lean().exec();
    expect(record).toMatchObject({ fromSeatId: 'POP000001', toSeatId: 'POP000002', partyId: RECEIVER.value });
    // phase4 writes the SBD anew from what it read, so the stored bytes carry the same header, not the same bytes.
    const storedSbd = parseSbd(await ctx.core.db.blobs.read(record?.blobId as string)).header;
    const sentSbd = parseSbd(doc).header;
    expect([storedSbd.instanceIdentifier, storedSbd.sender, storedSbd.receiver, storedSbd.documentType]).toEqual([
      sentSbd.instanceIdentifier,
      sentSbd.sender,
      sentSbd.receiver,
      sentSbd.documentType,
    ]);

    // phase4 rebuilds the message for a resend; our receiver confirms it without storing it again.
    const again = await phase4Out.send(ourUrl, pkiFile('ap-receiver.crt.pem'), file, 'phase4-good-1@phase4-test');
    expect(again).toMatchObject({ result: 'success', receiptCheck: 'RECEIPT_OK' });
    expect(await storedCount()).toBe(before + 1);
  });

  it('refuses an unknown receiver with an ebMS error phase4 reports, and stores nothing', async () => {
    const before = await storedCount();
    const file = sbdFile('unknown.xml', sbd({ receiver: peppolParticipant('0088:1111111111111') }));
    const r = await phase4Out.send(ourUrl, pkiFile('ap-receiver.crt.pem'), file, 'phase4-unknown-1@phase4-test');
    // phase4 received our signed ebMS error (its detail is our answer).
    expect(r.result).toBe('as4-error-msg-received');
    expect(r.detail).toMatch(/errorCode="EBMS:0004".*PEPPOL:NOT_SERVICED/);
    expect(await storedCount()).toBe(before);
  });

  it('refuses a phase4 sender whose certificate is from another CA, and stores nothing', async () => {
    const before = await storedCount();
    const other = await Phase4Sender.start({
      ...keys('ap-sender'),
      keystore: path.join(tmp, 'foreign.p12'),
      alias: 'foreign',
      seatId: 'POP000001',
    });
    try {
      const r = await other.send(
        ourUrl,
        pkiFile('ap-receiver.crt.pem'),
        sbdFile('foreign.xml', sbd()),
        'phase4-foreign-1@phase4-test',
      );
      expect(r.result).toBe('as4-error-msg-received');
      expect(r.detail).toMatch(/errorCode="EBMS:0101".*not issued by a configured CA/);
    } finally {
      await other.stop();
    }
    expect(await storedCount()).toBe(before);
  });
});
