/** What the gateway keeps of each AS4 message it exchanged, for the Peppol network reports (TSR 1.0, EUSR 1.1). */

export type ReportingDirection = 'sent' | 'received';

/** The only transport the gateway speaks; the TSR `PerTP` key (scheme `Peppol`). */
export const PEPPOL_TRANSPORT_AS4_V2 = 'peppol-transport-as4-v2_0';

/** Country code for a C1 or C4 country that is not known (the Peppol reporting specifications' replacement). */
export const UNKNOWN_COUNTRY = 'ZZ';

export interface PeppolReportingItem {
  direction: ReportingDirection;
  /** The AS4 MessageId (of the UserMessage): with the direction, the item's key. */
  messageId: string;
  /** When the exchange happened (our receipt was answered / the peer's receipt arrived), UTC. */
  exchangedAt: Date;
  /** The other access point's Seat ID: the CN of the receiver's AP certificate (sent) or of the signer (received). */
  otherSeatId: string;
  documentTypeScheme: string;
  documentTypeValue: string;
  processScheme: string;
  processValue: string;
  transportProtocol: string;
  /** SBDH COUNTRY_C1, `ZZ` when the message carried none. */
  countryC1: string;
  /** The receiving end user's country; received messages only (`ZZ` when the party's country is not known). */
  countryC4?: string;
  /**
   * The end user this access point serves in the exchange: the sender participant of a sent message, the receiver of
   * a received one. Used to count distinct end users only; never written into a report.
   */
  endUserId: string;
  /** A message-level status: counted in the TSR, not in the EUSR. */
  mls: boolean;
  /** A TSR or EUSR sent to OpenPeppol (our own SPID as sender): counted in the TSR, not in the EUSR. */
  networkReport: boolean;
}

export type ReportKind = 'tsr' | 'eusr';

/** A reporting period: one calendar month in UTC. */
export interface ReportingMonth {
  /** `YYYY-MM`. */
  month: string;
  /** First instant of the month, inclusive (UTC midnight). */
  start: Date;
  /** First instant of the next month, exclusive. */
  end: Date;
  /** `YYYY-MM-DD` of the first and last day. */
  startDate: string;
  endDate: string;
}

export interface SubtotalKey {
  metaSchemeID: string;
  schemeID: string;
  value: string;
}

export interface TsrSubtotal {
  type: 'PerTP' | 'PerSP-DT-PR' | 'PerSP-DT-PR-CC';
  keys: SubtotalKey[];
  incoming: number;
  outgoing: number;
}

export interface TransactionStatistics {
  period: ReportingMonth;
  reporterSeatId: string;
  total: { incoming: number; outgoing: number };
  subtotals: TsrSubtotal[];
}

export interface EndUserCounts {
  sending: number;
  receiving: number;
  sendingOrReceiving: number;
}

export interface EusrSubset extends EndUserCounts {
  type: 'PerDT-PR' | 'PerDT-PR-EUC' | 'PerDT-EUC' | 'PerEUC';
  keys: SubtotalKey[];
}

export interface EndUserStatistics {
  period: ReportingMonth;
  reporterSeatId: string;
  fullSet: EndUserCounts;
  subsets: EusrSubset[];
}
