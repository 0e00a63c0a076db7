import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { testWorkflowBundle } from './workflow-bundle';

/*
 * Workflow tests on Temporal's time-skipping test server: the workflow code under test runs for real, its activities
 * are stubs, and timers (retry schedules of days) complete as soon as nothing else is pending. The server is the Java
 * implementation resolved into the tool cache by scripts/temporal-test-server.js (the SDK's own download needs the
 * internet); `npm test` prepares it before jest starts.
 */

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureTemporalTestServer } = require('../../scripts/temporal-test-server') as {
  ensureTemporalTestServer: () => string;
};

let quieted = false;

/** A time-skipping environment of its own (one server process); tear it down with `env.teardown()`. */
export async function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  if (!quieted) {
    // The SDK's default logger prints every worker state change; the tests only care about failures.
    Runtime.install({ logger: new DefaultLogger('WARN') });
    quieted = true;
  }
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: ensureTemporalTestServer() } },
  });
}

/**
 * A time-skipping environment for the enclosing `describe`: started before its tests, torn down after them. Call
 * the returned function inside a test to get it.
 */
export function timeSkippingEnvironment(): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await createTimeSkippingEnvironment();
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });
  return () => {
    if (!env) throw new Error('the time-skipping environment did not start (see beforeAll)');
    return env;
  };
}

/** Activity stubs by activity name, as the workflows call them. */
export type ActivityStubs = Record<string, (...args: never[]) => unknown>;

/**
 * Runs `body` while a worker serves the product's workflows with the given activity stubs on a task queue of its own;
 * `body` starts workflows on `taskQueue` through `client` (time skips while a started workflow's result is awaited).
 */
export async function withStubbedWorker<R>(
  env: TestWorkflowEnvironment,
  activities: ActivityStubs,
  body: (client: Client, taskQueue: string) => Promise<R>,
): Promise<R> {
  const taskQueue = `test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: await testWorkflowBundle(),
    activities,
  });
  return worker.runUntil(body(env.client, taskQueue));
}
