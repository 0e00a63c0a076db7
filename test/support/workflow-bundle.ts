import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { bundleWorkflowCode } from '@temporalio/worker';

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

let bundle: Promise<{ code: string }> | undefined;

/**
 * The product's workflow code (workflows/index.ts) for a worker started in the test process, once per test file: the
 * bundle `npm test` built from this run's compiled sources (TEST_WORKFLOW_BUNDLE) when there is one, else the sources
 * bundled here (a run without the type check builds none). Bundling takes seconds of CPU per file.
 */
export function testWorkflowBundle(): Promise<{ code: string }> {
  bundle ??= (async () => {
    const prebuilt = process.env.TEST_WORKFLOW_BUNDLE;
    if (prebuilt && existsSync(prebuilt)) return { code: await readFile(prebuilt, 'utf8') };
    return bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quiet });
  })();
  return bundle;
}
