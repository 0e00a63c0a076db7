import { Context, heartbeat } from '@temporalio/activity';
import { GatewayError } from '../src/core/gateway-error';
import type {
  AttemptInput,
  AttemptOffer,
  AttemptResult,
  DeliveryEventInput,
  HoldDeliveryInput,
  PublishedEventSummary,
  PublishEventInput,
  WebhookDeliveries,
} from '../src/webhooks';

export interface WebhookActivityDeps {
  /** Optional so processes that run no webhook work can leave it out; the activities then fail with a clear error. */
  webhooks?: WebhookDeliveries;
}

/** An attempt as the workflow asks for it: the run's own ids and the log line's key come from the activity context. */
export interface AttemptDeliveryInput extends Omit<AttemptInput, 'runKey' | 'run'> {
  run?: AttemptOffer;
}

/** The activities of deliverWebhook (and of producers publishing from workflows): adapters over src/webhooks. */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  const webhooks = (): WebhookDeliveries => {
    if (deps.webhooks) return deps.webhooks;
    throw new GatewayError(
      'NOT_IMPLEMENTED',
      'webhook activities are not wired in this worker (ActivityDeps.webhooks missing)',
      { retryable: false },
    );
  };

  return {
    /** One delivery attempt; a log line per (run, attempt), so a retried activity overwrites its own line. */
    attemptDelivery(input: AttemptDeliveryInput): Promise<AttemptResult> {
      const { info } = Context.current();
      const execution = info.workflowExecution;
      const { run, ...attempt } = input;
      const runKey = execution?.runId ?? info.activityRunId ?? info.activityId;
      const held = run && execution ? { run: { ...run, ...execution } } : {};
      return webhooks().attempt({ ...attempt, runKey, ...held }, () => heartbeat());
    },

    /** Holds a delivery of a stuck hook; the run ends after this. */
    holdDelivery: (input: HoldDeliveryInput): Promise<string> => webhooks().hold(input),

    /** The one publish path for producers running in workflows (document topics use it too). */
    publishEvent: (input: PublishEventInput): Promise<PublishedEventSummary> => webhooks().publishEvent(input),

    /** HookSentRetry / HookSentError / an output rule's topic about one delivery. */
    publishDeliveryEvent: (input: DeliveryEventInput): Promise<PublishedEventSummary> =>
      webhooks().publishDeliveryEvent(input),

    /** A receiver answered 410 Gone. True when this call switched the hook off. */
    disableHook: (input: { tenantId: string; hookId: string; reason: string }): Promise<boolean> =>
      webhooks().disableHook(input.tenantId, input.hookId, input.reason),
  };
}
