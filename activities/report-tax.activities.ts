import { heartbeat } from '@temporalio/activity';
import { createTaxReporting, type TaxReportDeps } from '../src/reporting/tax-report';

/** What the worker wires for reportTax's activities (the heartbeat is the activity's own). */
export type ReportTaxActivityDeps = Omit<TaxReportDeps, 'heartbeat'>;

/** reportTax's activities: the tax report use case's steps (errors are mapped in ./index.ts). */
export function createReportTaxActivities(deps: ReportTaxActivityDeps) {
  const steps = createTaxReporting({ ...deps, heartbeat: () => heartbeat() });
  return {
    prepareTaxReport: steps.prepareTaxReport,
    submitTaxReportAttempt: steps.submitTaxReportAttempt,
    publishTaxReportEvent: steps.publishTaxReportEvent,
  };
}
