import { formatId, parseDocumentTypeId, parseProcessId, type ParticipantId } from '../identifiers';
import type { ServiceEntry } from '../../storage/peppol/peppol-directory.repository';
import { GatewayError, isGatewayError } from '../../core/gateway-error';
import { assertInForce, type CodeLists } from './code-lists';
import { withBelgianCapabilities } from './smp-rules';

/**
 * The services a participant is registered in our SMP with: refused (400, naming the code list entry and its removal
 * date) when its scheme or one of the document types is removed from the Peppol code lists on that day; for a 0208
 * participant the BIS Billing 3 Invoice and Credit Note are both added where one is missing.
 */
export function registrationServices(
  rules: { codeLists(): CodeLists; now(): Date },
  partyLabel: string,
  participant: ParticipantId,
  services: readonly ServiceEntry[],
): ServiceEntry[] {
  const published = services.map((s) => ({
    documentType: parseDocumentTypeId(s.documentTypeId),
    processes: s.processIds.map(parseProcessId),
  }));
  const lists = rules.codeLists();
  const at = rules.now();
  try {
    assertInForce(lists, at, { participant });
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    throw new GatewayError('BAD_REQUEST', `${partyLabel} cannot be a Peppol participant: ${e.message}`, {
      ...(e.details ? { details: e.details } : {}),
    });
  }
  assertInForce(lists, at, { documentTypes: published.map((s) => s.documentType) });
  return withBelgianCapabilities({ participant, services: published }).services.map((s) => ({
    documentTypeId: formatId(s.documentType),
    processIds: s.processes.map(formatId),
  }));
}
