/**
 * Formats without a Peppol document type go out over Peppol as Peppol BIS Billing 3.0: a FatturaPA and an ebInterface
 * upload, on real servers (the Temporal dev server, the database, a local SML zone and SMP), delivered over AS4 to
 * phase4 (the reference Java implementation) on 127.0.0.1 as the receiving access point, which stores the SBD it got.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { XMLSerializer } from '@xmldom/xmldom';
import { detectFormat } from '../../src/formats';
import { parseSbd } from '../../src/peppol/sbdh';
import { corpusFile } from '../support/corpus';
import { Phase4Receiver, type HarnessKeys } from '../support/phase4-harness';
import {
  BIS3_INVOICE_TYPE,
  startSendingNetwork,
  type SendingNetwork,
  DELIVERED_AT_FIRST_ATTEMPT,
} from '../support/sending-network';
import { TEST_PKI_DIR } from '../support/peppol/pki-fixture';
import { validator } from '../unit/validation/support';

jest.setTimeout(120_000);

const ZONE = 'participant.sml.conversion.test';

/** Addressed to a public administration by its iPA office code (ICD 0201); the seller is the uploading party. */
const FATTURAPA = readFileSync(path.join(__dirname, '../unit/transform/fatturapa/mixed-natura-pa.xml'));
const FATTURAPA_SELLER = '0211:IT01234567890';
const FATTURAPA_BUYER = '0201:ufy9mh';
/** An ebInterface 6.0 invoice with the buyer's GLN (its Peppol address); the seller is the uploading party. */
const EBINTERFACE = Buffer.from(
  corpusFile('ebinterface/ebinterface/ebi60/ebinterface_6p0_sample_ph1.xml')
    .toString('utf8')
    .replace('<BillersInvoiceRecipientID>39494</BillersInvoiceRecipientID>', '')
    .replace(
      /(<InvoiceRecipient>[\s\S]*?<Address>)/,
      '$1<AddressIdentifier AddressIdentifierType="GLN">9012345000004</AddressIdentifier>',
    ),
);
const EBINTERFACE_SELLER = '9914:ATU00000006';
const EBINTERFACE_BUYER = '0088:9012345000004';

const keys = (entry: string): HarnessKeys => ({
  keystore: path.join(TEST_PKI_DIR, `${entry}.p12`),
  password: 'test',
  alias: entry,
  truststore: path.join(TEST_PKI_DIR, 'ap-truststore.p12'),
  apCa: path.join(TEST_PKI_DIR, 'ap-ca.crt.pem'),
});

describe('FatturaPA and ebInterface uploads are delivered over Peppol as BIS Billing 3 (phase4 receives)', () => {
  let net: SendingNetwork;
  let phase4: Phase4Receiver;
  let tmp: string;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'send-conversion-'));
    [net, phase4] = await Promise.all([
      startSendingNetwork({
        name: 'sendconversion',
        zone: ZONE,
        tenantId: 'tenantX',
        parties: [
          { partyId: FATTURAPA_SELLER, legalEntityId: `IT:${FATTURAPA_SELLER}` },
          { partyId: EBINTERFACE_SELLER, legalEntityId: `AT:${EBINTERFACE_SELLER}` },
        ],
      }),
      Phase4Receiver.start(keys('ap-receiver'), {
        outDir: path.join(tmp, 'phase4-in'),
        served: [FATTURAPA_BUYER, EBINTERFACE_BUYER],
      }),
    ]);
    // The buyers take BIS Billing 3 invoices only, at phase4's endpoint.
    net.publish(FATTURAPA_BUYER, phase4.url);
    net.publish(EBINTERFACE_BUYER, phase4.url);
    await net.startWorker();
  }, 300_000);

  afterAll(async () => {
    await Promise.all([net?.close(), phase4?.stop()]);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const cases = [
    { name: 'FatturaPA 1.2', bytes: FATTURAPA, seller: FATTURAPA_SELLER, buyer: FATTURAPA_BUYER, country: 'IT' },
    {
      name: 'ebInterface 6.0',
      bytes: EBINTERFACE,
      seller: EBINTERFACE_SELLER,
      buyer: EBINTERFACE_BUYER,
      country: 'AT',
    },
  ];

  it.each(cases)('$name: delivered, InvoiceSent names BIS 3, phase4 holds a valid BIS 3 UBL invoice', async (c) => {
    const id = await net.upload(c.seller, c.bytes);
    const status = await net.finalStatus(c.seller, id);
    expect(status.state).toBe('delivered');
    expect(status.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);

    const events = await net.eventsOf(c.seller, id);
    expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'InvoiceSent']);
    const sent = events[1]!;
    expect(sent.details).toMatchObject({
      protocol: 'peppol',
      recipient: c.buyer,
      endpoint: phase4.url,
      attempt: '1',
      targetDocumentTypeId: BIS3_INVOICE_TYPE.value,
    });
    expect(sent.message).toMatch(
      new RegExp(`^Delivered to ${c.buyer} over Peppol as Peppol BIS Billing 3\\.0, converted because the recipient`),
    );

    // What phase4 received: an SBD for the buyer from the seller, whose payload is a BIS 3 UBL invoice.
    const file = await phase4.received(sent.details['messageId']!);
    const sbd = parseSbd(readFileSync(file));
    expect([sbd.header.sender.value, sbd.header.receiver.value, sbd.header.countryC1]).toEqual([
      c.seller.toLowerCase(),
      c.buyer,
      c.country,
    ]);
    expect(sbd.header.documentType.value).toBe(BIS3_INVOICE_TYPE.value);
    if (sbd.payload.kind !== 'xml') throw new Error(`payload is ${sbd.payload.kind}`);
    const invoice = Buffer.from(new XMLSerializer().serializeToString(sbd.payload.element));
    expect(detectFormat(invoice)).toMatchObject({ id: 'peppol-bis3-ubl-invoice' });
    // BT-34 and BT-49 carry the routing addresses (Peppol identifiers compare without case).
    const endpoints = [...invoice.toString('utf8').matchAll(/<cbc:EndpointID schemeID="(\d{4})">([^<]+)</g)].map((m) =>
      `${m[1]}:${m[2]}`.toLowerCase(),
    );
    expect(endpoints).toEqual([c.seller.toLowerCase(), c.buyer.toLowerCase()]);
    const validation = await validator().validate(invoice);
    expect(validation.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    expect(validation.isValid).toBe(true);
  });
});
