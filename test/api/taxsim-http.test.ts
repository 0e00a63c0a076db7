/**
 * taxsim's HTTP API in process (supertest, no socket of ours): TDDs derived by the library from a corpus invoice,
 * judged with the official TDD 1.0.0 artefacts, answered with an MLS; the lifecycle, bad input and faults.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { readMls, type Mls } from '../../src/peppol/mls';
import { composeTaxsim, type ComposedTaxsim } from '../../src/taxsim';
import { bis3Tdd } from '../support/taxsim';
import { requirePacks, validator } from '../unit/validation/support';

jest.setTimeout(60_000);

const DK = '0242:000950-taxsim.tax_dk';

function mlsOf(res: request.Response): Mls {
  const r = readMls(Buffer.from(res.text, 'utf8'));
  if (!r.ok) throw new Error(`not a valid MLS: ${JSON.stringify(r.problems)}`);
  return r.mls;
}

function post(t: ComposedTaxsim, xml: string) {
  return request(t.app).post('/api/tdd').set('Content-Type', 'application/xml').send(xml);
}

describe('taxsim HTTP API', () => {
  let t: ComposedTaxsim;

  beforeAll(() => requirePacks(['peppol-vida-tdd-xsd', 'peppol-vida-tdd']));

  beforeEach(() => {
    t = composeTaxsim({
      url: 'http://taxsim.test',
      validator: validator(),
      limits: { maxTddBytes: 200_000 },
    });
  });

  afterEach(() => t.close());

  it('accepts a valid submit and answers an MLS AP that references the TDD', async () => {
    const tddUuid = randomUUID();
    const res = await post(t, bis3Tdd({ receiver: DK, tddUuid }));
    expect(res.status).toBe(200);
    expect(res.headers['x-taxsim-verdict']).toBe('accepted');
    const mls = mlsOf(res);
    expect(mls).toMatchObject({
      responseCode: 'AP',
      referencedInstanceId: tddUuid,
      sender: { value: '0242:000950' },
      receiver: { value: '0242:000001' },
      lines: [],
    });
    const list = await request(t.app).get('/api/reports');
    expect(list.body).toMatchObject({
      count: 1,
      inMemory: true,
      items: [
        {
          id: res.headers['x-taxsim-report-id'],
          channel: 'http',
          role: 'C2',
          reportType: 'S',
          invoiceNumber: '12345',
          verdict: 'accepted',
          validation: ['peppol-vida-tdd-xsd@1.0.0:passed', 'peppol-vida-tdd@1.0.0:passed'],
          mls: { responseCode: 'AP', to: 'iso6523-actorid-upis::0242:000001' },
          match: { status: 'awaiting C3' },
        },
      ],
    });
    const one = await request(t.app).get(`/api/reports/${String(res.headers['x-taxsim-report-id'])}`);
    expect(one.body.xml).toContain('<pxs:ReporterRole>C2</pxs:ReporterRole>');
    expect(one.body.mlsXml).toBe(res.text);
  });

  it('rejects a TDD the official artefacts refuse: MLS RE with a BV line naming the rule', async () => {
    const xml = bis3Tdd({ receiver: DK }).replace(
      '<pxs:ReporterRole>C2</pxs:ReporterRole>',
      '<pxs:ReporterRole>C9</pxs:ReporterRole>',
    );
    const res = await post(t, xml);
    expect(res.status).toBe(200);
    expect(res.headers['x-taxsim-verdict']).toBe('rejected');
    const mls = mlsOf(res);
    expect(mls.responseCode).toBe('RE');
    expect(mls.lines).toContainEqual(expect.objectContaining({ reasonCode: 'BV', ruleId: 'ibr-tdd-09' }));
  });

  it('rejects a TDD addressed to a participant it does not serve', async () => {
    const res = await post(t, bis3Tdd({ receiver: '0242:000950-taxsim.tax_xx' }));
    const mls = mlsOf(res);
    expect(mls.responseCode).toBe('RE');
    expect(mls.lines).toContainEqual(expect.objectContaining({ reasonCode: 'BV', ruleId: 'TAXSIM-RECEIVER' }));
  });

  it('keeps the lifecycle: no resubmit before a submit, no second submit, nothing after a disregard', async () => {
    const ruleOf = async (xml: string) => {
      const mls = mlsOf(await post(t, xml));
      return mls.responseCode === 'AP' ? 'AP' : mls.lines.map((l) => l.ruleId).join(',');
    };
    expect(await ruleOf(bis3Tdd({ receiver: DK, reportType: 'resubmit' }))).toBe('TAXSIM-LC-02');
    expect(await ruleOf(bis3Tdd({ receiver: DK, reportType: 'disregard' }))).toBe('TAXSIM-LC-02');
    expect(await ruleOf(bis3Tdd({ receiver: DK }))).toBe('AP');
    expect(await ruleOf(bis3Tdd({ receiver: DK }))).toBe('TAXSIM-LC-01');
    expect(await ruleOf(bis3Tdd({ receiver: DK, reportType: 'resubmit' }))).toBe('AP');
    // The buyer's side has its own lifecycle.
    expect(await ruleOf(bis3Tdd({ receiver: DK, role: 'C3' }))).toBe('AP');
    expect(await ruleOf(bis3Tdd({ receiver: DK, reportType: 'disregard' }))).toBe('AP');
    expect(await ruleOf(bis3Tdd({ receiver: DK, reportType: 'resubmit' }))).toBe('TAXSIM-LC-03');
  });

  it('answers a repeated exchange (same TDT-003) as the first time and counts it once', async () => {
    const xml = bis3Tdd({ receiver: DK });
    const first = await post(t, xml);
    const again = await post(t, xml);
    expect(again.text).toBe(first.text);
    expect(again.headers['x-taxsim-duplicate']).toBe('true');
    expect(first.headers['x-taxsim-duplicate']).toBe('false');
    const list = await request(t.app).get('/api/reports');
    expect((list.body.items as Array<{ duplicateOf: string | null }>).map((i) => i.duplicateOf)).toEqual([
      first.headers['x-taxsim-report-id'],
      null,
    ]);
    // Counted once: a resubmit is accepted, a new submit is not.
    expect(mlsOf(await post(t, bis3Tdd({ receiver: DK, reportType: 'resubmit' }))).responseCode).toBe('AP');
  });

  it('matches the supplier and the buyer reports of one invoice', async () => {
    await post(t, bis3Tdd({ receiver: DK, role: 'C2' }));
    const c3 = await post(t, bis3Tdd({ receiver: DK, role: 'C3' }));
    const one = await request(t.app).get(`/api/reports/${String(c3.headers['x-taxsim-report-id'])}`);
    expect(one.body.match).toMatchObject({ status: 'matched', c2: '1', c3: '2' });
    expect(one.body.matchDetails.differences).toEqual([]);
  });

  it.each([
    ['not XML', 'this is not xml'],
    [
      'a DTD with an external entity (XXE)',
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    ],
    ['another document', '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>'],
  ])('answers 400 to %s and records nothing', async (_what, body) => {
    const res = await post(t, body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.text)).toMatchObject({ status: 400, title: 'Bad Request', detail: expect.any(String) });
    // Nothing of /etc/passwd comes back.
    expect(res.text).not.toMatch(/root:.*:0:0:/);
    expect(t.ledger.size).toBe(0);
  });

  it('answers 413 to a body over the limit', async () => {
    const res = await post(t, `<x>${'a'.repeat(300_000)}</x>`);
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(t.ledger.size).toBe(0);
  });

  it('answers /as4 with 503 when no AP key is configured', async () => {
    const res = await request(t.app).post('/as4').set('Content-Type', 'multipart/related').send('x');
    expect(res.status).toBe(503);
  });

  it('can be told to fail: http-500 n times, reject with a reason, slow, none', async () => {
    const fault = (body: object) => request(t.app).post('/api/faults').send(body);
    expect((await fault({ mode: 'http-500', count: 2 })).status).toBe(200);
    expect((await post(t, bis3Tdd({ receiver: DK }))).status).toBe(500);
    expect((await post(t, bis3Tdd({ receiver: DK }))).status).toBe(500);
    expect(t.ledger.size).toBe(0);
    expect((await post(t, bis3Tdd({ receiver: DK }))).status).toBe(200);
    expect((await request(t.app).get('/api/faults')).body).toEqual({ mode: 'none' });

    await fault({ mode: 'reject', reason: 'the register is closed for the audit' });
    const rejected = mlsOf(await post(t, bis3Tdd({ receiver: DK, reportType: 'resubmit' })));
    expect(rejected.responseCode).toBe('RE');
    expect(rejected.lines).toEqual([
      expect.objectContaining({
        reasonCode: 'BV',
        ruleId: 'TAXSIM-FAULT',
        description: '[TAXSIM-FAULT] the register is closed for the audit',
      }),
    ]);

    await fault({ mode: 'slow', delayMs: 400, count: 1 });
    const t0 = Date.now();
    const slow = await post(t, bis3Tdd({ receiver: DK, reportType: 'resubmit' }));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(390);
    expect(mlsOf(slow).responseCode).toBe('AP');

    const badFault = await fault({ mode: 'slow', delayMs: 10_000_000 });
    expect(badFault.status).toBe(400);
    expect(JSON.parse(badFault.text)).toMatchObject({ status: 400, detail: 'invalid fault' });
    expect((await fault({ mode: 'none' })).body).toEqual({ mode: 'none' });
  });

  it('shows what it received on a page, escaped', async () => {
    await post(t, bis3Tdd({ receiver: DK, invoice: (inv) => ({ ...inv, number: '<script>alert(1)</script>' }) }));
    const page = await request(t.app).get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain('in memory');
  });
});
