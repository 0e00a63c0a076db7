import request from 'supertest';
import { ROUTES } from '../../api/contracts';
import { toOpenApiPath } from '../../api/openapi';
import { createTestContext, type TestContext } from '../support/test-app';
import { expectContract, servedRoutes } from '../support/contract';

describe('OpenAPI document', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext('openapi');
  });
  afterAll(async () => ctx.close());

  it('describes exactly the routes the app serves', () => {
    const served = servedRoutes(ctx.app)
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    const declared = ROUTES.map((r) => `${r.method} ${r.path}`).sort();
    expect(served).toEqual(declared);
  });

  it('is served as OpenAPI 3.1 with every contract path and the Swagger UI beside it', async () => {
    const res = await request(ctx.app).get('/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    for (const r of ROUTES) {
      const op = doc.paths[toOpenApiPath(r.path)]?.[r.method];
      expect(op).toBeDefined();
      expect(Object.keys(op!.responses).sort()).toEqual(Object.keys(r.responses).sort());
    }
    const ui = await request(ctx.app).get('/docs/');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger-ui');
  });

  it('answers operations routes in their declared shapes', async () => {
    expectContract('get', '/healthz', await request(ctx.app).get('/healthz'));
    const ready = await request(ctx.app).get('/readyz');
    expect(ready.status).toBe(200);
    expectContract('get', '/readyz', ready);
    const metrics = await request(ctx.app).get('/metrics');
    expectContract('get', '/metrics', metrics);
    expect(metrics.text).toContain('http_request_duration_seconds');
    expectContract('get', '/.well-known/jwks.json', await request(ctx.app).get('/.well-known/jwks.json'));
    expectContract(
      'get',
      '/.well-known/openid-configuration',
      await request(ctx.app).get('/.well-known/openid-configuration'),
    );
  });

  it('answers unknown paths with a problem, and carries the request id', async () => {
    const res = await request(ctx.app).get('/nope').set('X-Request-Id', 'abc-123');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(res.body).toMatchObject({ status: 404, code: 'NOT_FOUND', requestId: 'abc-123', instance: '/nope' });
  });

  it('reports not ready when a dependency is down', async () => {
    const down = await createTestContext('openapidown', {
      workflows: { startSendInvoice: async () => 'started', ping: async () => false },
    });
    try {
      const res = await request(down.app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not ready', checks: { database: 'ok', temporal: 'unavailable' } });
    } finally {
      await down.close();
    }
  });
});
