import { heartbeat } from '@temporalio/activity';
import { createSendInvoice, type SendInvoiceDeps } from '../src/sending';
import { taxReportingSettings, type TaxReporting } from '../src/reporting/tax-report';
import type { SendInvoiceInput } from '../workflows/contracts/send-invoice';

/** What the worker wires for sendInvoice's activities (the heartbeat is the activity's own). */
export type SendInvoiceActivityDeps = Omit<SendInvoiceDeps, 'heartbeat'> & { taxReporting?: TaxReporting };

/** sendInvoice's activities: the send-invoice use case's steps (errors are mapped in ./index.ts). */
export function createSendInvoiceActivities(deps: SendInvoiceActivityDeps) {
  const steps = createSendInvoice({ ...deps, heartbeat: () => heartbeat() });
  return {
    checkDocument: async (input: SendInvoiceInput) => {
      const checked = await steps.checkDocument(input);
      const tax = taxReportingSettings(deps.taxReporting);
      return tax ? { ...checked, taxReporting: tax } : checked;
    },
    chooseChannel: steps.chooseChannel,
    sendEmail: steps.sendEmail,
    sendHttps: steps.sendHttps,
    resolveRecipient: steps.resolveRecipient,
    sendPeppol: steps.sendPeppol,
    resolveAndSendPeppol: steps.resolveAndSendPeppol,
    publishSendEvent: steps.publishSendEvent,
  };
}
