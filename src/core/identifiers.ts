/** Party identifiers (spec 2.3). Pure: importable by workflows. */

/** Path form `<scheme>:<number>`: a 4-digit ISO 6523 ICD and the identifier within it. */
const PARTY_ID = /^(\d{4}):([A-Za-z0-9][A-Za-z0-9.\-_/]{0,49})$/;
/** Payload form `<country>:<scheme>:<number>` (the legalEntityId). */
const LEGAL_ENTITY_ID = /^([A-Z]{2}):(\d{4}):([A-Za-z0-9][A-Za-z0-9.\-_/]{0,49})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isPartyId(s: string): boolean {
  return PARTY_ID.test(s);
}

export function isLegalEntityId(s: string): boolean {
  return LEGAL_ENTITY_ID.test(s);
}

/** `NL` + `0106:12345678` → `NL:0106:12345678`. */
export function legalEntityIdOf(country: string, partyId: string): string {
  const id = `${country.toUpperCase()}:${partyId}`;
  if (!isLegalEntityId(id)) throw new Error(`not a valid legal entity id: ${id}`);
  return id;
}

/** `NL:0106:12345678` → `0106:12345678`. */
export function partyIdOfLegalEntity(legalEntityId: string): string {
  const m = LEGAL_ENTITY_ID.exec(legalEntityId);
  if (!m) throw new Error(`not a valid legal entity id: ${legalEntityId}`);
  return `${m[2]}:${m[3]}`;
}

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

/** Workflow ids are business keys (architecture invariant 3). */
export function sendInvoiceWorkflowId(tenantId: string, documentId: string): string {
  return `send-invoice:${tenantId}:${documentId.toLowerCase()}`;
}

/** The run of a document's tax report: the first (the gateway's own submit) or a later one asked for (2, 3, …). */
export function reportTaxWorkflowId(tenantId: string, documentId: string, sequence = 1): string {
  return sequence > 1 ? `report-tax:${tenantId}:${documentId}:${sequence}` : `report-tax:${tenantId}:${documentId}`;
}

/** The receive workflow of one stored AS4 message (MessageIds are case-sensitive, kept as received). */
export function receiveDocumentWorkflowId(tenantId: string, messageId: string): string {
  return `receive-document:${tenantId}:${messageId}`;
}
