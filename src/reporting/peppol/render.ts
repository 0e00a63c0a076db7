import { el, leaf, serialize, type XmlElement } from '../../en16931/xml-write';
import type { EndUserStatistics, ReportingMonth, SubtotalKey, TransactionStatistics } from './types';

export const TSR_NAMESPACE = 'urn:fdc:peppol:transaction-statistics-report:1.0';
export const TSR_CUSTOMIZATION_ID = 'urn:fdc:peppol.eu:edec:trns:transaction-statistics-reporting:1.0';
export const EUSR_NAMESPACE = 'urn:fdc:peppol:end-user-statistics-report:1.1';
export const EUSR_CUSTOMIZATION_ID = 'urn:fdc:peppol.eu:edec:trns:end-user-statistics-report:1.1';
export const REPORTING_PROFILE_ID = 'urn:fdc:peppol.eu:edec:bis:reporting:1.0';

function header(period: ReportingMonth, reporterSeatId: string): XmlElement {
  return el(
    'Header',
    {},
    el('ReportPeriod', {}, leaf('StartDate', period.startDate), leaf('EndDate', period.endDate)),
    leaf('ReporterID', reporterSeatId, { schemeID: 'CertSubjectCN' }),
  );
}

const keys = (ks: readonly SubtotalKey[]) =>
  ks.map((k) => leaf('Key', k.value, { metaSchemeID: k.metaSchemeID, schemeID: k.schemeID }));

/** The TSR 1.0 XML (the writer escapes every value; nothing is concatenated into markup). */
export function renderTsr(r: TransactionStatistics): string {
  return serialize(
    el(
      'TransactionStatisticsReport',
      { xmlns: TSR_NAMESPACE },
      leaf('CustomizationID', TSR_CUSTOMIZATION_ID),
      leaf('ProfileID', REPORTING_PROFILE_ID),
      header(r.period, r.reporterSeatId),
      el('Total', {}, leaf('Incoming', String(r.total.incoming)), leaf('Outgoing', String(r.total.outgoing))),
      r.subtotals.map((s) =>
        el(
          'Subtotal',
          { type: s.type },
          keys(s.keys),
          leaf('Incoming', String(s.incoming)),
          leaf('Outgoing', String(s.outgoing)),
        ),
      ),
    ),
  );
}

/** The EUSR 1.1 XML. */
export function renderEusr(r: EndUserStatistics): string {
  const counts = (c: { sending: number; receiving: number; sendingOrReceiving: number }) => [
    leaf('SendingEndUsers', String(c.sending)),
    leaf('ReceivingEndUsers', String(c.receiving)),
    leaf('SendingOrReceivingEndUsers', String(c.sendingOrReceiving)),
  ];
  return serialize(
    el(
      'EndUserStatisticsReport',
      { xmlns: EUSR_NAMESPACE },
      leaf('CustomizationID', EUSR_CUSTOMIZATION_ID),
      leaf('ProfileID', REPORTING_PROFILE_ID),
      header(r.period, r.reporterSeatId),
      el('FullSet', {}, counts(r.fullSet)),
      r.subsets.map((s) => el('Subset', { type: s.type }, keys(s.keys), counts(s))),
    ),
  );
}
