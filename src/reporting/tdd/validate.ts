import { GatewayError } from '../../core/gateway-error';
import type { DetectedFormat } from '../../formats';
import { parseXml } from '../../formats';
import type { ValidationResult, Validator } from '../../validation';
import { TDD_CUSTOMIZATION_ID, TDD_NAMESPACE, TDD_PROFILE_ID } from './render';
import type { TddVersion } from './types';

/**
 * The pinned official rule packs per TDD version (transforms/rules-manifest.json): the schema, then the TDD rules with
 * the CEN EN 16931 and Peppol rules on the reported document. TDD 1.1.0 (XSD and Schematron of 2026-09-14) has no
 * pinned packs: Maven Central as reached by rules:fetch serves the ViDA artefacts only up to TDD 1.0.0
 * (peppol-vida-tdd-datatypes 0.2.1, phive-rules-peppol 4.3.7), see docs/decisions.md.
 */
export const TDD_RULE_PACKS: Readonly<Record<TddVersion, string | undefined>> = {
  '1.0.0': 'peppol-vida-tdd-xsd@1.0.0,peppol-vida-tdd@1.0.0',
  '1.1.0': undefined,
};

/** The validator reads the root, the ids and the name of a format; the document type is not one of the invoice types. */
const TDD_FORMAT: DetectedFormat = {
  id: 'peppol-vida-tdd',
  name: 'Peppol ViDA pilot Tax Data Document',
  syntax: 'other',
  documentType: 'MessageLevelStatus',
  urn: `${TDD_NAMESPACE}::TaxData##${TDD_CUSTOMIZATION_ID}::1.0`,
  rootName: 'TaxData',
  rootNamespace: TDD_NAMESPACE,
  customizationId: TDD_CUSTOMIZATION_ID,
  profileId: TDD_PROFILE_ID,
};

/**
 * Validates a rendered TDD with the official artefacts of its version through the gateway's validator. A version
 * without pinned artefacts is refused (NOT_IMPLEMENTED), never passed unchecked.
 */
export async function validateTdd(
  validator: Pick<Validator, 'validateDocument'>,
  xml: string,
  version: TddVersion,
): Promise<ValidationResult> {
  const ruleSet = TDD_RULE_PACKS[version];
  if (!ruleSet)
    throw new GatewayError(
      'NOT_IMPLEMENTED',
      `No validation rules are pinned for the Tax Data Document ${version}: its XSD and Schematron are not served by ` +
        'the registry rules:fetch uses; validate TDD 1.0.0 documents or pin the artefacts first',
      { details: { reason: 'RULES_NOT_AVAILABLE', format: `peppol-vida-tdd@${version}` } },
    );
  const doc = parseXml(xml);
  return validator.validateDocument(doc, xml, TDD_FORMAT, { ruleSet });
}
