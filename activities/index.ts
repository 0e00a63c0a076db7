import { createReceiveDocumentActivities, type ReceiveDocumentActivityDeps } from './receive-document.activities';
import { createSendInvoiceActivities, type SendInvoiceActivityDeps } from './send-invoice.activities';
import { withFailureMapping } from './to-application-failure';
import { createWebhookActivities, type WebhookActivityDeps } from './deliver-webhook.activities';
import { createPeppolReportingActivities, type PeppolReportingActivityDeps } from './peppol-reporting.activities';

export type ActivityDeps = SendInvoiceActivityDeps &
  ReceiveDocumentActivityDeps &
  WebhookActivityDeps &
  PeppolReportingActivityDeps;

/** Every activity the worker registers, built from its dependencies (no globals). */
export function createActivities(deps: ActivityDeps) {
  return withFailureMapping({
    ...createSendInvoiceActivities(deps),
    ...createWebhookActivities(deps),
    ...createReceiveDocumentActivities(deps),
    ...createPeppolReportingActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
