import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { testWorkflowBundle } from '../support/workflow-bundle';

/*
 * Recorded histories of real runs replayed against today's workflow code: a change that would break workflows
 * already running in production fails here (non-determinism), not after a deploy. Every replay runs the same bundle of
 * that code, built once for the file (bundling per history took most of this suite's time).
 */
const DIR = path.resolve(__dirname, '../replay/histories');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

describe('workflow replay', () => {
  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('replays %s without non-determinism', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(path.join(DIR, file), 'utf8')));
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: await testWorkflowBundle(), replayName: file },
        history,
        `replay-${file}`,
      ),
    ).resolves.toBeUndefined();
  });
});
