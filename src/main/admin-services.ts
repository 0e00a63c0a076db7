import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { deliverWebhookWorkflowId } from '../../workflows/contracts/deliver-webhook';
import { HookSecretRepository } from '../storage/hooks/hook-secret.repository';
import { ReplayJournalRepository } from '../storage/replay/replay-journal.repository';
import { ReplaySelectionRepository } from '../storage/replay/replay-selection.repository';
import type { TemporalClient } from '../temporal/client';
import type { Core } from './compose';
import type { HookCommandServices } from './admin-hooks';
import type { ReplayServices } from './admin-replay';
import {
  allowListOf,
  composeWebhookStorage,
  createPublisher,
  temporalDeliveryRuns,
  TemporalDeliveryStarter,
} from './webhooks';

/** What `replay …` and `hook …` act through: the API's storage and publisher, Temporal when connected. */
export function composeAdminServices(
  core: Core,
  temporal?: TemporalClient,
): { replay: ReplayServices; hooks: HookCommandServices } {
  const { config } = core;
  const storage = composeWebhookStorage(core.db.models);
  const publisher = temporal
    ? createPublisher(
        config,
        storage,
        new TemporalDeliveryStarter(() => temporal.client, {
          taskQueue: config.temporal.taskQueue,
          searchAttributes: config.webhooks.searchAttributes,
        }),
      )
    : undefined;
  const runs = temporal ? temporalDeliveryRuns(() => temporal.client) : undefined;
  const starter = temporal
    ? TemporalWorkflowStarter.over(temporal, {
        ...config.temporal,
        peppolSendSchedule: config.peppol.sendRetrySchedule,
        emailSendSchedule: config.email.retrySchedule,
      })
    : undefined;
  return {
    replay: {
      directory: core.directory,
      journal: new ReplayJournalRepository(core.db.models),
      selection: new ReplaySelectionRepository(core.db.models),
      events: storage.events,
      hooks: storage.hooks,
      documents: core.documents,
      ...(publisher ? { publisher } : {}),
      ...(runs
        ? {
            deliveryRuns: {
              latestRunId: (tenantId: string, deliveryId: string) =>
                runs.latestRunId(deliverWebhookWorkflowId(tenantId, deliveryId)),
            },
          }
        : {}),
      ...(starter ? { control: starter, startReceiveDocument: (input) => starter.startReceiveDocument(input) } : {}),
    },
    hooks: {
      directory: core.directory,
      hooks: storage.hooks,
      secrets: new HookSecretRepository(core.db.models),
      deliveryLog: storage.deliveryLog,
      settings: {
        allowHttp: config.webhooks.allowHttp,
        allowList: allowListOf(config),
        maxTimeoutMs: config.webhooks.timeoutMs,
      },
      ...(publisher ? { publisher } : {}),
    },
  };
}
