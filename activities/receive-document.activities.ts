import { heartbeat } from '@temporalio/activity';
import { createReceiveDocument, type ReceiveDocumentDeps } from '../src/receiving';
import { decideAutomaticMls, type AutomaticMlsDeps } from '../src/receiving/mls-auto';
import { createMlsSending, type MlsSentDeps } from '../src/receiving/mls-send';
import {
  createInvoiceResponseSending,
  type InvoiceResponseEventDeps,
  type InvoiceResponseSendDeps,
} from '../src/receiving/invoice-response-send';
import { createOrderResponseSending, type OrderResponseSendDeps } from '../src/receiving/order-response-send';
import { createOrderSending, type OrderSendDeps } from '../src/sending/order-send';
import { taxReportingSettings, type TaxReporting } from '../src/reporting/tax-report';
import type { AutomaticMlsInput, ReceivedDocumentInput } from '../workflows/contracts/receive-document';

/** What the worker wires for receiveDocument's activities (the heartbeat is the activity's own). */
export type ReceiveDocumentActivityDeps = Omit<ReceiveDocumentDeps, 'heartbeat'> &
  Omit<MlsSentDeps, 'heartbeat'> &
  Omit<AutomaticMlsDeps, 'heartbeat'> &
  Omit<InvoiceResponseSendDeps, 'heartbeat'> &
  Omit<InvoiceResponseEventDeps, 'heartbeat'> &
  Omit<OrderResponseSendDeps, 'heartbeat'> &
  Omit<OrderSendDeps, 'heartbeat'> & { taxReporting?: TaxReporting };

/**
 * receiveDocument's activities: the receive-document use case's steps, and the runs that send what answers or goes
 * beside invoices (MLS, Invoice and Order Responses, orders). Errors are mapped in ./index.ts.
 */
export function createReceiveDocumentActivities(deps: ReceiveDocumentActivityDeps) {
  const steps = createReceiveDocument({ ...deps, heartbeat: () => heartbeat() });
  const mls = createMlsSending({ ...deps, heartbeat: () => heartbeat() });
  const invoiceResponses = createInvoiceResponseSending({ ...deps, heartbeat: () => heartbeat() });
  const orderResponses = createOrderResponseSending({ ...deps, heartbeat: () => heartbeat() });
  const orders = createOrderSending({ ...deps, heartbeat: () => heartbeat() });
  return {
    detectReceivedFormat: steps.detectReceivedFormat,
    validateReceivedDocument: steps.validateReceivedDocument,
    registerReceivedDocument: async (input: ReceivedDocumentInput) => {
      const received = await steps.registerReceivedDocument(input);
      // A received invoice or credit note is the buyer's to report (C3) where its country requires it.
      const tax = received.topic === 'InvoiceReceived' ? taxReportingSettings(deps.taxReporting) : undefined;
      return tax ? { ...received, taxReporting: tax } : received;
    },
    decideAutomaticMls: (input: AutomaticMlsInput) =>
      decideAutomaticMls({ ...deps, heartbeat: () => heartbeat() }, input),
    sendMlsAttempt: mls.sendMlsAttempt,
    publishMlsSent: mls.publishMlsSent,
    sendInvoiceResponseAttempt: invoiceResponses.sendInvoiceResponseAttempt,
    publishInvoiceResponseEvent: invoiceResponses.publishInvoiceResponseEvent,
    sendOrderResponseAttempt: orderResponses.sendOrderResponseAttempt,
    publishOrderResponseEvent: orderResponses.publishOrderResponseEvent,
    checkOrder: orders.checkOrder,
    sendOrderAttempt: orders.sendOrderAttempt,
    publishOrderEvent: orders.publishOrderEvent,
  };
}
