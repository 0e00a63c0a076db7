import path from 'node:path';
import request from 'supertest';
import { CII_URN } from '../../src/formats/format-ids';
import { createValidatorPool, type ValidatorPool } from '../../src/validation/pool';
import { corpusFile, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { createTestContext, type TestContext } from '../support/test-app';
import { requirePacks, RULES_DIR } from '../unit/validation/support';

/**
 * The generic endpoints with the API process's document pool (validation and conversion on worker threads) give the
 * same answers, byte for byte and problem for problem, as the same app doing that work in process.
 */

jest.setTimeout(300_000);

const WORKER = path.resolve(__dirname, '../support/validation-pool/worker.js');

describe('generic endpoints on the document pool', () => {
  let pooled: TestContext;
  let local: TestContext;
  let pool: ValidatorPool;
  let tokens: { pooled: string; local: string };

  beforeAll(async () => {
    requirePacks(['ubl-2.1', 'en16931-ubl', 'cii-d16b', 'en16931-cii']);
    pool = createValidatorPool({ rulesDir: RULES_DIR, size: 1, workerScript: WORKER });
    await pool.ready();
    pooled = await createTestContext('docpool', { documentWork: pool });
    local = await createTestContext('doclocal');
    tokens = { pooled: '', local: '' };
    for (const [k, ctx] of [
      ['pooled', pooled],
      ['local', local],
    ] as const) {
      await ctx.core.directory.createTenant({ id: 'tenantP', name: 'P' });
      tokens[k] = await ctx.token(await ctx.createClient(['tenantP']));
    }
  });
  afterAll(async () => {
    await pooled?.close();
    await local?.close();
    await pool?.close();
  });

  const both = async (path: string, body: Buffer | string) => {
    const send = (ctx: TestContext, token: string) =>
      request(ctx.app).post(path).auth(token, { type: 'bearer' }).type('application/xml').send(body);
    const [a, b] = await Promise.all([send(pooled, tokens.pooled), send(local, tokens.local)]);
    return { pooled: a, local: b };
  };
  const strip = (r: request.Response) => ({
    status: r.status,
    type: r.headers['content-type'],
    transform: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k.startsWith('x-transform-'))),
    // Problem bodies carry the request's own id and instance.
    body:
      r.type === 'application/problem+json'
        ? { ...r.body, requestId: undefined, instance: undefined, traceId: undefined }
        : r.type.includes('json')
          ? r.body
          : r.text,
  });

  it('converts on the pool exactly as in process: XML, report and problems', async () => {
    const cases: Array<[string, Buffer | string]> = [
      [`/api/v1/generic/transform?targetFormat=${encodeURIComponent(CII_URN)}`, corpusFile(SAMPLE_UBL_INVOICE)],
      ['/api/v1/generic/transform?targetFormat=en16931-ubl&report=true', corpusFile(SAMPLE_CII_INVOICE)],
      ['/api/v1/generic/transform?targetFormat=en16931-cii', '<Invoice><unclosed></Invoice>'],
      ['/api/v1/generic/transform?targetFormat=no-such-format', corpusFile(SAMPLE_UBL_INVOICE)],
      [
        '/api/v1/generic/transform?targetFormat=en16931-cii',
        corpusFile(SAMPLE_UBL_INVOICE)
          .toString('utf8')
          .replace(/<cbc:IssueDate>[^<]*</, '<cbc:IssueDate>not a date<'),
      ],
    ];
    const statuses: number[] = [];
    for (const [path, body] of cases) {
      const r = await both(path, body);
      expect({ path, ...strip(r.pooled) }).toEqual({ path, ...strip(r.local) });
      statuses.push(r.pooled.status);
    }
    expect(statuses).toEqual([200, 200, 400, 400, 422]);
    expect(pool.stats().completed).toBeGreaterThanOrEqual(5);
  });

  it('validates on the pool exactly as in process', async () => {
    const before = pool.stats().completed;
    for (const body of [
      corpusFile(SAMPLE_UBL_INVOICE),
      corpusFile(SAMPLE_UBL_INVOICE)
        .toString('utf8')
        .replace(/(<cbc:PayableAmount[^>]*>)[^<]*</, '$11.00<'),
    ]) {
      const r = await both('/api/v1/generic/validate', body);
      expect(strip(r.pooled)).toEqual(strip(r.local));
    }
    expect(pool.stats().completed).toBe(before + 2);
  });
});
