import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { readUbl, readCii, writeCii } from '../../src/en16931';
import { fullInvoice } from '../unit/transform/fixture';
import { CII_URN, PEPPOL_BIS3, XRECHNUNG_3 } from '../../src/formats/format-ids';
import { extractFromPdf, parseXml } from '../../src/formats';
import { corpusFile, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { expectContract } from '../support/contract';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';

const PATH = '/api/v1/generic/transform';
const q = (params: Record<string, string>): string => `?${new URLSearchParams(params).toString()}`;

interface Problem {
  code: string;
  detail: string;
  reason?: string;
  missing?: Array<{ rule: string; terms: string[] }>;
}

describe('POST /api/v1/generic/transform', () => {
  let ctx: TestContext;
  let token: string;

  beforeAll(async () => {
    ctx = await createTestContext('transform');
    await ctx.core.directory.createTenant({ id: 'tenantT', name: 'T' });
    token = await ctx.token(await ctx.createClient(['tenantT']));
  });
  afterAll(async () => ctx.close());

  const post = (body: Buffer | string, query: string, type = 'application/xml') =>
    request(ctx.app).post(`${PATH}${query}`).auth(token, { type: 'bearer' }).type(type).send(body);

  it('needs a token', async () => {
    const res = await request(ctx.app)
      .post(`${PATH}${q({ targetFormat: CII_URN })}`)
      .type('application/xml')
      .send(corpusFile(SAMPLE_UBL_INVOICE));
    expect(res.status).toBe(401);
    expectContract('post', PATH, res);
  });

  it('converts UBL to CII (the spec’s CII URN) and answers the XML with the report counts in headers', async () => {
    const res = await post(corpusFile(SAMPLE_UBL_INVOICE), q({ targetFormat: CII_URN }));
    expect(res.status).toBe(200);
    expectContract('post', PATH, res);
    expect(res.headers['content-type']).toMatch(/^application\/xml/);
    expect(res.headers['x-transform-source-format']).toBe('en16931-ubl-invoice');
    expect(res.headers['x-transform-target-format']).toBe('en16931-cii');
    expect(res.headers['x-transform-unmapped']).toBe('0');
    expect(res.headers['x-transform-not-carried']).toBe('0');
    const cii = readCii(parseXml(res.text));
    const ubl = readUbl(parseXml(corpusFile(SAMPLE_UBL_INVOICE)));
    expect(cii.invoice.number).toBe(ubl.invoice.number);
    expect(cii.invoice.totals).toEqual(ubl.invoice.totals);
  });

  it('converts CII to Peppol BIS 3 (the spec’s BIS URN, # encoded as %23), filling BT-23 and saying so', async () => {
    const inv = fullInvoice();
    delete inv.processControl.businessProcessType;
    const ok = await post(
      writeCii(inv).xml,
      `?targetFormat=${encodeURIComponent(PEPPOL_BIS3)}&targetSyntax=UBL&report=true`,
    );
    expect(ok.status).toBe(200);
    expectContract('post', PATH, ok);
    const body = ok.body as {
      document: string;
      report: { target: { id: string; customizationId: string }; filled: string[]; changed: string[] };
    };
    expect(body.report.target).toMatchObject({ id: 'peppol-bis3-ubl-invoice', customizationId: PEPPOL_BIS3 });
    expect(body.report.filled).toEqual([expect.stringContaining('BT-23')]);
    expect(body.document).toContain(`<cbc:CustomizationID>${PEPPOL_BIS3}</cbc:CustomizationID>`);
  });

  it('refuses Peppol BIS 3 for a document without the data Peppol requires', async () => {
    const res = await post(
      corpusFile(SAMPLE_CII_INVOICE),
      `?targetFormat=${encodeURIComponent(PEPPOL_BIS3)}&targetSyntax=UBL&report=true`,
    );
    // The EN 16931 example has neither a buyer reference nor an order reference nor electronic addresses: Peppol
    // refuses.
    expect(res.status).toBe(422);
    expectContract('post', PATH, res);
    const body = res.body as Problem;
    expect(body).toMatchObject({ code: 'UNPROCESSABLE', reason: 'CANNOT_CONVERT' });
    expect(body.missing!.map((m) => m.rule)).toEqual(
      expect.arrayContaining(['PEPPOL-EN16931-R020', 'PEPPOL-EN16931-R010']),
    );
  });

  it('answers the JSON report on Accept: application/json, listing what could not be carried over', async () => {
    const xml = corpusFile(SAMPLE_UBL_INVOICE)
      .toString('utf8')
      .replace('</cbc:IssueDate>', '</cbc:IssueDate><cbc:IssueTime>10:00:00</cbc:IssueTime>');
    const res = await post(xml, q({ targetFormat: 'en16931-cii' })).set('Accept', 'application/json');
    expect(res.status).toBe(200);
    expectContract('post', PATH, res);
    expect(res.headers['x-transform-unmapped']).toBe('1');
    const body = res.body as {
      document: string;
      report: { unmapped: unknown[]; source: { id: string }; target: { id: string } };
    };
    expect(body.report.unmapped).toEqual([{ path: '/Invoice/cbc:IssueTime', text: '10:00:00' }]);
    expect(body.report.target.id).toBe('en16931-cii');
    expect(body.document).toContain('<rsm:CrossIndustryInvoice');
  });

  it('takes sourceFormat and a Factur-X PDF', async () => {
    const res = await post(
      corpusFile('facturx/mustang/EN16931_Einfach.pdf'),
      q({ targetFormat: 'en16931-ubl', report: 'true' }),
      'application/pdf',
    );
    expect(res.status).toBe(200);
    expect((res.body as { report: { source: { id: string } } }).report.source.id).toBe('facturx-en16931');
    const forced = await post(
      corpusFile(SAMPLE_UBL_INVOICE),
      q({ targetFormat: CII_URN, sourceFormat: 'urn:cen.eu:en16931:2017' }),
    );
    expect(forced.status).toBe(200);
    const wrong = await post(corpusFile(SAMPLE_UBL_INVOICE), q({ targetFormat: CII_URN, sourceFormat: CII_URN }));
    expect(wrong.status).toBe(400);
    expectContract('post', PATH, wrong);
  });

  it(
    '400 for a source it does not recognise, an unsupported transformation, a missing or unknown ' + 'targetFormat',
    async () => {
      const unknown = await post('<Thing xmlns="urn:example"/>', q({ targetFormat: CII_URN }));
      expect(unknown.status).toBe(400);
      expectContract('post', PATH, unknown);
      expect((unknown.body as Problem).code).toBe('UNKNOWN_FORMAT');

      const minimum = await post(corpusFile(SAMPLE_UBL_INVOICE), q({ targetFormat: 'facturx-minimum' }));
      expect(minimum.status).toBe(400);
      expectContract('post', PATH, minimum);
      expect(minimum.body).toMatchObject({ code: 'BAD_REQUEST', reason: 'TRANSFORMATION_NOT_SUPPORTED' });
      expect((minimum.body as Problem).detail).toContain('MINIMUM and BASIC WL');

      const fattura = await post(
        corpusFile('ebinterface/ebinterface/ebi61/ebinterface_6p1 SEPA Direct Debit.xml'),
        q({ targetFormat: 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2' }),
      );
      expect(fattura.body).toMatchObject({ status: 400, reason: 'TRANSFORMATION_NOT_SUPPORTED' });

      const missing = await post(corpusFile(SAMPLE_UBL_INVOICE), '');
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ reason: 'TARGET_FORMAT_MISSING' });

      const bogus = await post(corpusFile(SAMPLE_UBL_INVOICE), q({ targetFormat: 'urn:example:none' }));
      expect(bogus.body).toMatchObject({ status: 400, reason: 'UNKNOWN_TARGET_FORMAT' });

      const xxe = await post(
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><Invoice ' +
          'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">&e;</Invoice>',
        q({ targetFormat: CII_URN }),
      );
      expect(xxe.status).toBe(400);
      expect(JSON.stringify(xxe.body)).not.toContain('root:');
    },
  );

  it(
    'answers a Factur-X target with the PDF/A-3 itself, or with report=true the PDF in base64 beside the XML and ' +
      'the report',
    async () => {
      const source = writeCii(fullInvoice()).xml;
      const res = await post(source, q({ targetFormat: 'facturx-en16931' }))
        .buffer(true)
        .parse((r, cb) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => cb(null, Buffer.concat(chunks)));
        });
      expect(res.status).toBe(200);
      expectContract('post', PATH, res);
      expect(res.headers['content-type']).toBe('application/pdf');
      expect(res.headers['x-transform-target-format']).toBe('facturx-en16931');
      const pdf = res.body as Buffer;
      expect(pdf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.7');
      const embedded = extractFromPdf(pdf);
      expect(embedded.filename).toBe('factur-x.xml');
      expect(readCii(parseXml(embedded.xml)).invoice.number).toBe(fullInvoice().number);

      const json = await post(source, q({ targetFormat: 'facturx-xrechnung', report: 'true' }));
      // The fixture has everything the XRechnung rules require (as for xrechnung-cii).
      expect(json.status).toBe(200);
      expectContract('post', PATH, json);
      const body = json.body as {
        document: string;
        documentEncoding: string;
        contentType: string;
        xml: string;
        report: { target: { id: string; container: string; attachment: string } };
      };
      expect(body).toMatchObject({
        documentEncoding: 'base64',
        contentType: 'application/pdf',
        report: { target: { id: 'facturx-xrechnung', container: 'pdf', attachment: 'xrechnung.xml' } },
      });
      const back = extractFromPdf(Buffer.from(body.document, 'base64'));
      expect(back.filename).toBe('xrechnung.xml');
      expect(back.xml.toString('utf8')).toBe(body.xml);

      // The fixture has terms BASIC cannot hold (contacts, item descriptions, ...): 422, nothing dropped.
      const refused = await post(source, q({ targetFormat: 'facturx-basic' }));
      expect(refused.status).toBe(422);
      expectContract('post', PATH, refused);
      expect(refused.body).toMatchObject({ reason: 'CANNOT_CONVERT' });
    },
  );

  it(
    'converts FatturaPA to EN 16931 CII and an EN 16931 invoice to FatturaPA, and names what an Italian buyer ' +
      'needs (422)',
    async () => {
      const fpa = readFileSync(path.join(__dirname, '../unit/transform/fatturapa/goods-22.xml'));
      const toCii = await post(fpa, q({ targetFormat: 'en16931-cii', report: 'true' }));
      expect(toCii.status).toBe(200);
      expectContract('post', PATH, toCii);
      expect(toCii.headers['x-transform-source-format']).toBe('fatturapa-1.2');
      const body = toCii.body as { document: string; report: { unmapped: Array<{ path: string }> } };
      expect(Number(toCii.headers['x-transform-unmapped'])).toBe(body.report.unmapped.length);
      expect(readCii(parseXml(body.document)).invoice).toMatchObject({
        number: 'FT-2026/17',
        seller: { vatIdentifier: 'IT01234567890' },
        buyer: { electronicAddress: { value: 'ABC1234', schemeId: '0205' } },
      });

      const toFpa = await post(
        writeCii(fullInvoice()).xml,
        q({ targetFormat: 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2' }),
      );
      expect(toFpa.status).toBe(200);
      expectContract('post', PATH, toFpa);
      expect(toFpa.headers['x-transform-target-format']).toBe('fatturapa-1.2');
      expect(Number(toFpa.headers['x-transform-not-carried'])).toBeGreaterThan(0);
      expect(toFpa.text).toContain(
        '<p:FatturaElettronica xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2"',
      );

      const italian = fullInvoice();
      italian.buyer.postalAddress = { line1: 'Corso Italia 5', city: 'Roma', postCode: '00185', countryCode: 'IT' };
      const refused = await post(writeCii(italian).xml, q({ targetFormat: 'fatturapa-1.2' }));
      expect(refused.status).toBe(422);
      expectContract('post', PATH, refused);
      expect((refused.body as Problem).missing).toEqual([
        expect.objectContaining({ rule: 'FatturaPA 1.1.4', terms: ['BT-49', 'BT-49-1'] }),
      ]);
    },
  );

  it('422 names the XRechnung data a plain EN 16931 invoice lacks', async () => {
    const res = await post(corpusFile(SAMPLE_UBL_INVOICE), q({ targetFormat: XRECHNUNG_3 }));
    expect(res.status).toBe(422);
    expectContract('post', PATH, res);
    const body = res.body as Problem;
    expect(body.missing!.map((m) => m.rule)).toContain('BR-DE-15');
    expect(body.detail).toContain('XRechnung');
  });

  it('415 for other media types, and stores nothing', async () => {
    const res = await request(ctx.app)
      .post(`${PATH}${q({ targetFormat: CII_URN })}`)
      .auth(token, { type: 'bearer' })
      .type('application/json')
      .send('{}');
    expect(res.status).toBe(415);
    expectContract('post', PATH, res);
    const counts = async () => [
      await ctx.core.db.models.Document.countDocuments(),
      await ctx.core.db.connection.db!.collection('documents.files').countDocuments(),
    ];
    const before = await counts();
    expect((await post(corpusFile(SAMPLE_UBL_INVOICE), q({ targetFormat: CII_URN }))).status).toBe(200);
    expect(await counts()).toEqual(before);
    expect((ctx.workflows as RecordingWorkflowStarter).started).toEqual([]);
  });
});
