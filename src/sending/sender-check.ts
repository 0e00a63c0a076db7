import type { DocumentFacts, PeppolIdentifier } from '../../workflows/contracts/send-invoice';
import type { SendInvoiceDeps } from './ports';

/** Why the invoice may not go out under its seller's address, or undefined when the uploader may act for it. */
export interface SenderRefusal {
  reasonCode: 'SENDER_NOT_ALLOWED';
  message: string;
}

/** `<icd>:<id>` of a Peppol participant value, compared by ICD and (case-insensitively, as Peppol does) by id. */
function sameParticipant(a: string, b: string): boolean {
  const split = (v: string) => {
    const i = v.indexOf(':');
    return i < 0 ? undefined : { icd: v.slice(0, i), id: v.slice(i + 1).toLowerCase() };
  };
  const x = split(a);
  const y = split(b);
  return x !== undefined && y !== undefined && x.icd === y.icd && x.id === y.id;
}

/** The `<scheme>:<number>` of a legal-entity id `<country>:<scheme>:<number>`. */
function legalEntityParticipant(legalEntityId: string): string {
  return legalEntityId.slice(legalEntityId.indexOf(':') + 1);
}

/** Whether `seller` names the party (its partyId or the identifier of its legal entity). */
function names(seller: string, party: { partyId: string; legalEntityId: string | null }): boolean {
  return (
    sameParticipant(seller, party.partyId) ||
    (party.legalEntityId !== null && sameParticipant(seller, legalEntityParticipant(party.legalEntityId)))
  );
}

/**
 * The sender check: the invoice's seller (BT-34, the SBDH sender) must be the party the invoice was uploaded for
 * (the token reaches it: the API checked), or a party of the same tenant with the same legal entity. A tenant can
 * never send as another company. The directory is read only when the seller is not the upload's own party.
 */
export async function checkSender(
  deps: Pick<SendInvoiceDeps, 'directory'>,
  tenantId: string,
  facts: DocumentFacts,
  sender: PeppolIdentifier,
): Promise<SenderRefusal | undefined> {
  const seller = sender.value;
  if (await mayActFor(deps, tenantId, facts, seller)) return undefined;
  return {
    reasonCode: 'SENDER_NOT_ALLOWED',
    message:
      `Not sent: the invoice's seller ${seller} (BT-34 EndpointID, the Peppol sender) is not the party ` +
      `${facts.partyId} it was uploaded for, nor a party of the same legal entity`,
  };
}

/**
 * Whether an uploading party may send as `participant` (`<icd>:<id>`): it is the party itself (its partyId or its
 * legal entity's identifier), or a party of the same tenant with the same legal entity. The sender check of sales
 * invoices (the seller) and of purchase orders (the buyer). The directory is read only when it is not the party.
 */
export async function mayActFor(
  deps: Pick<SendInvoiceDeps, 'directory'>,
  tenantId: string,
  party: { partyId: string; legalEntityId: string | null },
  participant: string,
): Promise<boolean> {
  if (names(participant, party)) return true;
  if (party.legalEntityId === null) return false;
  const parties = await deps.directory.listParties([tenantId]);
  return parties.some(
    (p) => p.tenantId === tenantId && p.legalEntityId === party.legalEntityId && names(participant, p),
  );
}
