/**
 * Tax reporting end to end on real servers (Temporal dev server, the gateway's API and worker, a local SML zone and
 * SMP, AS4 over loopback) with taxsim as the Danish tax authority's access point. The gateway serves a Danish seller
 * and a Danish buyer (two tenants); the seller's invoice goes to the buyer over Peppol. The seller's invoice is
 * reported as C2 and the buyer's received invoice as C3, each a Tax Data Document sent over AS4 to taxsim, which
 * validates it with the official rules, matches the two and answers with an MLS that ends each report in
 * TaxReportSent and lands on the invoice's status. A taxsim 5xx is retried (TaxReportRetry); a rejection ends the
 * report in TaxReportError while the invoice is still delivered.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import { peppolParticipant, spidOfSeatId } from '../../src/peppol/identifiers';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import { ApKeyRing } from '../../src/peppol/pki/key-ring';
import { RecipientLookup } from '../../src/peppol/recipient-lookup';
import { createDnsResolver } from '../../src/peppol/sml';
import { SmpClient } from '../../src/peppol/smp-client';
import { BILLING_PROCESS, BIS3_INVOICE, MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../../src/peppol/smp-publisher';
import { VIDA_TDD_DOCUMENT_TYPE_ID, VIDA_TDD_PROCESS_ID } from '../../src/reporting/tdd';
import { startTaxsim, TAXSIM_SEAT_ID, TDD_DOCUMENT_TYPE, TDD_PROCESS, type RunningTaxsim } from '../../src/taxsim';
import { corpusFile } from '../support/corpus';
import {
  eventOf,
  startNetworkGateway,
  startPeppolNetwork,
  type NetworkGateway,
  type PeppolNetwork,
} from '../support/peppol/gateway-network';
import { apSubject, issueCertificate } from '../support/peppol/test-pki';
import { requireEnv } from '../support/services';
import { requirePacks, validator } from '../unit/validation/support';

jest.setTimeout(240_000);

const ZONE = 'participant.sml.taxreporting.test';
const BIS3 = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';
const SELLER = '0184:DK12345678';
const BUYER = '0184:DK87654321';
const SELLERS = 'tenantTaxSellers';
const BUYERS = 'tenantTaxBuyers';
const TAXSIM_DK = '0242:000950-taxsim.tax_dk';
const FAST: RetrySchedule = { kind: 'table', delaysMs: [300, 300] };

/** The BIS 3 example with its own invoice number (BT-1): each invoice is a report of its own at the authority. */
function invoice(number: string): Buffer {
  const xml = corpusFile(BIS3).toString('utf8');
  const out = xml.replace(/<cbc:ID>[^<]*<\/cbc:ID>/, `<cbc:ID>${number}</cbc:ID>`);
  if (out === xml) throw new Error('BT-1 not replaced');
  return Buffer.from(out, 'utf8');
}

describe('tax reporting: C2 and C3 reports of an invoice at taxsim (real Temporal, DNS, SMP and AS4)', () => {
  const { temporalAddress } = requireEnv();
  let net: PeppolNetwork;
  let gw: NetworkGateway;
  let taxsim: RunningTaxsim;
  let taxsimKey: KeyMaterial;
  let sellerToken: string;
  let buyerToken: string;

  beforeAll(async () => {
    requirePacks(['peppol-vida-tdd-xsd', 'peppol-vida-tdd']);
    net = await startPeppolNetwork(ZONE);
    const { pki } = net;
    taxsimKey = await issueCertificate(pki.apCa, { subject: apSubject(TAXSIM_SEAT_ID) });
    taxsim = await startTaxsim({
      participants: { DK: TAXSIM_DK },
      validator: validator(),
      peppol: {
        keys: new ApKeyRing([taxsimKey]),
        apCertificateAuthorities: [pki.apCa.certificate],
        lookup: new RecipientLookup({
          zone: ZONE,
          resolver: createDnsResolver({ servers: [net.dns.address], timeoutMs: 2000, tries: 2 }),
          client: new SmpClient({
            smpCertificateAuthorities: [pki.smpCa.certificate],
            apCertificateAuthorities: [pki.apCa.certificate],
            timeoutMs: 2000,
          }),
        }),
        mlsRetryDelaysMs: [300, 300],
      },
    });
    const config = path.join(net.dir, 'tax-reporting.json');
    writeFileSync(
      config,
      JSON.stringify({
        version: '1.0.0',
        serviceProviderId: '000001',
        documentTypeId: VIDA_TDD_DOCUMENT_TYPE_ID,
        processId: VIDA_TDD_PROCESS_ID,
        authorities: { DK: { id: 'DK', name: 'Skattestyrelsen', receiver: TAXSIM_DK, roles: ['C2', 'C3'] } },
      }),
    );
    gw = await startNetworkGateway(net, {
      name: 'taxreporting',
      temporalAddress,
      key: 'ap-sender',
      schedule: FAST,
      env: { TAX_REPORTING_CONFIG: config, TAX_REPORT_ACK_TIMEOUT_MINUTES: '5' },
    });
    // The buyer's invoices and our service provider's MLS come to the gateway; the Danish TDDs to taxsim.
    net.publish(peppolParticipant(BUYER), BIS3_INVOICE, BILLING_PROCESS, gw.as4Url, pki.apSender.certificate);
    net.publish(spidOfSeatId('POP000001'), MLS_DOCUMENT_TYPE, MLS_PROCESS, gw.as4Url, pki.apSender.certificate);
    net.publish(peppolParticipant(TAXSIM_DK), TDD_DOCUMENT_TYPE, TDD_PROCESS, taxsim.as4Url!, taxsimKey.certificate);
    const d = gw.ctx.core.directory;
    await d.createTenant({ id: SELLERS, name: 'Sellers' });
    await d.createTenant({ id: BUYERS, name: 'Buyers' });
    await d.createParty({ tenantId: SELLERS, partyId: SELLER, legalEntityId: 'DK:S', name: 'Company A' });
    await d.createParty({ tenantId: BUYERS, partyId: BUYER, legalEntityId: 'DK:B', name: 'Company B' });
    sellerToken = await gw.ctx.token(await gw.ctx.createClient([SELLERS]));
    buyerToken = await gw.ctx.token(await gw.ctx.createClient([BUYERS]));
  }, 600_000);

  afterAll(async () => {
    await gw?.stop();
    await taxsim?.stop();
    await net?.stop();
  });

  async function send(number: string): Promise<string> {
    const sent = await request(gw.ctx.app)
      .post(`/api/v1/${SELLER}/salesInvoice/send`)
      .auth(sellerToken, { type: 'bearer' })
      .set('Content-Type', 'application/xml')
      .send(invoice(number));
    expect(sent.status).toBe(200);
    return sent.body.id as string;
  }

  async function status(partyId: string, token: string, kind: string, documentId: string) {
    const res = await request(gw.ctx.app)
      .get(`/api/v1/${partyId}/${kind}/${documentId}/status`)
      .auth(token, { type: 'bearer' });
    expect(res.status).toBe(200);
    return res.body as {
      state: string;
      taxReport?: { step: string; report: number; reportType: string; detail?: string };
    };
  }

  it('reports a sent invoice (C2) and the received one (C3); taxsim accepts and matches both', async () => {
    const salesId = await send('TAX-1');
    await eventOf(gw.ctx, 'InvoiceSent', (e) => e.documentId === salesId);
    const c2 = await eventOf(gw.ctx, 'TaxReportSent', (e) => e.documentId === salesId);
    expect(c2.details).toMatchObject({
      role: 'C2',
      country: 'DK',
      authority: `iso6523-actorid-upis::${TAXSIM_DK}`,
      outcome: 'accepted',
      statusCode: 'AP',
    });
    // The buyer's received invoice is reported too, with the same Invoice UUID (TDT-017) as the seller's report.
    const c3 = await eventOf(
      gw.ctx,
      'TaxReportSent',
      (e) => e.details?.['role'] === 'C3' && e.details['invoiceUuid'] === c2.details?.['invoiceUuid'],
    );
    expect(c3.details).toMatchObject({ role: 'C3', country: 'DK', outcome: 'accepted', statusCode: 'AP' });
    const purchaseId = c3.documentId!;
    const received = await eventOf(gw.ctx, 'InvoiceReceived', (e) => e.documentId === purchaseId);
    expect(received.details).toMatchObject({ id: purchaseId });
    // One invoice, two reports: taxsim matches them term by term.
    expect(taxsim.ledger.match(c2.details!['invoiceUuid']!)).toMatchObject({ status: 'matched' });

    const sales = await status(SELLER, sellerToken, 'salesInvoice', salesId);
    expect(sales.state).toBe('delivered');
    expect(sales.taxReport).toMatchObject({ step: 'accepted' });
    expect(sales.taxReport?.detail).toMatch(/accepted by the tax authority .*MLS AP/);
    const purchase = await status(BUYER, buyerToken, 'purchaseInvoice', purchaseId);
    expect(purchase.taxReport).toMatchObject({ step: 'accepted' });
    // The report itself is the seller's document, as taxsim received it.
    const tdd = await request(gw.ctx.app)
      .get(`/api/v1/${SELLER}/generic/${c2.details!['reportDocumentId']}/download`)
      .auth(sellerToken, { type: 'bearer' });
    expect(tdd.status).toBe(200);
    const atTaxsim = taxsim.ledger
      .list()
      .find((r) => r.facts?.invoiceUuid === c2.details!['invoiceUuid'] && r.facts?.role === 'C2');
    // The SBD carries the document without its XML declaration and final newline; the rest is what was stored.
    expect(atTaxsim?.xml).toBe(tdd.text.replace(/^<\?xml[^>]*\?>\s*/, '').trimEnd());
    expect(atTaxsim?.verdict).toBe('accepted');
  });

  it('retries a report taxsim answers with 500, then it is accepted', async () => {
    taxsim.faults.set({ mode: 'http-500', count: 1 });
    const salesId = await send('TAX-2');
    const retry = await eventOf(gw.ctx, 'TaxReportRetry', (e) => e.documentId === salesId);
    expect(retry.details).toMatchObject({ role: 'C2', outcome: 'retry' });
    expect(retry.details?.['reason']).toMatch(/500/);
    const sent = await eventOf(gw.ctx, 'TaxReportSent', (e) => e.documentId === salesId);
    expect(sent.details).toMatchObject({ outcome: 'accepted', attempt: '2' });
  });

  it('a rejection ends the report in TaxReportError while the invoice is still delivered', async () => {
    // Only the seller's report: the buyer's report of an earlier invoice may reach taxsim at any time.
    taxsim.faults.set({ mode: 'reject', reason: 'Seller not registered for VAT reporting', count: 1, role: 'C2' });
    const salesId = await send('TAX-3');
    const error = await eventOf(gw.ctx, 'TaxReportError', (e) => e.documentId === salesId);
    expect(error.details).toMatchObject({ role: 'C2', outcome: 'rejected', statusCode: 'RE' });
    expect(error.details?.['reason']).toContain('Seller not registered for VAT reporting');
    await eventOf(gw.ctx, 'InvoiceSent', (e) => e.documentId === salesId);
    const sales = await status(SELLER, sellerToken, 'salesInvoice', salesId);
    expect(sales.state).toBe('delivered');
    expect(sales.taxReport).toMatchObject({ step: 'rejected' });
  });

  it('reports again through the API: a submit after a rejection, a resubmit, a disregard (C2 and C3)', async () => {
    taxsim.faults.set({ mode: 'reject', reason: 'Temporarily refusing reports', count: 1, role: 'C2' });
    const salesId = await send('TAX-4');
    const rejected = await eventOf(gw.ctx, 'TaxReportError', (e) => e.documentId === salesId);
    expect(rejected.details).toMatchObject({ role: 'C2', outcome: 'rejected', report: '1' });
    const ask = (partyId: string, token: string, kind: string, documentId: string, reportType: string) =>
      request(gw.ctx.app)
        .post(`/api/v1/${partyId}/${kind}/${documentId}/taxReport`)
        .auth(token, { type: 'bearer' })
        .send({ reportType });
    /** Asks for report n of the sales invoice and waits for its verdict. */
    const reportAgain = async (reportType: string, n: number) => {
      const started = await ask(SELLER, sellerToken, 'salesInvoice', salesId, reportType);
      expect({ status: started.status, ...started.body }).toMatchObject({ status: 202, report: n, reportType });
      const verdict = await eventOf(
        gw.ctx,
        'TaxReportSent',
        (e) => e.documentId === salesId && e.details?.['report'] === String(n),
      );
      return verdict.details!;
    };
    // What was rejected is submitted again: report 2, an S, which taxsim now accepts.
    expect((await ask(SELLER, sellerToken, 'salesInvoice', salesId, 'resubmit')).status).toBe(409);
    const submitted = await reportAgain('submit', 2);
    expect(submitted).toMatchObject({ reportType: 'submit', outcome: 'accepted', statusCode: 'AP' });
    const invoiceUuid = submitted['invoiceUuid']!;
    expect(await reportAgain('resubmit', 3)).toMatchObject({
      reportType: 'resubmit',
      invoiceUuid,
      outcome: 'accepted',
    });
    expect(await reportAgain('disregard', 4)).toMatchObject({
      reportType: 'disregard',
      invoiceUuid,
      outcome: 'accepted',
    });
    const c2AtTaxsim = taxsim.ledger
      .list()
      .filter((r) => r.facts?.invoiceUuid === invoiceUuid && r.facts.role === 'C2')
      .map((r) => [r.facts?.typeCode, r.verdict]);
    // taxsim lists the newest first.
    expect(c2AtTaxsim.reverse()).toEqual([
      ['S', 'rejected'],
      ['S', 'accepted'],
      ['R', 'accepted'],
      ['D', 'accepted'],
    ]);
    expect((await ask(SELLER, sellerToken, 'salesInvoice', salesId, 'resubmit')).body.detail).toContain(
      'nothing follows a disregard',
    );
    const sales = await status(SELLER, sellerToken, 'salesInvoice', salesId);
    expect(sales.state).toBe('delivered');
    expect(sales.taxReport).toMatchObject({ step: 'accepted', report: 4, reportType: 'disregard' });

    // The buyer's side: its received invoice's C3 report, disregarded through the purchase invoice.
    const c3 = await eventOf(
      gw.ctx,
      'TaxReportSent',
      (e) => e.details?.['role'] === 'C3' && e.details['invoiceUuid'] === invoiceUuid,
    );
    const res = await ask(BUYER, buyerToken, 'purchaseInvoice', c3.documentId!, 'disregard');
    expect(res.status).toBe(202);
    const c3Disregarded = await eventOf(
      gw.ctx,
      'TaxReportSent',
      (e) => e.documentId === c3.documentId && e.details?.['report'] === '2',
    );
    expect(c3Disregarded.details).toMatchObject({ role: 'C3', reportType: 'disregard', outcome: 'accepted' });
  });
});
