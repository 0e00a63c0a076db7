import { createReceiveDocumentActivities, type ReceiveDocumentActivityDeps } from './receive-document.activities';
import { createSendInvoiceActivities, type SendInvoiceActivityDeps } from './send-invoice.activities';
import { withFailureMapping } from './to-application-failure';
import { createWebhookActivities, type WebhookActivityDeps } from './deliver-webhook.activities';
import { createReportTaxActivities, type ReportTaxActivityDeps } from './report-tax.activities';
import { createPeppolReportingActivities, type PeppolReportingActivityDeps } from './peppol-reporting.activities';
import { createRetentionActivities, type RetentionActivityDeps } from './retention.activities';
import { withDependencyFaultReport } from './dependency-faults';
import type { DependencyFaultMonitor } from '../src/observability/dependency-faults';

export type ActivityDeps = SendInvoiceActivityDeps &
  ReceiveDocumentActivityDeps &
  WebhookActivityDeps &
  ReportTaxActivityDeps &
  PeppolReportingActivityDeps &
  RetentionActivityDeps & {
    /** Where steps refused for a fault of the installation are reported (log, metrics); absent: not reported. */
    dependencyFaults?: DependencyFaultMonitor;
  };

/** Every activity the worker registers, built from its dependencies (no globals). */
export function createActivities(deps: ActivityDeps) {
  return withFailureMapping(
    withDependencyFaultReport(
      {
        ...createSendInvoiceActivities(deps),
        ...createWebhookActivities(deps),
        ...createReceiveDocumentActivities(deps),
        ...createReportTaxActivities(deps),
        ...createPeppolReportingActivities(deps),
        ...createRetentionActivities(deps),
      },
      deps.dependencyFaults,
    ),
  );
}

export type Activities = ReturnType<typeof createActivities>;
