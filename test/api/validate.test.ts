import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { corpusFile } from '../support/corpus';
import { expectContract } from '../support/contract';
import { createTestContext, type TestContext } from '../support/test-app';

const PATH = '/api/v1/generic/validate';
const NLCIUS_OK = 'nlcius/si-ubl-2.0.3/SI-UBL-2.0_ok_full.xml';
const NLCIUS_BR_NL_10 = 'nlcius/si-ubl-2.0.3/SI-UBL-2.0_BR-NL-10_error_empty.xml';

interface Result {
  isValid: boolean;
  format: { id: string; name: string; customizationId?: string };
  ruleSets: Array<{ id: string; version: string; outcome: string }>;
  assertions: Array<{
    artifact: string;
    flag: string;
    ruleId: string;
    location: string;
    text: string;
    reasonCode: string;
  }>;
}

describe('POST /api/v1/generic/validate', () => {
  let ctx: TestContext;
  let token: string;

  beforeAll(async () => {
    ctx = await createTestContext('validate');
    await ctx.core.directory.createTenant({ id: 'tenantV', name: 'V' });
    token = await ctx.token(await ctx.createClient(['tenantV']));
  });
  afterAll(async () => ctx.close());

  const post = (body: Buffer | string, type = 'application/xml', query = '') =>
    request(ctx.app).post(`${PATH}${query}`).auth(token, { type: 'bearer' }).type(type).send(body);

  it('needs a token', async () => {
    const res = await request(ctx.app).post(PATH).type('application/xml').send(corpusFile(NLCIUS_OK));
    expect(res.status).toBe(401);
    expectContract('post', PATH, res);
  });

  it('validates an NLCIUS invoice with schema + NLCIUS and says it is valid', async () => {
    const res = await post(corpusFile(NLCIUS_OK));
    expect(res.status).toBe(200);
    expectContract('post', PATH, res);
    const body = res.body as Result;
    expect(body.isValid).toBe(true);
    expect(body.format).toMatchObject({
      id: 'nlcius-ubl-invoice',
      customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:nen.nl:nlcius:v1.0',
    });
    expect(body.ruleSets).toEqual([
      { id: 'ubl-2.1', version: '2.1', outcome: 'passed' },
      { id: 'si-ubl-2.0', version: '2.0.3.12', outcome: 'passed' },
    ]);
    expect(body.assertions).toEqual([]);
  });

  it('answers a failed validation as data: 200 with isValid false and BV / BW assertions', async () => {
    const res = await post(corpusFile(NLCIUS_BR_NL_10));
    expect(res.status).toBe(200);
    expectContract('post', PATH, res);
    const body = res.body as Result;
    expect(body.isValid).toBe(false);
    expect(body.assertions).toContainEqual(
      expect.objectContaining({ artifact: 'business-rules', flag: 'error', ruleId: 'BR-NL-10', reasonCode: 'BV' }),
    );
    expect(body.assertions.some((a) => a.reasonCode === 'BW' && a.flag === 'warning')).toBe(true);
  });

  it('reports an amount in scientific notation as SV, not a valid xs:decimal', async () => {
    const xml = corpusFile(NLCIUS_OK)
      .toString('utf8')
      .replace(/(<cbc:PayableAmount currencyID="EUR">)[^<]*</, '$11.21E2<');
    const res = await post(xml);
    expect(res.status).toBe(200);
    const body = res.body as Result;
    expect(body.isValid).toBe(false);
    expect(body.assertions).toEqual([
      expect.objectContaining({
        artifact: 'schema',
        reasonCode: 'SV',
        ruleId: 'XSD-DECIMAL-NOTATION',
        location: '/Invoice/cac:LegalMonetaryTotal/cbc:PayableAmount',
      }),
    ]);
    expect(body.assertions[0]!.text).toContain('Invalid payload');
    expect(body.ruleSets.map((s) => s.outcome)).toEqual(['failed', 'not-run']);
  });

  it('takes a Factur-X PDF and validates the embedded XML against its profile', async () => {
    const res = await post(corpusFile('facturx/mustang/EN16931_Einfach.pdf'), 'application/pdf');
    expect(res.status).toBe(200);
    expectContract('post', PATH, res);
    expect(res.body).toMatchObject({ isValid: true, format: { id: 'facturx-en16931' } });
  });

  it('honours sourceFormat and ruleSet', async () => {
    const res = await post(
      corpusFile(NLCIUS_OK),
      'text/xml',
      `?sourceFormat=${encodeURIComponent('urn:cen.eu:en16931:2017#compliant#urn:fdc:nen.nl:nlcius:v1.0')}&ruleSet=en16931-ubl@1.3.16`,
    );
    expect(res.status).toBe(200);
    expect((res.body as Result).ruleSets).toEqual([{ id: 'en16931-ubl', version: '1.3.16', outcome: 'passed' }]);
    const wrong = await post(corpusFile(NLCIUS_OK), 'application/xml', '?ruleSet=en16931-ubl@1.0.0');
    expect(wrong.status).toBe(400);
    expectContract('post', PATH, wrong);
    expect((wrong.body as { detail: string }).detail).toContain('pinned at version 1.3.16');
  });

  it('refuses SI-UBL 1.2 with 400 naming NLCIUS and BIS 3', async () => {
    const res = await post(corpusFile('nlcius/si-ubl-1.2-rejected/SI-UBL-INV-1.2-error-BII2-T10-R008.xml'));
    expect(res.status).toBe(400);
    expectContract('post', PATH, res);
    expect(res.body).toMatchObject({ code: 'UNKNOWN_FORMAT' });
    expect((res.body as { detail: string }).detail).toMatch(/NLCIUS.*BIS Billing 3\.0/s);
  });

  it.each([
    [
      'XRechnung 2.3',
      'facturx/mustang/ubl-selfbilled-01.20a-INVOICE_ubl.xml',
      /XRechnung 2\.3 is retired: .*since 1 February 2024.*Send XRechnung 3\.0/s,
    ],
    [
      'XRechnung 2.2 extension',
      'facturx/mustang/ubl/04.01a-INVOICE_ubl.xml',
      /XRechnung 2\.2 is retired: .*since 1 August 2023.*Send XRechnung 3\.0/s,
    ],
    [
      'ZUGFeRD 1.0 (PDF)',
      'facturx/mustang/zugferd_invoice.pdf',
      /ZUGFeRD 1\.0 .*since 1 January 2025.*Send Factur-X 1\.0 \/ ZUGFeRD 2\.x/s,
    ],
  ])('refuses %s with 400 naming the version, its end date and what to send', async (_name, file, detail) => {
    const res = await post(corpusFile(file), file.endsWith('.pdf') ? 'application/pdf' : 'application/xml');
    expect(res.status).toBe(400);
    expectContract('post', PATH, res);
    expect(res.body).toMatchObject({ code: 'UNKNOWN_FORMAT' });
    expect((res.body as { detail: string }).detail).toMatch(detail);
  });

  it('refuses a body that is not XML, unsafe XML, and other media types', async () => {
    const notXml = await post('this is not xml');
    expect(notXml.status).toBe(400);
    expectContract('post', PATH, notXml);
    const xxe = await post(
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><Invoice ' +
        'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">&e;</Invoice>',
    );
    expect(xxe.status).toBe(400);
    expect(JSON.stringify(xxe.body)).not.toContain('root:');
    const json = await request(ctx.app).post(PATH).auth(token, { type: 'bearer' }).type('application/json').send('{}');
    expect(json.status).toBe(415);
    expectContract('post', PATH, json);
  });

  it('answers 501 for a recognised format without pinned rules', async () => {
    const cii = corpusFile('en16931/cii-examples/CII_example1.xml')
      .toString('utf8')
      .replace(
        /(<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>)[^<]*/,
        '$1urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
      );
    const res = await post(cii);
    expect(res.status).toBe(501);
    expectContract('post', PATH, res);
    expect((res.body as { detail: string }).detail).toContain('Peppol BIS Billing 3.0 CII');
  });
});

describe('POST /api/v1/generic/validate without the rule packs', () => {
  let ctx: TestContext;
  let token: string;
  let empty: string;

  beforeAll(async () => {
    empty = mkdtempSync(path.join(os.tmpdir(), 'no-rules-'));
    ctx = await createTestContext('validatenorules', { env: { RULES_CACHE_DIR: empty } });
    await ctx.core.directory.createTenant({ id: 'tenantW', name: 'W' });
    token = await ctx.token(await ctx.createClient(['tenantW']));
  });
  afterAll(async () => {
    await ctx.close();
    rmSync(empty, { recursive: true, force: true });
  });

  it('refuses with 503 and names the missing pack', async () => {
    const res = await request(ctx.app)
      .post(PATH)
      .auth(token, { type: 'bearer' })
      .type('application/xml')
      .send(corpusFile(NLCIUS_OK));
    expect(res.status).toBe(503);
    expectContract('post', PATH, res);
    expect(res.body).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE', reason: 'RULE_PACK_MISSING' });
    expect(['ubl-2.1', 'si-ubl-2.0']).toContain((res.body as { pack: string }).pack);
    expect((res.body as { detail: string }).detail).toContain('npm run rules:fetch');
  });
});
