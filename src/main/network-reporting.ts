/**
 * The composition of the Peppol network reports (TSR, EUSR): the worker keeps the one peppolReporting run going, and
 * the admin CLI generates, shows and sends a month's reports in process with the worker's own parts.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../config/load-config';
import { GatewayError } from '../core/gateway-error';
import { readBytes } from '../documents/loader';
import {
  buildReport,
  NETWORK_REPORTS_TENANT,
  prepareReport,
  reportDocumentId,
  REPORT_KINDS,
  reportingMonth,
  reporterSeatId,
  sendReport,
  type NetworkReportingDeps,
  type ReportKind,
} from '../reporting/peppol';
import { ReportingItemRepository } from '../storage/reporting/reporting-item.repository';
import { SentInstanceRepository } from '../storage/peppol/sent-instance.repository';
import { createValidator } from '../validation';
import { PEPPOL_REPORTING_WORKFLOW, PEPPOL_REPORTING_WORKFLOW_ID } from '../../workflows/contracts/peppol-reporting';
import type { peppolReporting } from '../../workflows/peppol-reporting.workflow';
import type { Core } from './compose';
import { validatorOptions } from './compose';
import { composePeppolSender } from './peppol';
import { loadAs4Keys } from '../peppol/as4/as4-keys';

/** Starts the gateway's peppolReporting run unless it runs already (every worker asks; the workflow id keeps one). */
export async function ensurePeppolReportingRun(client: Client, taskQueue: string): Promise<'started' | 'running'> {
  try {
    await client.workflow.start<typeof peppolReporting>(PEPPOL_REPORTING_WORKFLOW, {
      taskQueue,
      workflowId: PEPPOL_REPORTING_WORKFLOW_ID,
      args: [{}],
    });
    return 'started';
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return 'running';
    throw e;
  }
}

/** The reports' parts over a composed core (the admin CLI's; the worker passes its own through the activities). */
export function composeNetworkReporting(core: Core): NetworkReportingDeps {
  return {
    documents: core.documents,
    blobs: core.db.blobs,
    maxDocumentBytes: core.config.http.maxUploadBytes,
    heartbeat: () => undefined,
    peppolSender: composePeppolSender(core.config),
    sentInstances: new SentInstanceRepository(core.db.models),
    reportingItems: new ReportingItemRepository(core.db.models),
    reportValidator: createValidator(validatorOptions(core.config)),
    // Generating and showing need only our key's Seat ID, not the whole sending set-up.
    ...(core.config.as4.enabled ? { seatId: loadAs4Keys(core.config.as4).keys.seatId } : {}),
  };
}

function kindsOf(kind: string | undefined): readonly ReportKind[] {
  if (kind === undefined) return REPORT_KINDS;
  if (kind === 'tsr' || kind === 'eusr') return [kind];
  throw new GatewayError('BAD_REQUEST', '--kind must be tsr or eusr');
}

/** `admin reporting generate|show|send --month YYYY-MM [--kind tsr|eusr]`. */
export async function runReportingCommand(
  core: Core,
  verb: string | undefined,
  options: { month: string; kind?: string | undefined },
  compose: (core: Core) => NetworkReportingDeps = composeNetworkReporting,
): Promise<unknown> {
  const { month } = reportingMonth(options.month);
  const kinds = kindsOf(options.kind);
  const deps = compose(core);
  const config: Readonly<Config> = core.config;
  switch (verb) {
    case 'generate':
      return Promise.all(kinds.map(async (kind) => ({ kind, ...(await prepareReport(deps, month, kind)) })));
    case 'show':
      return Promise.all(
        kinds.map(async (kind) => {
          const documentId = reportDocumentId(month, kind);
          const stored = await core.documents.find(NETWORK_REPORTS_TENANT, documentId);
          if (stored) {
            return {
              kind,
              documentId,
              generated: true,
              state: stored.state,
              xml: (await readBytes(deps, stored.blobId)).toString('utf8'),
            };
          }
          // Not generated yet: what it would say now (not stored, not validated).
          const seatId = reporterSeatId(deps);
          return { kind, documentId, generated: false, xml: await buildReport(deps, seatId, month, kind) };
        }),
      );
    case 'send': {
      const out = [];
      for (const kind of kinds) {
        const prepared = await prepareReport(deps, month, kind);
        const sent = await sendReport(deps, config.peppol.reporting, { month, kind, attempt: prepared.attempts + 1 });
        out.push({
          kind,
          documentId: prepared.documentId,
          outcome: sent.outcome,
          to: sent.to,
          reason: sent.reason ?? '',
        });
      }
      return out;
    }
    default:
      throw new GatewayError('BAD_REQUEST', 'reporting commands: generate, show, send (--month YYYY-MM)');
  }
}
