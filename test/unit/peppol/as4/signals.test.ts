import { X509Certificate } from 'node:crypto';
import { EbmsError } from '../../../../src/peppol/as4/ebms-error';
import { buildPeppolMessage, openPeppolMessage } from '../../../../src/peppol/as4/message';
import { buildErrorSignal, buildReceipt, describeEbmsCode, readSignal } from '../../../../src/peppol/as4/signals';
import type { SignatureReference } from '../../../../src/peppol/as4/signature';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../../../src/peppol/identifiers';
import {
  apSubject,
  createIntermediateCa,
  createRootCa,
  issueCertificate,
  type TestPki,
} from '../../../support/peppol/test-pki';
import type { KeyMaterial } from '../../../../src/peppol/pki/key-material';
import { buildSbd } from '../../../../src/peppol/sbdh';
import { SAMPLE_UBL_INVOICE, corpusFile, requireCorpus } from '../../../support/corpus';
import { readDump } from '../../../support/peppol/as4-corpus';
import { testPki } from '../../../support/peppol/pki-fixture';

const INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
const BILLING = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
const header = {
  sender: peppolParticipant('0088:1'),
  receiver: peppolParticipant('0088:2'),
  documentType: INVOICE,
  process: BILLING,
};

let pki: TestPki;
let foreign: KeyMaterial;
beforeAll(async () => {
  pki = await testPki();
  const root = await createRootCa({ subject: 'C=NL, O=Elsewhere, CN=Foreign Root' });
  foreign = await issueCertificate(
    await createIntermediateCa(root, { subject: 'C=NL, O=Elsewhere, CN=Foreign AP CA' }),
    { subject: apSubject('POP000002') },
  );
}, 120_000);

function ebms(fn: () => unknown): EbmsError {
  try {
    fn();
  } catch (e) {
    if (e instanceof EbmsError) return e;
    throw e;
  }
  throw new Error('expected an ebMS error');
}

function exchange() {
  const sbd = buildSbd({ ...header, countryC1: 'NL', payload: { xml: corpusFile(SAMPLE_UBL_INVOICE) } }).xml;
  const sent = buildPeppolMessage({
    sbd,
    header,
    signer: pki.apSender,
    receiverCertificate: pki.apReceiver.certificate,
  });
  const received = openPeppolMessage(sent.contentType, sent.body, {
    keyFor: (c: X509Certificate) =>
      c.fingerprint256 === pki.apReceiver.certificate.fingerprint256 ? pki.apReceiver.privateKey : undefined,
    apCertificateAuthorities: [pki.apCa.certificate],
  });
  return { sent, received };
}

const readOpts = (sent: { messageId: string; references: SignatureReference[] }) => ({
  sentMessageId: sent.messageId,
  sentReferences: sent.references,
  apCertificateAuthorities: [pki.apCa.certificate],
});

describe('non-repudiation receipts', () => {
  it('the receiver’s signed receipt returns exactly what the sender signed', () => {
    const { sent, received } = exchange();
    const receipt = buildReceipt(received.userMessage.messageId, received.references, pki.apReceiver);
    const r = readSignal(receipt, readOpts(sent));
    if (r.kind !== 'receipt') throw new Error('expected a receipt');
    expect(r.refToMessageId).toBe(sent.messageId);
    expect(r.references).toEqual(sent.references);
    expect(r.signerCertificate.fingerprint256).toBe(pki.apReceiver.certificate.fingerprint256);
  });

  it('refuses a receipt for another message, with other references, by an untrusted signer, or altered (EBMS:0302)', () => {
    const { sent, received } = exchange();
    const other = buildReceipt('someone-else@x', received.references, pki.apReceiver);
    expect(ebms(() => readSignal(other, readOpts(sent))).message).toMatch(/answers someone-else@x/);

    const wrongRefs = received.references.map((r, i) =>
      i === 2 ? { ...r, digestValue: Buffer.alloc(32).toString('base64') } : r,
    );
    const lying = buildReceipt(sent.messageId, wrongRefs, pki.apReceiver);
    const e = ebms(() => readSignal(lying, readOpts(sent)));
    expect([e.ebmsCode, e.message]).toEqual([
      'EBMS:0302',
      expect.stringMatching(/does not return what was signed \(missing: cid:.*; unexpected: cid:/),
    ]);

    const untrusted = buildReceipt(sent.messageId, received.references, foreign);
    expect(ebms(() => readSignal(untrusted, readOpts(sent))).message).toMatch(/receipt signer is not accepted/);

    const altered = buildReceipt(sent.messageId, received.references, pki.apReceiver).replace(
      /(<eb:Timestamp>)[^<]+/,
      '$12000-01-01T00:00:00.000Z',
    );
    expect(ebms(() => readSignal(altered, readOpts(sent))).message).toMatch(/receipt signature is not valid/);
  });
});

describe('error signals', () => {
  it('carries the ebMS code, description and detail (PEPPOL:NOT_SERVICED)', () => {
    const err = new EbmsError('EBMS:0004', 'the receiver is not served here', { errorDetail: 'PEPPOL:NOT_SERVICED' });
    const xml = buildErrorSignal('m1@x', err, pki.apReceiver);
    const r = readSignal(xml, {
      sentMessageId: 'm1@x',
      sentReferences: [],
      apCertificateAuthorities: [pki.apCa.certificate],
    });
    expect(r).toEqual({
      kind: 'error',
      refToMessageId: 'm1@x',
      signed: true,
      errors: [
        {
          errorCode: 'EBMS:0004',
          severity: 'failure',
          shortDescription: 'Other',
          category: 'Content',
          description: 'the receiver is not served here',
          errorDetail: 'PEPPOL:NOT_SERVICED',
          refToMessageInError: 'm1@x',
        },
      ],
    });
    expect(describeEbmsCode('EBMS:0303')?.shortDescription).toBe('DecompressionFailure');
    expect(describeEbmsCode('EBMS:9999')).toBeUndefined();
  });
});

requireCorpus('as4/received-receipts');
describe('receipts of other access points', () => {
  it('reads them up to the trust decision: their G2 signer is not one of our CAs', () => {
    const body = readDump('as4/received-receipts/governikus.as4in').body;
    const sentReferences = [
      {
        uri: '#phase4-msg-d3361660-1069-4e19-bb10-1e99f888febc',
        transforms: ['http://www.w3.org/2001/10/xml-exc-c14n#'],
        inclusivePrefixes: [],
        digestMethod: 'http://www.w3.org/2001/04/xmlenc#sha256',
        digestValue: 'IXej+yqOYl2EECU+plH0R0PweMqYVGsO+3jQ0M6RcBU=',
      },
    ];
    const e = ebms(() =>
      readSignal(body, {
        sentMessageId: '6b52b4c0-de6a-46b8-8286-27bac7d1a463@phase4',
        sentReferences,
        apCertificateAuthorities: [pki.apCa.certificate],
        now: new Date('2022-03-07T17:41:30Z'),
      }),
    );
    expect(e.message).toMatch(/receipt signer is not accepted: .*POP000260.*not issued by a configured CA/);
    const wrongId = ebms(() =>
      readSignal(body, { sentMessageId: 'x', sentReferences, apCertificateAuthorities: [pki.apCa.certificate] }),
    );
    expect(wrongId.message).toMatch(/answers 6b52b4c0/);
  });
});
