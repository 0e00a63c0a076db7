import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The gateway-wide search attributes of document runs (sendInvoice, receiveDocument). They must be registered on the
 * server (`scripts/lib/services.js` registers them on the local dev server). The delivery runs' own keys are defined
 * with their contract (TenantId is the same key there).
 */
export const TenantIdAttribute = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const DocumentIdAttribute = defineSearchAttributeKey('DocumentId', SearchAttributeType.KEYWORD);
/**
 * When a sendInvoice run waiting between attempts makes its next one (removed once it does); set only where the
 * starter sets search attributes (SendInvoiceInput.searchAttributes).
 */
export const NextAttemptOnAttribute = defineSearchAttributeKey('NextAttemptOn', SearchAttributeType.DATETIME);
