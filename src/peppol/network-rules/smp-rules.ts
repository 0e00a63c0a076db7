/**
 * The network rules our SMP keeps, apart from the publisher itself: what a participant publishes on a day (nothing
 * under a removed scheme, no removed document type), and Belgium's rule that a party registered under 0208 (BE:EN,
 * the enterprise number) publishes both the BIS Billing 3 Invoice and Credit Note.
 */
import { documentTypeIdEquals, icdOf, PARTICIPANT_SCHEME, type ParticipantId } from '../identifiers';
import { BILLING_PROCESS, BIS3_CREDIT_NOTE, BIS3_INVOICE, type PublishedParticipant } from '../smp-publisher';
import { documentTypeRefusal, participantRefusal, type CodeLists } from './code-lists';

/** True for an `iso6523-actorid-upis` participant under ICD 0208 (Belgian enterprise number). */
export function isBelgianEnterpriseNumber(p: ParticipantId): boolean {
  try {
    return p.scheme === PARTICIPANT_SCHEME && icdOf(p) === '0208';
  } catch {
    return false;
  }
}

/** The services with the BIS Billing 3 Invoice and Credit Note added where a 0208 participant lacks one of them. */
export function withBelgianCapabilities(p: PublishedParticipant): PublishedParticipant {
  if (!isBelgianEnterpriseNumber(p.participant)) return p;
  const services = [...p.services];
  for (const documentType of [BIS3_INVOICE, BIS3_CREDIT_NOTE])
    if (!services.some((s) => documentTypeIdEquals(s.documentType, documentType)))
      services.push({ documentType, processes: [BILLING_PROCESS] });
  return { participant: p.participant, services };
}

/**
 * What our SMP serves of a registered participant at `at`: undefined when its scheme is removed (or unknown), its
 * services without the removed document types, and for 0208 both billing capabilities.
 */
export function publishedAt(p: PublishedParticipant, lists: CodeLists, at: Date): PublishedParticipant | undefined {
  if (participantRefusal(lists, p.participant, at)) return undefined;
  const services = p.services.filter((s) => !documentTypeRefusal(lists, s.documentType, at));
  return withBelgianCapabilities({ participant: p.participant, services });
}
