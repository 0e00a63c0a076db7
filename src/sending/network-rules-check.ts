import { formatId, type DocumentTypeId, type ParticipantId } from '../peppol/identifiers';
import {
  documentTypeRefusal,
  participantRefusal,
  removedMessage,
  type CodeLists,
} from '../peppol/network-rules/code-lists';

/**
 * The Peppol code lists on the send path: a recipient under a removed (or unknown) participant scheme, or a document
 * type removed from the code list, is not sent from the entry's removal date on; undefined when both are in force.
 */
export function networkRulesRefusal(
  lists: CodeLists,
  receiver: ParticipantId,
  documentType: DocumentTypeId | undefined,
  at: Date,
): { reasonCode: string; message: string } | undefined {
  const scheme = participantRefusal(lists, receiver, at);
  if (scheme) {
    const why =
      scheme.state === 'unknown' ? `the ${scheme.entry} is not in the ${scheme.list}` : removedMessage(scheme);
    return {
      reasonCode: 'PARTICIPANT_SCHEME_REMOVED',
      message: `Not sent: the recipient ${formatId(receiver)} cannot be addressed on Peppol: ${why}`,
    };
  }
  const type = documentType ? documentTypeRefusal(lists, documentType, at) : undefined;
  if (type) return { reasonCode: 'DOCUMENT_TYPE_REMOVED', message: `Not sent over Peppol: ${removedMessage(type)}` };
  return undefined;
}
