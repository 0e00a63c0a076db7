/**
 * A received Peppol MLS (message-level status, `urn:peppol:edec:mls`): the receiving access point's verdict on a
 * document we sent. It is read with every MLS rule (a bad one is recorded with the rule it breaks and announced to
 * nobody), stored as a document of its own (downloadable), matched to the sales invoice it answers by the SBDH
 * InstanceIdentifier our message carried, recorded on that invoice's history and announced as
 * MessageLevelStatusReceived (`refToDocumentId` = the invoice, `documentId` = the MLS). An MLS that answers no document
 * we know is still stored and announced, with an empty `refToDocumentId`.
 */
import { formatId, parseDocumentTypeId } from '../peppol/identifiers';
import { MLS_PROFILE_ID, isMlsDocumentType, readMls, type Mls, type MlsProblem } from '../peppol/mls';
import type { SentInstance, SentInstanceRepository } from '../storage/peppol/sent-instance.repository';
import type { DetectionOutcome } from '../../workflows/contracts/send-invoice';
import type { MLS_FORMAT_ID as MlsFormatId } from '../../workflows/contracts/receive-document';
import type { PublishEventInput } from '../webhooks/publish';

/** The detected format id of an MLS (the contract's value: src/ takes no values from workflows/). */
export const MLS_FORMAT_ID: typeof MlsFormatId = 'peppol-mls';

/** The spec's status text of each MLS response code (spec 6.3). */
export const MLS_STATUS_TEXT = { AP: 'Accept', RE: 'Reject', AB: 'Acknowledge' } as const;

/** Whether a received document is an MLS: by its SBDH document type, else by what detection found. */
export function isReceivedMls(sbdhDocumentType: string | undefined, detection: DetectionOutcome): boolean {
  if (sbdhDocumentType) {
    try {
      if (isMlsDocumentType(parseDocumentTypeId(sbdhDocumentType))) return true;
    } catch {
      // Not a document type identifier: the detection decides.
    }
  }
  return detection.ok && detection.format.id === MLS_FORMAT_ID;
}

/** The first broken rule of a refused MLS, as its history detail says it (`[SCH-MLS-05] …`, and how many more). */
export function refusalDetail(problems: readonly MlsProblem[]): string {
  const first = problems[0];
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more: ${problemRules(problems.slice(1))})` : '';
  return `Invalid MLS: [${first?.rule ?? 'MLS'}] ${first?.message ?? 'unreadable'}${more}`.slice(0, 1000);
}

function problemRules(problems: readonly MlsProblem[]): string {
  return [...new Set(problems.map((p) => p.rule))].join(', ');
}

/** The read MLS, or the rules it breaks. */
export function readReceivedMls(bytes: Buffer): { ok: true; mls: Mls } | { ok: false; problems: MlsProblem[] } {
  return readMls(bytes);
}

/** The history detail of an MLS on the sales invoice it answers. */
export function mlsHistoryDetail(mls: Mls, mlsDocumentId: string): string {
  const head = `MLS ${mls.responseCode} (${MLS_STATUS_TEXT[mls.responseCode]}) from ${formatId(mls.sender)}`;
  const description = mls.description ? `: ${mls.description}` : '';
  const reasons = mls.lines.length
    ? `; ${mls.lines.map((l) => `${l.reasonCode}${l.ruleId ? ` ${l.ruleId}` : ''}`).join(', ')}`
    : '';
  return `${head}${description}${reasons} (MLS document ${mlsDocumentId})`.slice(0, 1000);
}

/** What an MLS says beyond its code: its description and each line's reason, rule and text ("" when nothing). */
export function mlsFindings(mls: Mls): string {
  const lines = mls.lines.map((l) => `${l.reasonCode} ${l.description}`.trim());
  return [mls.description, ...lines]
    .filter((x): x is string => !!x)
    .join('; ')
    .slice(0, 1000);
}

/** The sales invoice an MLS answers, when it is one of the tenant's (never another tenant's). */
export async function matchMls(
  sentInstances: Pick<SentInstanceRepository, 'find'>,
  mls: Mls,
  tenantId: string | undefined,
): Promise<SentInstance | null> {
  if (!mls.referencedInstanceId) return null;
  const ref = await sentInstances.find(mls.referencedInstanceId);
  if (!ref) return null;
  return tenantId === undefined || ref.tenantId === tenantId ? ref : null;
}

/** What the MessageLevelStatusReceived event says (spec 6.3 details, all strings, and a few of ours beside them). */
export interface MlsReceivedEventFacts {
  tenantId: string;
  eventId: string;
  party: { partyId: string; legalEntityId: string } | null;
  /** The stored MLS document. */
  mlsDocumentId: string;
  /** The sales invoice it answers, or null when none of ours matched. */
  invoiceDocumentId: string | null;
  /** The MLS message's document type (SBDH), `busdox-docid-qns::…`. */
  documentTypeId: string;
  /** The AS4 message it came in, when it came in one. */
  messageId?: string;
  mls: Mls;
}

export function mlsReceivedEvent(f: MlsReceivedEventFacts): PublishEventInput {
  const { mls } = f;
  const status = MLS_STATUS_TEXT[mls.responseCode];
  const about = f.invoiceDocumentId
    ? `document ${f.invoiceDocumentId}`
    : `unknown document ${mls.referencedInstanceId}`;
  return {
    id: f.eventId,
    tenantId: f.tenantId,
    topic: 'MessageLevelStatusReceived',
    party: f.party,
    documentId: f.mlsDocumentId,
    refToDocumentId: f.invoiceDocumentId ?? '',
    message: `Message-level status ${mls.responseCode} (${status}) received from ${formatId(mls.sender)} for ${about}`,
    details: {
      statusCode: mls.responseCode,
      status,
      description: mls.description ?? '',
      documentTypeId: f.documentTypeId,
      profileId: mls.profileId || MLS_PROFILE_ID,
      // Beyond the spec's fields (receivers ignore unknown ones).
      mlsId: mls.id,
      referencedInstanceId: mls.referencedInstanceId,
      sender: formatId(mls.sender),
      ...(mls.lines.length > 0
        ? {
            statusReasonCodes: [...new Set(mls.lines.map((l) => l.reasonCode))].sort().join(','),
            ruleIds: [...new Set(mls.lines.flatMap((l) => (l.ruleId ? [l.ruleId] : [])))].slice(0, 20).join(','),
          }
        : {}),
      ...(f.messageId ? { messageId: f.messageId } : {}),
    },
    createdBy: 'peppol',
  };
}
