import { createAs4Activities, type As4ActivityDeps } from './as4.activities';
import { createDocumentActivities, type DocumentActivityDeps } from './documents.activities';
import { createPeppolSendActivities, type PeppolSendActivityDeps } from './peppol-send.activities';
import { withFailureMapping } from './to-application-failure';
import { createValidationActivities, type ValidationActivityDeps } from './validation.activities';
import { createWebhookActivities, type WebhookActivityDeps } from './deliver-webhook.activities';

export type ActivityDeps = DocumentActivityDeps &
  ValidationActivityDeps &
  WebhookActivityDeps &
  As4ActivityDeps &
  PeppolSendActivityDeps;

/** Every activity the worker registers, built from its dependencies (no globals). */
export function createActivities(deps: ActivityDeps) {
  return withFailureMapping({
    ...createDocumentActivities(deps),
    ...createValidationActivities(deps),
    ...createWebhookActivities(deps),
    ...createAs4Activities(deps),
    ...createPeppolSendActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
