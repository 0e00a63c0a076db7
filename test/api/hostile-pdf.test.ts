import path from 'node:path';
import { deflateSync } from 'node:zlib';
import request from 'supertest';
import { createValidatorPool, type ValidatorPool } from '../../src/validation/pool';
import { createTestContext, type TestContext } from '../support/test-app';
import { RULES_DIR } from '../unit/validation/support';

/**
 * Uploads a hostile client sent to the generic endpoints: each is answered as a problem with its reason, in process
 * and on the API's document pool, and the API goes on answering. The first one once made V8 abort the API process.
 */

jest.setTimeout(120_000);

const WORKER = path.resolve(__dirname, '../support/validation-pool/worker.js');
const MB = 1024 * 1024;

function pdfWithAttachment(stored: Buffer, filter: string): Buffer {
  return Buffer.concat([
    Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Names << /EmbeddedFiles'),
    Buffer.from(' << /Names [(factur-x.xml) 2 0 R] >> >> >>\nendobj\n'),
    Buffer.from('2 0 obj\n<< /Type /Filespec /F (factur-x.xml) /EF << /F 3 0 R >> >>\nendobj\n'),
    Buffer.from(`3 0 obj\n<< /Type /EmbeddedFile /Filter ${filter} /Length ${stored.length} >>\nstream\n`),
    stored,
    Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
  ]);
}

const attrs = Array.from({ length: 250 }, (_, k) => `a${k}="1"`).join(' ');

const uploads: Array<[name: string, body: () => Buffer, type: string, status: number, reason: string]> = [
  [
    '24 MiB of ASCII85 z behind Flate in a 25 KB PDF',
    () => pdfWithAttachment(deflateSync(Buffer.alloc(24 * MB, 'z')), '[/FlateDecode /ASCII85Decode]'),
    'application/pdf',
    413,
    'PDF_ATTACHMENT_TOO_LARGE',
  ],
  [
    'a million attributes in 7.6 MB of XML',
    () => Buffer.from(`<r>${`<e ${attrs}/>`.repeat(4_000)}</r>`),
    'application/xml',
    400,
    'XML_TOO_MANY_ATTRIBUTES',
  ],
];

describe('hostile uploads to the generic endpoints', () => {
  let local: TestContext;
  let pooled: TestContext;
  let pool: ValidatorPool;
  const tokens = { local: '', pooled: '' };

  beforeAll(async () => {
    pool = createValidatorPool({ rulesDir: RULES_DIR, size: 1, workerScript: WORKER });
    await pool.ready();
    local = await createTestContext('hostilelocal');
    pooled = await createTestContext('hostilepool', { documentWork: pool });
    for (const [k, ctx] of [
      ['local', local],
      ['pooled', pooled],
    ] as const) {
      await ctx.core.directory.createTenant({ id: 'tenantH', name: 'H' });
      tokens[k] = await ctx.token(await ctx.createClient(['tenantH']));
    }
  });
  afterAll(async () => {
    await local?.close();
    await pooled?.close();
    await pool?.close();
  });

  for (const where of ['local', 'pooled'] as const) {
    it.each(uploads)(`${where}: %s → a problem naming the reason, API up`, async (_n, body, type, status, reason) => {
      const ctx = where === 'local' ? local : pooled;
      const post = (p: string, b: Buffer, t: string) =>
        request(ctx.app).post(p).auth(tokens[where], { type: 'bearer' }).type(t).send(b);
      const bytes = body();
      for (const p of ['/api/v1/generic/validate', '/api/v1/generic/transform?targetFormat=en16931-ubl']) {
        const res = await post(p, bytes, type);
        expect(res.status).toBe(status);
        expect(res.body).toEqual(expect.objectContaining({ reason }));
      }
      const health = await request(ctx.app).get('/healthz');
      expect(health.status).toBeLessThan(500);
    });
  }
});
