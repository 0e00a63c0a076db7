import { heartbeat } from '@temporalio/activity';
import {
  prepareReport,
  sendReport,
  type NetworkReportingDeps,
  type NetworkReportingSettings,
} from '../src/reporting/peppol';
import type {
  NetworkReportAttempt,
  NetworkReportAttemptResult,
  NetworkReportStep,
  PreparedNetworkReport,
} from '../workflows/contracts/peppol-reporting';

/** What the worker wires for the network reports (the heartbeat is the activity's own). */
export type PeppolReportingActivityDeps = Omit<NetworkReportingDeps, 'heartbeat'> & {
  networkReporting: NetworkReportingSettings;
};

/** peppolReporting's activities: generate (once) and send the report of a month. Errors are mapped in ./index.ts. */
export function createPeppolReportingActivities(deps: PeppolReportingActivityDeps) {
  const withBeat = { ...deps, heartbeat: () => heartbeat() };
  return {
    prepareNetworkReport: (input: NetworkReportStep): Promise<PreparedNetworkReport> =>
      prepareReport(withBeat, input.month, input.kind),
    sendNetworkReportAttempt: async (input: NetworkReportAttempt): Promise<NetworkReportAttemptResult> =>
      sendReport(withBeat, deps.networkReporting, input),
  };
}
