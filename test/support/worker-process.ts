import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { workerBundleEnv } from './services';

const WORKER_JS = path.resolve(__dirname, '../../dist/src/main/worker.js');

/** A worker started as its own process from dist/, as `npm run start:worker` runs it. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  /** SIGKILL, as a crashed machine: no shutdown, no last heartbeat. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM, the graceful shutdown. Resolves once the process is gone. */
  stop(): Promise<void>;
}

export interface WorkerProcessOptions {
  mongoUri: string;
  temporalAddress: string;
  taskQueue: string;
  /** Settings of the worker beyond the database and Temporal ones (Peppol, SMTP...). */
  env?: Record<string, string>;
}

function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * A function that starts a worker process on the given database and task queue each time it is called, with the
 * workflow bundle `npm test` prebuilt. Fails at once when dist/ was not built (jest run directly).
 */
export function workerProcesses(options: WorkerProcessOptions): () => WorkerProcess {
  if (!existsSync(WORKER_JS)) throw new Error(`${WORKER_JS} missing: run through \`npm test\`, which builds dist/`);
  const env = {
    ...process.env,
    ...workerBundleEnv(),
    MONGODB_URI: options.mongoUri,
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_TASK_QUEUE: options.taskQueue,
    WORKER_METRICS_ADDRESS: '',
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  return () => {
    const child = spawn(process.execPath, [WORKER_JS], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    const signal = async (s: NodeJS.Signals): Promise<void> => {
      if (child.exitCode === null && child.signalCode === null) child.kill(s);
      await ended(child);
    };
    return { child, kill: () => signal('SIGKILL'), stop: () => signal('SIGTERM') };
  };
}
