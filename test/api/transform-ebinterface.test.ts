import request from 'supertest';
import { readEbInterface, writeUbl } from '../../src/en16931';
import { parseXml } from '../../src/formats';
import { fullInvoice } from '../unit/transform/fixture';
import { corpusFile } from '../support/corpus';
import { expectContract } from '../support/contract';
import { createTestContext, type TestContext } from '../support/test-app';

const PATH = '/api/v1/generic/transform';
const EBI_61 = 'http://www.ebinterface.at/schema/6p1/';
const q = (params: Record<string, string>): string => `?${new URLSearchParams(params).toString()}`;

describe('POST /api/v1/generic/transform with ebInterface', () => {
  let ctx: TestContext;
  let token: string;

  beforeAll(async () => {
    ctx = await createTestContext('transform-ebinterface');
    await ctx.core.directory.createTenant({ id: 'tenantE', name: 'E' });
    token = await ctx.token(await ctx.createClient(['tenantE']));
  });
  afterAll(async () => ctx.close());

  const post = (body: Buffer | string, query: string) =>
    request(ctx.app).post(`${PATH}${query}`).auth(token, { type: 'bearer' }).type('application/xml').send(body);

  it(
    'converts EN 16931 UBL to ebInterface 6.1 (its namespace as target URN) with the report counts in ' + 'headers',
    async () => {
      const res = await post(writeUbl(fullInvoice()).xml, q({ targetFormat: EBI_61 }));
      expect(res.status).toBe(200);
      expectContract('post', PATH, res);
      expect(res.headers['x-transform-source-format']).toBe('en16931-ubl-invoice');
      expect(res.headers['x-transform-target-format']).toBe('ebinterface-6.1');
      expect(Number(res.headers['x-transform-not-carried'])).toBeGreaterThan(0);
      const back = readEbInterface(parseXml(res.text));
      expect(back.invoice.number).toBe('INV-2026-0042');
      expect(back.invoice.totals.amountDueForPayment).toBe('200.00');
    },
  );

  it(
    'answers 422 with the rule for an ebInterface sample whose totals are not EN 16931, and 400 for ebInterface ' +
      '4.x',
    async () => {
      const res = await post(
        corpusFile('ebinterface/ebinterface/ebi61/ebinterface_6p1_sample_ph1.xml'),
        q({ targetFormat: 'en16931-ubl', report: 'true' }),
      );
      expect(res.status).toBe(422);
      expectContract('post', PATH, res);
      expect(res.body).toMatchObject({
        code: 'UNPROCESSABLE',
        reason: 'CANNOT_CONVERT',
        invalid: [{ term: 'BT-115', path: '/Invoice/Details/BelowTheLineItem' }],
      });
      const old = await post(
        corpusFile('ebinterface/ebinterface/ebi43/example-ebi43.xml'),
        q({ targetFormat: 'en16931-ubl' }),
      );
      expect(old.status).toBe(400);
      expectContract('post', PATH, old);
      expect(old.body).toMatchObject({ reason: 'TRANSFORMATION_NOT_SUPPORTED' });
    },
  );
});
