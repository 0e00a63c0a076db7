// Entry point of the workflow bundle: every workflow the worker runs is exported here.
export { sendInvoice } from './send-invoice.workflow';
export { deliverWebhook } from './deliver-webhook.workflow';
export { receiveDocument } from './receive-document.workflow';
export { sendMessageLevelStatus } from './send-mls.workflow';
export { sendInvoiceResponse } from './send-invoice-response.workflow';
export { sendOrder } from './send-order.workflow';
export { sendOrderResponse } from './send-order-response.workflow';
export { reportTax } from './report-tax.workflow';
export { peppolReporting } from './peppol-reporting.workflow';
export { purgeExpiredRecords } from './purge-records.workflow';
