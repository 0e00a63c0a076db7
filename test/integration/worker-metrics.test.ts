import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { eventually } from '../support/poll';
import { requireEnv, uniqueDbUri, workerBundleEnv } from '../support/services';

const WORKER_JS = path.resolve(__dirname, '../../dist/src/main/worker.js');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('worker process', () => {
  it('serves the Temporal SDK metrics for Prometheus', async () => {
    const { temporalAddress, mongodbUri } = requireEnv();
    if (!existsSync(WORKER_JS))
      throw new Error(`${WORKER_JS} missing: run through \`npm test\`, which builds dist/ first`);
    const port = await freePort();
    const taskQueue = `metrics-${randomUUID()}`;
    const child = spawn(process.execPath, [WORKER_JS], {
      env: {
        ...process.env,
        ...workerBundleEnv(),
        TEMPORAL_ADDRESS: temporalAddress,
        MONGODB_URI: uniqueDbUri(mongodbUri, 'workermetrics'),
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: `127.0.0.1:${port}`,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      const text = await eventually(
        async () => {
          const answer = await fetch(`http://127.0.0.1:${port}/metrics`).then(
            (r) => r.text(),
            () => '',
          );
          return answer.includes('temporal_num_pollers') ? answer : undefined;
        },
        60_000,
        "the worker's pollers in its metrics",
        250,
      );
      expect(text).toMatch(new RegExp(`temporal_num_pollers\\{[^}]*task_queue="${taskQueue}"`));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
