import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import { eventually } from '../support/poll';
import { requireEnv, uniqueDbUri } from '../support/services';
import { workerProcesses } from '../support/worker-process';

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
    const port = await freePort();
    const taskQueue = `metrics-${randomUUID()}`;
    const worker = workerProcesses({
      mongoUri: uniqueDbUri(mongodbUri, 'workermetrics'),
      temporalAddress,
      taskQueue,
      env: { WORKER_METRICS_ADDRESS: `127.0.0.1:${port}` },
    })();
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
      await worker.stop();
    }
  });
});
