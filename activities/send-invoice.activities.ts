import { heartbeat } from '@temporalio/activity';
import { createSendInvoice, type SendInvoiceDeps } from '../src/sending';

/** What the worker wires for sendInvoice's activities (the heartbeat is the activity's own). */
export type SendInvoiceActivityDeps = Omit<SendInvoiceDeps, 'heartbeat'>;

/** sendInvoice's activities: the send-invoice use case's steps (errors are mapped in ./index.ts). */
export function createSendInvoiceActivities(deps: SendInvoiceActivityDeps) {
  const steps = createSendInvoice({ ...deps, heartbeat: () => heartbeat() });
  return {
    checkDocument: steps.checkDocument,
    chooseChannel: steps.chooseChannel,
    sendEmail: steps.sendEmail,
    sendHttps: steps.sendHttps,
    resolveRecipient: steps.resolveRecipient,
    sendPeppol: steps.sendPeppol,
    publishSendEvent: steps.publishSendEvent,
  };
}
