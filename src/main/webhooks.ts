import { Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import packageJson from '../../package.json';
import type { Config } from '../config/load-config';
import { GatewayError } from '../core/gateway-error';
import type { WebhookApiServices } from '../../api/routes/hooks.routes';
import {
  DELIVER_WEBHOOK_WORKFLOW,
  DELIVERY_SEARCH_ATTRIBUTES as searchKeys,
  deliverWebhookWorkflowId,
  type DeliverWebhookInput,
} from '../../workflows/contracts/deliver-webhook';
import type { deliverWebhook } from '../../workflows/deliver-webhook.workflow';
import type { Models } from '../storage/models';
import { DeliveryLogRepository, EventRepository } from '../storage/events/event.repository';
import { HeldDeliveryRepository } from '../storage/events/held-delivery.repository';
import { HookRepository } from '../storage/hooks/hook.repository';
import { HookSecretRepository } from '../storage/hooks/hook-secret.repository';
import { InboxRepository } from '../storage/events/inbox.repository';
import type { Logger } from '../observability/logger';
import {
  Admission,
  DeliveryAttempts,
  Dispatch,
  EventPublisher,
  HeldDeliveries,
  HttpsinInbox,
  HookCache,
  HookConcurrency,
  HookSecretVersions,
  parseAllowList,
  WebhookDeliveries,
  WebhookSender,
  type AllowList,
  type DeliveryMeta,
  type DeliveryRuns,
  type DeliveryStarter,
  type WebhookSenderOptions,
} from '../webhooks';

/** Wiring of the webhook parts for the API and the worker (composition root: the one place that knows Temporal). */

export interface WebhookStorage {
  hooks: HookRepository;
  events: EventRepository;
  deliveryLog: DeliveryLogRepository;
  /** The inboxes of httpsin hooks: deliveries put entries in, the inbox routes read and acknowledge them. */
  inbox: HttpsinInbox;
}

export function composeWebhookStorage(models: Models): WebhookStorage {
  const hooks = new HookRepository(models);
  return {
    hooks,
    events: new EventRepository(models),
    deliveryLog: new DeliveryLogRepository(models),
    inbox: new HttpsinInbox({ inbox: new InboxRepository(models), hooks }),
  };
}

/** WEBHOOK_ALLOWED_RANGES parsed; a bad entry stops the process at start with the entry named. */
export function allowListOf(config: Readonly<Config>): AllowList {
  return parseAllowList(config.webhooks.allowedRanges);
}

/** Starts deliverWebhook workflows; the workflow id is the delivery's business key. */
export class TemporalDeliveryStarter implements DeliveryStarter {
  constructor(
    private readonly client: () => Client,
    private readonly settings: { taskQueue: string; searchAttributes: boolean },
  ) {}

  async startDelivery(
    input: DeliverWebhookInput,
    meta: DeliveryMeta,
    mode: 'fresh' | 'redeliver',
    options: { startDelayMs?: number } = {},
  ): Promise<'started' | 'already-started' | 'running'> {
    const searchAttributes = this.settings.searchAttributes;
    const pairs: SearchAttributePair[] = [
      { key: searchKeys.tenantId, value: input.tenantId },
      { key: searchKeys.hookId, value: input.hookId },
      { key: searchKeys.topic, value: meta.topic },
      ...(meta.partyKey ? [{ key: searchKeys.partyId, value: meta.partyKey }] : []),
      ...(input.event.documentId ? [{ key: searchKeys.documentId, value: input.event.documentId }] : []),
      // The attempt about to run; the workflow raises it from the second attempt on.
      { key: searchKeys.attempt, value: 1 },
    ];
    try {
      await this.client().workflow.start<typeof deliverWebhook>(DELIVER_WEBHOOK_WORKFLOW, {
        taskQueue: this.settings.taskQueue,
        workflowId: deliverWebhookWorkflowId(input.tenantId, input.deliveryId),
        args: [{ ...input, searchAttributes }],
        // A fresh delivery happens once per (event, hook), ever; a redelivery is a new run once the earlier closed.
        workflowIdReusePolicy: mode === 'fresh' ? 'REJECT_DUPLICATE' : 'ALLOW_DUPLICATE',
        ...(searchAttributes ? { typedSearchAttributes: pairs } : {}),
        // A held delivery released with others starts at its point of their spread; until then no task runs.
        ...(options.startDelayMs ? { startDelay: options.startDelayMs } : {}),
      });
      return 'started';
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) return mode === 'fresh' ? 'already-started' : 'running';
      throw new GatewayError('WORKFLOW_START_FAILED', 'The event was stored but its delivery could not be started', {
        cause: e,
      });
    }
  }
}

export function createPublisher(
  config: Readonly<Config>,
  storage: WebhookStorage,
  starter: DeliveryStarter,
  routing?: HookCache,
): EventPublisher {
  return new EventPublisher({
    hooks: storage.hooks,
    events: storage.events,
    deliveryLog: storage.deliveryLog,
    starter,
    ...(routing ? { routing } : {}),
    settings: { schedule: config.webhooks.retrySchedule, maxAttemptTimeoutMs: config.webhooks.timeoutMs },
  });
}

/**
 * What the hook and events routes need. `routing`: recently read hook lists for routing (processes pass one and close
 * it; tests route from the database).
 */
export function composeWebhookRoutes(
  config: Readonly<Config>,
  models: Models,
  starter: DeliveryStarter,
  routing?: HookCache,
): WebhookApiServices {
  const storage = composeWebhookStorage(models);
  return {
    ...storage,
    publisher: createPublisher(config, storage, starter, routing),
    settings: {
      allowHttp: config.webhooks.allowHttp,
      allowList: allowListOf(config),
      maxTimeoutMs: config.webhooks.timeoutMs,
    },
  };
}

/** The API process's webhook services, starting deliveries on the process's Temporal client. */
export function composeWebhookApi(
  config: Readonly<Config>,
  models: Models,
  client: Client,
): { services: WebhookApiServices; close(): Promise<void> } {
  const starter = new TemporalDeliveryStarter(() => client, {
    taskQueue: config.temporal.taskQueue,
    searchAttributes: config.webhooks.searchAttributes,
  });
  const routing = new HookCache(new HookRepository(models));
  return {
    services: composeWebhookRoutes(config, models, starter, routing),
    close: () => {
      routing.close();
      return Promise.resolve();
    },
  };
}

/** What releasing held deliveries asks Temporal: a delivery's latest run. */
export function temporalDeliveryRuns(client: () => Client): DeliveryRuns {
  return {
    async latestRunId(workflowId) {
      try {
        return (await client().workflow.getHandle(workflowId).describe()).runId;
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) return undefined;
        throw e;
      }
    },
  };
}

export interface WebhookWorkerOptions {
  /**
   * The engine's side of releasing held deliveries; with it, deliveries of a stuck hook are held in the database and
   * released by the hook's answers and the sweep (HeldDeliveries). Without it they wait on their own (long) timers.
   */
  runs?: DeliveryRuns;
  logger?: Logger;
  sender?: Partial<WebhookSenderOptions>;
}

/** What the worker's webhook activities need; close() releases the HTTP connection pools. */
export function composeWebhookWorker(
  config: Readonly<Config>,
  models: Models,
  starter: DeliveryStarter,
  options: WebhookWorkerOptions = {},
): { services: WebhookDeliveries; sender: WebhookSender; close(): Promise<void> } {
  const storage = composeWebhookStorage(models);
  const sender = new WebhookSender({
    allowList: allowListOf(config),
    allowHttp: config.webhooks.allowHttp,
    userAgent: `invoice-gateway-webhooks/${packageJson.version}`,
    egress: config.webhooks.egress,
    clientCertDir: config.webhooks.clientCertDir,
    ...options.sender,
  });
  const { runs, logger } = options;
  const held = runs
    ? new HeldDeliveries(
        new HeldDeliveryRepository(models),
        (input, meta, startDelayMs) => starter.startDelivery(input, meta, 'redeliver', { startDelayMs }),
        runs,
      )
    : undefined;
  // A run that has ended needs no release; anything else only delays that delivery until it falls due.
  const onReleaseError = (workflowId: string, error: unknown) => {
    if (!(error instanceof WorkflowNotFoundError))
      logger?.warn({ workflowId, err: error }, 'could not release a delivery waiting on its hook');
  };
  const sweep = held?.startSweeping(config.webhooks.heldSweepMs, (err) =>
    logger?.warn({ err }, 'could not release held deliveries that fell due'),
  );
  const hookCache = new HookCache(storage.hooks);
  const admission = new Admission({
    cap: new HookConcurrency(config.webhooks.maxConcurrencyPerHook),
    ...(held ? { held } : {}),
    onReleaseError,
  });
  const dispatch = new Dispatch({
    hooks: storage.hooks,
    deliveryLog: storage.deliveryLog,
    sender,
    hookCache,
    maxTimeoutMs: config.webhooks.timeoutMs,
    inbox: storage.inbox,
    secretVersions: new HookSecretVersions(new HookSecretRepository(models)),
  });
  const services = new WebhookDeliveries({
    attempts: new DeliveryAttempts(admission, dispatch),
    publisher: createPublisher(config, storage, starter, hookCache),
    hooks: storage.hooks,
    ...(held ? { held } : {}),
  });
  return {
    services,
    sender,
    close: async () => {
      hookCache.close();
      await sweep?.stop();
      return sender.close();
    },
  };
}
