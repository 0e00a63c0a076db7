import { createReceiveDocumentActivities, type ReceiveDocumentActivityDeps } from './receive-document.activities';
import { createSendInvoiceActivities, type SendInvoiceActivityDeps } from './send-invoice.activities';
import { withFailureMapping } from './to-application-failure';
import { createWebhookActivities, type WebhookActivityDeps } from './deliver-webhook.activities';
import { createReportTaxActivities, type ReportTaxActivityDeps } from './report-tax.activities';
import { createPeppolReportingActivities, type PeppolReportingActivityDeps } from './peppol-reporting.activities';

export type ActivityDeps = SendInvoiceActivityDeps &
  ReceiveDocumentActivityDeps &
  WebhookActivityDeps &
  ReportTaxActivityDeps &
  PeppolReportingActivityDeps;

/** Every activity the worker registers, built from its dependencies (no globals). */
export function createActivities(deps: ActivityDeps) {
  return withFailureMapping({
    ...createSendInvoiceActivities(deps),
    ...createWebhookActivities(deps),
    ...createReceiveDocumentActivities(deps),
    ...createReportTaxActivities(deps),
    ...createPeppolReportingActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
