import { GatewayError } from '../../core/gateway-error';
import type { DetectedFormat } from '../../formats';
import { parseXml } from '../../formats';
import type { ValidationResult, Validator } from '../../validation';
import {
  EUSR_CUSTOMIZATION_ID,
  EUSR_NAMESPACE,
  REPORTING_PROFILE_ID,
  TSR_CUSTOMIZATION_ID,
  TSR_NAMESPACE,
} from './render';
import type { ReportKind } from './types';

/** The pinned official packs (transforms/rules-manifest.json, all from phive-rules-peppol 4.3.7): schema, then rules. */
export const REPORT_RULE_PACKS: Readonly<Record<ReportKind, string>> = {
  tsr: 'peppol-tsr-xsd@1.0.1,peppol-tsr@1.0.5',
  eusr: 'peppol-eusr-xsd@1.1,peppol-eusr@1.1.5',
};

/**
 * How the validator sees the reports. They are none of the business document types; like the Tax Data Document they
 * borrow the network document type (the validator reads only the root, the ids and the name).
 */
export const REPORT_FORMATS: Readonly<Record<ReportKind, DetectedFormat>> = {
  tsr: {
    id: 'peppol-tsr',
    name: 'Peppol Transaction Statistics Report 1.0',
    syntax: 'other',
    documentType: 'MessageLevelStatus',
    urn: `${TSR_NAMESPACE}::TransactionStatisticsReport##${TSR_CUSTOMIZATION_ID}::1.0`,
    rootName: 'TransactionStatisticsReport',
    rootNamespace: TSR_NAMESPACE,
    customizationId: TSR_CUSTOMIZATION_ID,
    profileId: REPORTING_PROFILE_ID,
  },
  eusr: {
    id: 'peppol-eusr',
    name: 'Peppol End User Statistics Report 1.1',
    syntax: 'other',
    documentType: 'MessageLevelStatus',
    urn: `${EUSR_NAMESPACE}::EndUserStatisticsReport##${EUSR_CUSTOMIZATION_ID}::1.1`,
    rootName: 'EndUserStatisticsReport',
    rootNamespace: EUSR_NAMESPACE,
    customizationId: EUSR_CUSTOMIZATION_ID,
    profileId: REPORTING_PROFILE_ID,
  },
};

/** Validates a rendered report with the official XSD and Schematron of its kind through the gateway's validator. */
export async function validateReport(
  validator: Pick<Validator, 'validateDocument'>,
  kind: ReportKind,
  xml: string,
): Promise<ValidationResult> {
  return validator.validateDocument(parseXml(xml), xml, REPORT_FORMATS[kind], { ruleSet: REPORT_RULE_PACKS[kind] });
}

/** The first errors of a failed validation, as one line. */
export function reportErrors(result: ValidationResult): string {
  return result.assertions
    .filter((a) => a.flag === 'error')
    .slice(0, 5)
    .map((a) => `[${a.ruleId}] ${a.text}`)
    .join('; ');
}

/** Throws when a report breaks the official rules: such a report is never stored nor sent. */
export function assertValidReport(kind: ReportKind, month: string, result: ValidationResult): void {
  if (result.isValid) return;
  throw new GatewayError(
    'UNPROCESSABLE',
    `the ${kind.toUpperCase()} of ${month} breaks the official rules and is not sent: ${reportErrors(result)}`.slice(
      0,
      1000,
    ),
    { details: { reason: 'REPORT_INVALID', kind, month } },
  );
}
