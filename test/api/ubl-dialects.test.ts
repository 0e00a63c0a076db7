import request from 'supertest';
import { readUbl } from '../../src/en16931';
import { parseXml } from '../../src/formats';
import { svefakturaInvoice } from '../unit/transform/dialect-fixtures';
import { expectContract } from '../support/contract';
import { createTestContext, type TestContext } from '../support/test-app';

const PATH = '/api/v1/generic/transform';

/** The dialect conversions through the endpoint: Svefaktura 1.0 → BIS 3, and the table's refusal of PINT Japan. */
describe('POST /api/v1/generic/transform with UBL dialects', () => {
  let ctx: TestContext;
  let token: string;

  beforeAll(async () => {
    ctx = await createTestContext('transform-dialects');
    await ctx.core.directory.createTenant({ id: 'tenantD', name: 'D' });
    token = await ctx.token(await ctx.createClient(['tenantD']));
  });
  afterAll(async () => ctx.close());

  const post = (body: string, query: string) =>
    request(ctx.app).post(`${PATH}${query}`).auth(token, { type: 'bearer' }).type('application/xml').send(body);

  it('converts a Svefaktura 1.0 invoice to Peppol BIS 3 and reports what it derived and left unmapped', async () => {
    const res = await post(svefakturaInvoice(), '?targetFormat=peppol-bis3-ubl&report=true');
    expect(res.status).toBe(200);
    expectContract('post', PATH, res);
    expect(res.headers['x-transform-source-format']).toBe('svefaktura-1.0');
    expect(res.headers['x-transform-target-format']).toBe('peppol-bis3-ubl-invoice');
    expect(res.headers['x-transform-unmapped']).toBe('3');
    const body = res.body as { document: string; report: { filled: string[] } };
    expect(body.report.filled).toEqual(
      expect.arrayContaining([expect.stringMatching(/^BT-34 Seller electronic address = 0088:/)]),
    );
    const inv = readUbl(parseXml(body.document)).invoice;
    expect(inv.processControl.specificationIdentifier).toBe(
      'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
    );
    expect(inv.totals.amountDueForPayment).toBe('6250.00');
  });

  it('answers 400 for a PINT jurisdiction the table refuses, and 422 for PINT A-NZ without A-NZ content', async () => {
    const jp = await post(svefakturaInvoice(), '?targetFormat=pint-jp-ubl');
    expect(jp.status).toBe(400);
    expectContract('post', PATH, jp);
    expect(jp.body).toMatchObject({ code: 'BAD_REQUEST', reason: 'TRANSFORMATION_NOT_SUPPORTED' });
    const aunz = await post(svefakturaInvoice(), '?targetFormat=pint-aunz-ubl');
    expect(aunz.status).toBe(422);
    expectContract('post', PATH, aunz);
    expect(aunz.body).toMatchObject({ code: 'UNPROCESSABLE', reason: 'CANNOT_CONVERT' });
  });
});
