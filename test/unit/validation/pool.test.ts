import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { transformDocument } from '../../../src/transform';
import { createValidatorPool, type ValidatorPool } from '../../../src/validation/pool';
import { corpusFile, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../../support/corpus';
import { eventually } from '../../support/poll';
import { requirePacks, RULES_DIR, validator } from './support';

// Workers compile the sources as they load them and each loads its packs; a loaded machine makes both slow.
jest.setTimeout(300_000);

const WORKERS = path.resolve(__dirname, '../../support/validation-pool');
const WORKER = path.join(WORKERS, 'worker.js');
const UBL_PACKS = ['ubl-2.1', 'en16931-ubl'];

const ubl = corpusFile(SAMPLE_UBL_INVOICE);
const withPayable = (value: string): Buffer =>
  Buffer.from(ubl.toString('utf8').replace(/(<cbc:PayableAmount[^>]*>)[^<]*</, `$1${value}<`), 'utf8');
const documents: Array<[string, Buffer]> = [
  ['EN 16931 UBL example (valid)', ubl],
  ['EN 16931 CII example (valid)', corpusFile(SAMPLE_CII_INVOICE)],
  ['Peppol BIS 3 example (valid, other packs)', corpusFile('en16931/ubl-examples/BIS3_Invoice_positive.XML')],
  ['wrong amount due (business rule error)', withPayable('1.00')],
  ['amount in scientific notation (schema error)', withPayable('1.5E2')],
];

/** The error a rejected promise carries, for assertions on its code and reason. */
async function failure(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected the promise to reject');
}

describe('validator pool', () => {
  beforeAll(() => requirePacks([...UBL_PACKS, 'cii-d16b', 'en16931-cii', 'peppol-cen-en16931-ubl', 'peppol-bis3-ubl']));

  describe('two workers with preloaded packs', () => {
    let pool: ValidatorPool;
    beforeAll(async () => {
      pool = createValidatorPool({
        rulesDir: RULES_DIR,
        size: 2,
        maxQueue: 64,
        workerScript: WORKER,
        preload: UBL_PACKS,
      });
      await pool.ready();
    });
    afterAll(() => pool.close());

    it('gives the same results as the single-thread validator', async () => {
      for (const [name, doc] of documents) {
        const [mine, reference] = await Promise.all([pool.validate(doc), validator().validate(doc)]);
        expect({ name, result: mine }).toEqual({ name, result: reference });
      }
      // Sanity of the fixtures: they cover valid, business-rule and schema outcomes.
      const outcomes = await Promise.all(documents.map(([, d]) => pool.validate(d)));
      expect(outcomes.map((r) => r.isValid)).toEqual([true, true, true, false, false]);
      expect(outcomes[2]!.ruleSets.map((r) => r.id)).toContain('peppol-bis3-ubl');
      expect(outcomes[3]!.assertions.some((a) => a.reasonCode === 'BV')).toBe(true);
      expect(outcomes[4]!.assertions.map((a) => a.reasonCode)).toContain('SV');
    });

    it('passes options through and answers errors the way the validator does', async () => {
      const forced = await pool.validate(ubl, { ruleSet: 'ubl-2.1' });
      expect(forced.ruleSets.map((r) => r.id)).toEqual(['ubl-2.1']);
      const e = await failure(pool.validate('<Invoice><unclosed></Invoice>'));
      const ref = await failure(validator().validate('<Invoice><unclosed></Invoice>'));
      expect([e.code, e.message, e.details]).toEqual([ref.code, ref.message, ref.details]);
      const unknown = await failure(pool.validate(ubl, { ruleSet: 'no-such-pack' }));
      const unknownRef = await failure(validator().validate(ubl, { ruleSet: 'no-such-pack' }));
      expect([unknown.code, unknown.message, unknown.details, unknown.retryable]).toEqual([
        unknownRef.code,
        unknownRef.message,
        unknownRef.details,
        unknownRef.retryable,
      ]);
      expect(unknown.message).toMatch(/no-such-pack/);
    });

    it(
      'converts documents as transformDocument does in process: XML and PDF targets, reports and ' + 'refusals',
      async () => {
        const date = new Date('2026-01-02T03:04:05Z');
        for (const [name, doc] of documents.slice(0, 3)) {
          for (const targetFormat of ['en16931-cii', 'en16931-ubl', 'facturx-en16931']) {
            const [mine, reference] = await Promise.all([
              pool.transform(doc, { targetFormat, date }),
              Promise.resolve(transformDocument(doc, { targetFormat, date })),
            ]);
            expect({ name, targetFormat, xml: mine.xml, report: mine.report, contentType: mine.contentType }).toEqual({
              name,
              targetFormat,
              xml: reference.xml,
              report: reference.report,
              contentType: reference.contentType,
            });
            // Buffers again on this side, byte for byte the same.
            expect(Buffer.isBuffer(mine.body)).toBe(true);
            expect(mine.body.equals(reference.body)).toBe(true);
            expect(mine.pdf === undefined).toBe(reference.pdf === undefined);
            if (reference.pdf) expect(Buffer.isBuffer(mine.pdf) && mine.pdf.equals(reference.pdf)).toBe(true);
          }
        }
        for (const [input, targetFormat] of [
          ['<Invoice><unclosed></Invoice>', 'en16931-cii'],
          ['<x:Unknown xmlns:x="urn:nothing"/>', 'en16931-cii'],
          [ubl.toString('utf8'), 'no-such-format'],
          [ubl.toString('utf8').replace(/<cbc:IssueDate>[^<]*</, '<cbc:IssueDate>not a date<'), 'en16931-cii'],
        ] as const) {
          const e = await failure(pool.transform(input, { targetFormat }));
          const ref = await failure(Promise.resolve().then(() => transformDocument(input, { targetFormat })));
          expect([e.code, e.status, e.message, e.details]).toEqual([ref.code, ref.status, ref.message, ref.details]);
        }
      },
    );

    it('answers every one of many parallel jobs, on both workers', async () => {
      const before = pool.stats().completed;
      const jobs = Array.from({ length: 24 }, (_, k) => pool.validate(documents[k % 2]![1]));
      await eventually(() => pool.stats().busy === 2, 60_000, 'both threads busy');
      const results = await Promise.all(jobs);
      expect(results).toHaveLength(24);
      expect(results.every((r) => r.isValid)).toBe(true);
      expect(results.map((r) => r.format.id).slice(0, 2)).toEqual(['en16931-ubl-invoice', 'en16931-cii']);
      expect(pool.stats()).toMatchObject({ busy: 0, queued: 0, crashed: 0, restarts: 0, completed: before + 24 });
    });
  });

  it('refuses a job when the queue is full, and still answers the queued ones', async () => {
    const pool = createValidatorPool({
      rulesDir: RULES_DIR,
      size: 1,
      maxQueue: 2,
      workerScript: WORKER,
      preload: UBL_PACKS,
    });
    try {
      await pool.ready();
      const accepted = [pool.validate(ubl), pool.validate(ubl), pool.validate(ubl)];
      expect(pool.stats()).toMatchObject({ busy: 1, queued: 2 });
      const refused = await failure(pool.validate(ubl));
      expect(refused.code).toBe('DEPENDENCY_UNAVAILABLE');
      expect(refused.status).toBe(503);
      expect(refused.retryable).toBe(true);
      expect(refused.details).toMatchObject({ reason: 'VALIDATION_QUEUE_FULL', queued: 2, maxQueue: 2 });
      expect(refused.message).toMatch(/busy.*2 document\(s\).*1 worker/);
      expect((await Promise.all(accepted)).map((r) => r.isValid)).toEqual([true, true, true]);
    } finally {
      await pool.close();
    }
  });

  it('fails the job of a worker that dies, replaces the worker and keeps serving', async () => {
    const pool = createValidatorPool({
      rulesDir: RULES_DIR,
      size: 1,
      workerScript: path.join(WORKERS, 'crash-worker.js'),
      preload: UBL_PACKS,
    });
    try {
      await pool.ready();
      const crash = Buffer.from(
        ubl.toString('utf8').replace('</Invoice>', '<!-- CRASH-THE-WORKER --></Invoice>'),
        'utf8',
      );
      const [crashed, after] = await Promise.allSettled([pool.validate(crash), pool.validate(ubl)]);
      expect(crashed.status).toBe('rejected');
      const e = (crashed as PromiseRejectedResult).reason as GatewayError;
      expect(e).toBeInstanceOf(GatewayError);
      expect(e.code).toBe('INTERNAL');
      expect(e.details).toEqual({ reason: 'VALIDATION_WORKER_CRASHED', exitCode: 70 });
      expect(e.message).toMatch(/pool worker stopped during the validation of this document \(exit code 70\)/);
      // The job queued behind the crash is served by the replacement worker.
      expect(after.status).toBe('fulfilled');
      expect((after as PromiseFulfilledResult<{ isValid: boolean }>).value.isValid).toBe(true);
      expect(pool.stats()).toMatchObject({ crashed: 1, restarts: 1, ready: 1, busy: 0 });
      expect((await pool.validate(ubl)).isValid).toBe(true);
      // A conversion that takes its worker down is named as such.
      const t = await failure(pool.transform(crash, { targetFormat: 'en16931-cii' }));
      expect([t.code, t.details]).toEqual(['INTERNAL', { reason: 'TRANSFORM_WORKER_CRASHED', exitCode: 70 }]);
      expect(t.message).toMatch(/during the transformation of this document/);
      expect((await pool.transform(ubl, { targetFormat: 'en16931-cii' })).report.target.id).toBe('en16931-cii');
    } finally {
      await pool.close();
    }
  });

  it('stops a job that runs past its time limit and replaces its worker', async () => {
    // A 1,000-line invoice takes seconds; 200 ms is far less.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { buildInvoice } = require('../../../bench/lib/validation-documents') as {
      buildInvoice(o: { lines: number }): { body: Buffer };
    };
    const big = buildInvoice({ lines: 1000 }).body;
    const pool = createValidatorPool({
      rulesDir: RULES_DIR,
      size: 1,
      jobTimeoutMs: 200,
      workerScript: WORKER,
      preload: UBL_PACKS,
    });
    try {
      await pool.ready();
      const e = await failure(pool.validate(big));
      expect(e.code).toBe('UNPROCESSABLE');
      expect(e.details).toEqual({ reason: 'VALIDATION_TIMEOUT' });
      expect(e.message).toMatch(/did not finish within 200 ms; its worker was stopped and replaced/);
      await eventually(() => pool.stats().ready === 1, 60_000, 'one thread ready');
      expect(pool.stats()).toMatchObject({ crashed: 1, restarts: 1 });
    } finally {
      await pool.close();
    }
  });

  it('drains on close, then refuses new work; close without drain rejects what is pending', async () => {
    const pool = createValidatorPool({ rulesDir: RULES_DIR, size: 1, workerScript: WORKER, preload: UBL_PACKS });
    await pool.ready();
    const pending = [pool.validate(ubl), pool.validate(ubl)];
    await pool.close();
    expect((await Promise.all(pending)).map((r) => r.isValid)).toEqual([true, true]);
    const after = await failure(pool.validate(ubl));
    expect(after.details).toEqual({ reason: 'VALIDATION_POOL_CLOSED' });

    const hard = createValidatorPool({ rulesDir: RULES_DIR, size: 1, workerScript: WORKER, preload: UBL_PACKS });
    await hard.ready();
    const cut = Promise.allSettled([hard.validate(ubl), hard.validate(ubl)]);
    await hard.close({ drain: false });
    for (const r of await cut) {
      expect(r.status).toBe('rejected');
      expect(((r as PromiseRejectedResult).reason as GatewayError).details).toEqual({
        reason: 'VALIDATION_POOL_CLOSED',
      });
    }
  });

  it('names a pack that cannot be loaded, and keeps answering with the validator’s own error', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'pool-no-packs-'));
    const pool = createValidatorPool({ rulesDir: empty, size: 1, workerScript: WORKER, preload: ['ubl-2.1'] });
    try {
      const notReady = await failure(pool.ready());
      expect(notReady.code).toBe('DEPENDENCY_UNAVAILABLE');
      expect(notReady.details).toMatchObject({ reason: 'RULE_PACK_MISSING', pack: 'ubl-2.1' });
      const e = await failure(pool.validate(ubl));
      expect(e.details).toMatchObject({ reason: 'RULE_PACK_MISSING' });
      expect(e.message).toMatch(/rules:fetch/);
    } finally {
      await pool.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('refuses a worker entry that does not load, once, instead of restarting it forever', async () => {
    const pool = createValidatorPool({
      rulesDir: RULES_DIR,
      size: 2,
      workerScript: path.join(WORKERS, 'broken-worker.js'),
    });
    try {
      const e = await failure(pool.ready());
      expect(e.code).toBe('DEPENDENCY_UNAVAILABLE');
      expect(e.details).toEqual({ reason: 'VALIDATION_POOL_FAILED' });
      expect(e.message).toMatch(/could not start a worker: worker entry failed to load \(test\)/);
      expect((await failure(pool.validate(ubl))).details).toEqual({ reason: 'VALIDATION_POOL_FAILED' });
      expect(pool.stats().restarts).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('refuses bad configuration at creation', () => {
    expect(() => createValidatorPool({ rulesDir: RULES_DIR, workerScript: path.join(WORKERS, 'missing.js') })).toThrow(
      /worker script .*missing\.js not found/,
    );
    // Run from the sources there is no compiled worker beside pool.ts; the message says how to get one.
    expect(() => createValidatorPool({ rulesDir: RULES_DIR })).toThrow(/npm run build/);
    expect(() =>
      createValidatorPool({ rulesDir: RULES_DIR, workerScript: WORKER, acceptedPrevious: ['en16931-ubl'] }),
    ).toThrow(/RULES_ACCEPTED_PREVIOUS/);
  });
});
