import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';

const PARTY = '0106:55555555';
const SEND = `/api/v1/${PARTY}/salesInvoice/send`;
/** What FerretDB's SQLite backend answers when a writer held the lock past its busy timeout. */
const busy = () =>
  Object.assign(new Error('[db.go:134 fsql.(*DB).InTransaction] database is locked (5) (SQLITE_BUSY)'), {
    name: 'MongoServerError',
  });

describe('upload: the acceptance write meets a locked database', () => {
  let ctx: TestContext;
  let starter: RecordingWorkflowStarter;
  let token: string;

  beforeAll(async () => {
    starter = new RecordingWorkflowStarter();
    ctx = await createTestContext('intakeretry', { workflows: starter });
    await ctx.core.directory.createTenant({ id: 'tenantR', name: 'R' });
    await ctx.core.directory.createParty({
      tenantId: 'tenantR',
      partyId: PARTY,
      legalEntityId: `NL:${PARTY}`,
      name: 'R',
    });
    token = await ctx.token(await ctx.createClient(['tenantR']));
  });

  afterEach(() => jest.restoreAllMocks());
  afterAll(() => ctx.close());

  const upload = (id: string) =>
    request(ctx.app)
      .post(SEND)
      .auth(token, { type: 'bearer' })
      .set('X-Service-DocumentId', id)
      .type('application/xml')
      .send(corpusFile(SAMPLE_UBL_INVOICE));

  it('repeats the idempotent write and answers 200 when the lock clears', async () => {
    const real = ctx.core.documents.accept.bind(ctx.core.documents);
    let calls = 0;
    jest.spyOn(ctx.core.documents, 'accept').mockImplementation(async (t, d) => {
      calls++;
      if (calls <= 2) throw busy();
      return real(t, d);
    });
    const id = randomUUID();
    const res = await upload(id);
    expect(res.status).toBe(200);
    expect(calls).toBe(3);
    expect((await ctx.core.documents.find('tenantR', id))?.accepted).toBe(true);
  });

  it('answers 503 (not 500) when it stays locked, and a retry with the same id completes the upload', async () => {
    const spy = jest.spyOn(ctx.core.documents, 'accept').mockRejectedValue(busy());
    const id = randomUUID();
    const first = await upload(id);
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ code: 'STORAGE_FAILED', documentId: id });
    expect((first.body as { detail: string }).detail).toMatch(/repeat the request with the same X-Service-DocumentId/);
    expect(spy).toHaveBeenCalledTimes(4);
    spy.mockRestore();

    const again = await upload(id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id });
    // Started once by the first request; the retry found it started and only recorded the acceptance.
    expect(starter.started.filter((s) => s.documentId === id)).toHaveLength(2);
    expect((await ctx.core.documents.find('tenantR', id))?.accepted).toBe(true);
  });

  it('does not repeat a write that failed for another reason', async () => {
    const spy = jest.spyOn(ctx.core.documents, 'accept').mockRejectedValue(new Error('boom'));
    const res = await upload(randomUUID());
    expect(res.status).toBe(500);
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
