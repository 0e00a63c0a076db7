import { randomUUID } from 'node:crypto';
import {
  PURGE_RECORDS_WORKFLOW,
  RETENTION_KINDS,
  type PurgeRecordsInput,
  type PurgeRecordsResult,
  type PurgeStepOutcome,
  type PurgeStepRequest,
} from '../../workflows/contracts/purge-records';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * purgeExpiredRecords with a stubbed step on the time-skipping server: every kind is gone through in turn, a page at
 * a time until a step reports no next page; all steps judge as of the purge's first start, also across
 * continue-as-new; a failing step is retried and its retry writes the same intent (same stepId).
 */
describe('purgeExpiredRecords (time-skipping server, stubbed step)', () => {
  const env = timeSkippingEnvironment();

  async function run(input: PurgeRecordsInput, pagesOf: Record<string, number>, failFirst = false) {
    const calls: PurgeStepRequest[] = [];
    let failed = false;
    const activities = {
      purgeRecordsStep: async (req: PurgeStepRequest): Promise<PurgeStepOutcome> => {
        calls.push(req);
        if (failFirst && !failed) {
          failed = true;
          throw new Error('database away');
        }
        const page = req.cursor ? Number(req.cursor.id) + 1 : 0;
        const last = page + 1 >= (pagesOf[req.kind] ?? 1);
        return {
          kind: req.kind,
          scanned: 10,
          purged: 7,
          blobs: 0,
          kept: { held: 2, 'too-young': 1 },
          resumed: 0,
          ...(last ? {} : { next: { at: new Date(0).toISOString(), id: String(page) } }),
        };
      },
    };
    const result = await withStubbedWorker(env(), activities, (client, taskQueue) =>
      client.workflow.execute(PURGE_RECORDS_WORKFLOW, {
        taskQueue,
        workflowId: `retention-${randomUUID()}`,
        args: [input],
      }),
    );
    return { calls, result: result as PurgeRecordsResult };
  }

  it('goes through every kind, page after page, and sums what each step did', async () => {
    const { calls, result } = await run({}, { documents: 3, events: 2 });
    expect(calls.map((c) => c.kind)).toEqual([
      'documents',
      'documents',
      'documents',
      'as4-messages',
      'events',
      'events',
      'delivery-logs',
      'inbox-entries',
    ]);
    // Each page goes on from the previous one's cursor; a new kind starts from its beginning.
    expect(calls.map((c) => c.cursor?.id ?? '-')).toEqual(['-', '0', '1', '-', '-', '0', '-', '-']);
    expect(new Set(calls.map((c) => c.asOf)).size).toBe(1);
    expect(new Set(calls.map((c) => c.stepId)).size).toBe(calls.length);
    expect(result.totals).toEqual({
      documents: { scanned: 30, purged: 21, kept: 9 },
      'as4-messages': { scanned: 10, purged: 7, kept: 3 },
      events: { scanned: 20, purged: 14, kept: 6 },
      'delivery-logs': { scanned: 10, purged: 7, kept: 3 },
      'inbox-entries': { scanned: 10, purged: 7, kept: 3 },
    });
    expect(Object.keys(result.totals)).toEqual([...RETENTION_KINDS]);
  });

  it('continues as new every maxStepsPerRun steps, keeping its clock, its place and its totals', async () => {
    const { calls, result } = await run({ maxStepsPerRun: 2 }, { documents: 5 });
    expect(calls).toHaveLength(9);
    expect(calls.map((c) => c.cursor?.id ?? '-').slice(0, 5)).toEqual(['-', '0', '1', '2', '3']);
    // One clock for the whole purge, though it ran in five runs.
    expect(new Set(calls.map((c) => c.asOf))).toEqual(new Set([result.asOf]));
    // Step ids name the run: five runs, so the ids are unique across them.
    expect(new Set(calls.map((c) => c.stepId)).size).toBe(9);
    expect(result.totals.documents).toEqual({ scanned: 50, purged: 35, kept: 15 });
    expect(result.totals['inbox-entries']).toEqual({ scanned: 10, purged: 7, kept: 3 });
  });

  it('a step that fails is retried with the same step id (the same purge intent)', async () => {
    const { calls } = await run({}, {}, true);
    expect(calls[0]!.stepId).toBe(calls[1]!.stepId);
    expect(calls[0]!.kind).toBe('documents');
    expect(calls).toHaveLength(RETENTION_KINDS.length + 1);
  });
});
