import type { X509Certificate } from 'node:crypto';
import { commonNameOf } from '../../peppol/pki/certificates';
import { isSpisId, type DocumentTypeId, type ParticipantId, type ProcessId } from '../../peppol/identifiers';
import { isMlsDocumentType } from '../../peppol/mls/policy';
import { formatId } from '../../peppol/identifiers';
import { PEPPOL_TRANSPORT_AS4_V2, UNKNOWN_COUNTRY, type PeppolReportingItem } from './types';

/** Where reporting items are kept (src/storage/reporting): one keyed insert per message, a repeat is a no-op. */
export interface ReportingItemSink {
  record(item: PeppolReportingItem): Promise<boolean>;
}

/** What a message's SBDH says, as the send and receive paths have it. */
export interface ExchangedHeader {
  sender: ParticipantId;
  receiver: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  countryC1: string | undefined;
}

const country = (c: string | undefined): string => {
  const v = (c ?? '').trim().toUpperCase();
  return /^[A-Z0-9]{2}$/.test(v) ? v : UNKNOWN_COUNTRY;
};

function common(header: ExchangedHeader, peer: X509Certificate) {
  return {
    otherSeatId: commonNameOf(peer) ?? '',
    documentTypeScheme: header.documentType.scheme,
    documentTypeValue: header.documentType.value,
    processScheme: header.process.scheme,
    processValue: header.process.value,
    transportProtocol: PEPPOL_TRANSPORT_AS4_V2,
    countryC1: country(header.countryC1),
    mls: isMlsDocumentType(header.documentType),
  };
}

/** The item of a message we sent and the receiving access point confirmed (or had already): C3 is the receiver. */
export function sentItem(m: {
  messageId: string;
  exchangedAt: Date;
  header: ExchangedHeader;
  receiverCertificate: X509Certificate;
}): PeppolReportingItem {
  return {
    direction: 'sent',
    messageId: m.messageId,
    exchangedAt: m.exchangedAt,
    ...common(m.header, m.receiverCertificate),
    endUserId: formatId(m.header.sender),
    // A report to OpenPeppol goes out under our own service provider id (0242): no end user of ours sends it.
    networkReport: isSpisId(m.header.sender),
  };
}

/** The item of a message we received and committed: C2 is the verified signer; C4 is the receiving party's country. */
export function receivedItem(m: {
  messageId: string;
  exchangedAt: Date;
  header: ExchangedHeader;
  signerCertificate: X509Certificate;
  countryC4: string | undefined;
}): PeppolReportingItem {
  return {
    direction: 'received',
    messageId: m.messageId,
    exchangedAt: m.exchangedAt,
    ...common(m.header, m.signerCertificate),
    countryC4: country(m.countryC4),
    endUserId: formatId(m.header.receiver),
    networkReport: false,
  };
}

/**
 * Records a sent message once its exchange is settled: delivered, or a duplicate the receiving access point had
 * already confirmed (a resend after a lost receipt). Retryable and failed attempts were no exchange.
 */
export async function recordSentExchange(
  sink: ReportingItemSink | undefined,
  outcome: string,
  m: Omit<Parameters<typeof sentItem>[0], 'exchangedAt'>,
): Promise<void> {
  if (!sink || (outcome !== 'delivered' && outcome !== 'duplicate')) return;
  await sink.record(sentItem({ ...m, exchangedAt: new Date() }));
}

/** A committed received message, as the AS4 receiver tells it (src/peppol/as4/receiver.ts, onCommitted). */
export interface ReceivedExchange {
  messageId: string;
  exchangedAt: Date;
  header: ExchangedHeader;
  signerCertificate: X509Certificate;
  party: { tenantId: string; partyId: string };
}

/**
 * The receiver's onCommitted: the item of each committed message, its C4 country from the receiving party's data (the
 * country of its legal-entity id; our own country for a message to our service provider id; `ZZ` when neither is
 * known). A failure is told, not thrown: the message is durable and its receipt is not withheld for a statistic.
 */
export function recordReceivedExchanges(deps: {
  sink: ReportingItemSink;
  countryOfParty: (tenantId: string, partyId: string) => Promise<string | undefined>;
  ownCountry: string | undefined;
  onFailed: (messageId: string, error: unknown) => void;
}): (m: ReceivedExchange) => Promise<void> {
  return async (m) => {
    try {
      const countryC4 = isSpisId(m.header.receiver)
        ? deps.ownCountry
        : await deps.countryOfParty(m.party.tenantId, m.party.partyId);
      await deps.sink.record(
        receivedItem({
          messageId: m.messageId,
          exchangedAt: m.exchangedAt,
          header: m.header,
          signerCertificate: m.signerCertificate,
          countryC4,
        }),
      );
    } catch (e) {
      deps.onFailed(m.messageId, e);
    }
  };
}

/** The country of a legal-entity id `<country>:<scheme>:<number>`, if it starts with one. */
export function countryOfLegalEntity(legalEntityId: string | undefined): string | undefined {
  const c = (legalEntityId ?? '').split(':')[0] ?? '';
  return /^[A-Z]{2}$/i.test(c) ? c.toUpperCase() : undefined;
}
