import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type WorkerOptions,
} from '@temporalio/worker';
import { loadConfig, type Config } from '../config/load-config';
import { createActivities } from '../../activities';
import { requireSelfCheck } from './self-check';
import { composeCore, composeDocumentPool, validatorOptions, warmRulePacks } from './compose';
import { PeppolDirectoryRepository } from '../storage/peppol/peppol-directory.repository';
import { SentInstanceRepository } from '../storage/peppol/sent-instance.repository';
import { SentReferenceRepository } from '../storage/peppol/sent-reference.repository';
import { As4InboundRepository } from '../storage/as4/as4-inbound.repository';
import { ReportingItemRepository } from '../storage/reporting/reporting-item.repository';
import { composeWebhookWorker, temporalDeliveryRuns, TemporalDeliveryStarter } from './webhooks';
import { createValidator, type Validator, type ValidatorPool } from '../validation';
import { inProcessTransform, type TransformOptions } from '../transform';
import type { Logger } from '../observability/logger';
import { composePeppolSender } from './peppol';
import { composeEmailChannel } from './email';
import { createFilterPredicate } from '../webhooks/filter';
import { readTaxReportingConfig, type TaxReporting } from '../reporting/tax-report';
import { temporalClientOver } from '../temporal/client';
import { missingSearchAttributes } from '../temporal/search-attributes';
import { requiredSearchAttributes } from './search-attributes';
import { ensurePeppolReportingRun } from './network-reporting';
import { composeRetention, keepRetentionSchedule } from './retention';
import { DependencyFaultMonitor } from '../observability/dependency-faults';

export interface RunningWorker {
  worker: Worker;
  run: Promise<void>;
  stop(): Promise<void>;
}

let runtimeInstalled = false;

const SDK_LOG_LEVELS: Record<string, LogLevel> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'WARN', // the SDK's INFO lines (bundler output, state changes) would drown the gateway's own
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'ERROR',
  silent: 'ERROR',
};

/** Installs the SDK runtime once per process: log level from config, and the worker's own Prometheus metrics. */
function installRuntime(config: Readonly<Config>): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  if (Runtime._instance) return; // already set up by the host (e.g. a test harness); keep it
  Runtime.install({
    logger: new DefaultLogger(SDK_LOG_LEVELS[config.logLevel] ?? 'WARN'),
    ...(config.temporal.workerMetricsAddress
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: config.temporal.workerMetricsAddress } } } }
      : {}),
  });
}

/** Where the workflow code comes from: a prebuilt bundle in production, else the sources (bundled at start). */
export function workflowSource(config: Readonly<Config>): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  if (config.temporal.workflowBundlePath) return { workflowBundle: { codePath: config.temporal.workflowBundlePath } };
  return { workflowsPath: require.resolve('../../workflows') };
}

/**
 * Validation for the worker's activities. The official rules run synchronously (seconds for a large invoice), which
 * on the activity thread would stall heartbeats and every other activity of the process; so they run on a pool of
 * worker threads (composeDocumentPool), each loading the send path's packs (Peppol BIS Billing 3) as it starts, so the
 * first document does not wait for them. Code running from the TypeScript sources (the tests) has no compiled thread
 * script and validates on the activity thread.
 */
function composeValidation(config: Readonly<Config>, logger: Logger): Validator | ValidatorPool {
  return composeDocumentPool(config, logger, warmRulePacks()) ?? createValidator(validatorOptions(config));
}

/**
 * Waits until the pool's threads have loaded their packs, before the worker takes its first task. A pack that cannot
 * be loaded does not stop the worker: the documents that need it are held back with the validator's own error, which
 * names it (the self-check tells the operator what to fix).
 */
async function warmUp(validator: Validator | ValidatorPool, logger: Logger): Promise<void> {
  if (!('ready' in validator)) return;
  const started = performance.now();
  try {
    await validator.ready();
    logger.info({ ms: Math.round(performance.now() - started) }, 'validation threads ready, rule packs loaded');
  } catch (e) {
    logger.warn({ err: e }, 'validation threads started, but a rule pack could not be loaded ahead of use');
  }
}

/**
 * Tax reporting: the configuration file read and checked at start (a broken file stops the worker rather than leave
 * invoices unreported), validating the small Tax Data Documents on the activity thread (their packs are loaded once).
 */
export function composeTaxReporting(config: Readonly<Config>, validator: Validator | ValidatorPool): TaxReporting {
  const file = config.taxReporting.configFile;
  if (!file) return { unavailable: 'TAX_REPORTING_CONFIG is not set' };
  const tdd = readTaxReportingConfig(file);
  return {
    config: tdd,
    validator: 'validateDocument' in validator ? validator : createValidator(validatorOptions(config)),
    acknowledgementTimeoutMs: config.taxReporting.acknowledgementTimeoutMs,
  };
}

/** Worker process: config → database → activities → Worker on the task queue. */
export async function startWorker(
  config: Readonly<Config>,
  overrides: Partial<WorkerOptions> = {},
): Promise<RunningWorker> {
  await requireSelfCheck(config);
  installRuntime(config);
  const core = await composeCore(config, 'worker');
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // A run setting an unregistered search attribute would fail its workflow task forever: refuse to start instead.
  const missing = await missingSearchAttributes(
    connection,
    config.temporal.namespace,
    requiredSearchAttributes(config.webhooks.searchAttributes),
  ).catch((e: unknown) => {
    core.logger.warn({ err: e }, 'could not list the namespace search attributes; not checked');
    return [];
  });
  if (missing.length > 0) {
    await connection.close();
    await core.db.close();
    throw new Error(
      `The Temporal namespace ${config.temporal.namespace} lacks the search attributes ${missing.join(', ')}; ` +
        'register them (temporal operator search-attribute create, see docs/servers.md) before starting the worker',
    );
  }
  // Webhook activities start delivery workflows (publishEvent) through a client on the worker's own connection.
  const { client } = temporalClientOver(connection, config.temporal.namespace);
  const starter = new TemporalDeliveryStarter(() => client, {
    taskQueue: overrides.taskQueue ?? config.temporal.taskQueue,
    searchAttributes: config.webhooks.searchAttributes,
  });
  // Deliveries of a stuck hook are held in the database and released when it answers again (HeldDeliveries); a run
  // that has not held yet is woken by a signal.
  const webhooks = composeWebhookWorker(config, core.db.models, starter, {
    runs: temporalDeliveryRuns(() => client),
    logger: core.logger,
  });
  const validator = composeValidation(config, core.logger);
  await warmUp(validator, core.logger);
  const email = composeEmailChannel(config);
  const taxReporting = composeTaxReporting(config, validator);
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...(config.temporal.maxCachedWorkflows !== undefined
      ? { maxCachedWorkflows: config.temporal.maxCachedWorkflows }
      : {}),
    ...workflowSource(config),
    activities: createActivities({
      documents: core.documents,
      directory: core.directory,
      blobs: core.db.blobs,
      maxDocumentBytes: config.http.maxUploadBytes,
      validator,
      // Conversions for a recipient on the same threads as validation, when there are threads.
      transform:
        'transform' in validator
          ? (input: Buffer, options: TransformOptions) => validator.transform(input, options)
          : inProcessTransform,
      webhooks: webhooks.services,
      events: webhooks.services.publisher,
      as4Inbound: new As4InboundRepository(core.db.models, core.db.blobs),
      sentInstances: new SentInstanceRepository(core.db.models),
      sentReferences: new SentReferenceRepository(core.db.models),
      reportingItems: new ReportingItemRepository(core.db.models),
      networkReporting: config.peppol.reporting,
      reportValidator: createValidator(validatorOptions(config)),
      peppolDirectory: new PeppolDirectoryRepository(core.db.models),
      peppolSender: composePeppolSender(config),
      email,
      // The https channel posts documents through the webhooks' sender: the same SSRF guard and connection pools.
      https: { sender: webhooks.sender, maxTimeoutMs: config.webhooks.timeoutMs },
      hooks: webhooks.services.hooks,
      passesFilter: createFilterPredicate(),
      taxReporting,
      retention: composeRetention(config, core, client),
      // Documents held back by a fault of ours: log lines and the worker's metrics (WORKER_METRICS_ADDRESS).
      dependencyFaults: new DependencyFaultMonitor(core.logger, Runtime.instance().metricMeter),
    }),
    ...overrides,
  });
  const run = worker.run();
  core.logger.info({ taskQueue: config.temporal.taskQueue }, 'worker running');
  if (config.peppol.reporting.enabled) {
    // The monthly Peppol network reports: one run for the gateway, started by whichever worker comes first.
    ensurePeppolReportingRun(client, overrides.taskQueue ?? config.temporal.taskQueue).then(
      (state) => core.logger.info({ state }, 'Peppol network reporting run'),
      (e: unknown) => core.logger.error({ err: e }, 'the Peppol network reporting run could not be started'),
    );
  }
  // The retention schedule (purgeExpiredRecords), or paused when retention is off.
  keepRetentionSchedule(client, config, overrides.taskQueue ?? config.temporal.taskQueue, core.logger);
  return {
    worker,
    run,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await run.catch(() => undefined);
      await webhooks.close();
      if ('smtp' in email) email.smtp.close();
      if ('close' in validator) await validator.close();
      await connection.close();
      await core.db.close();
    },
  };
}

if (require.main === module) {
  const config = loadConfig();
  startWorker(config).then(
    (w) => {
      // Worker.run installs its own SIGINT/SIGTERM handling and resolves after a graceful shutdown.
      w.run.then(
        () => w.stop().then(() => process.exit(0)),
        (e: unknown) => {
          console.error('worker failed:', e);
          process.exit(1);
        },
      );
    },
    (e: unknown) => {
      console.error('worker failed to start:', e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
