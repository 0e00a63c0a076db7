import { GatewayError } from '../../core/gateway-error';
import type { DetectedFormat } from '../../formats';
import { parseXml } from '../../formats';
import type { ValidationResult, Validator } from '../../validation';
import { DEFAULT_TDD_PROFILE, TDD_PROFILES, tddProfile, type TddProfile } from './profiles';
import type { TddProfileId, TddVersion } from './types';

/**
 * The pinned official rule packs of the ViDA pilot profile per TDD version (transforms/rules-manifest.json): the
 * schema, then the TDD rules with the CEN EN 16931 and Peppol rules on the reported document. TDD 1.1.0 (XSD and
 * Schematron of 2026-09-14) has no pinned packs: Maven Central as reached by rules:fetch serves the ViDA artefacts
 * only up to TDD 1.0.0 (peppol-vida-tdd-datatypes 0.2.1, phive-rules-peppol 4.3.7), see docs/decisions.md. The packs
 * of every profile are in TDD_PROFILES (`tddRulePacks`).
 */
export const TDD_RULE_PACKS: Readonly<Record<TddVersion, string | undefined>> = {
  '1.0.0': TDD_PROFILES['vida-1'].versions['1.0.0']?.rulePacks,
  '1.1.0': TDD_PROFILES['vida-1'].versions['1.1.0']?.rulePacks,
};

/** The pinned rule packs of a profile's version (the validator's ruleSet), undefined when none are pinned. */
export function tddRulePacks(profile: TddProfileId, version: TddVersion): string | undefined {
  return tddProfile(profile).versions[version]?.rulePacks;
}

/**
 * The format the validator is given for a profile's documents: it reads the root, the ids and the name; the
 * document type is not one of the invoice types.
 */
export function tddFormat(profile: TddProfileId = DEFAULT_TDD_PROFILE): DetectedFormat {
  const p = tddProfile(profile);
  return {
    id: p.formatId,
    name: p.name,
    syntax: 'other',
    documentType: 'MessageLevelStatus',
    urn: `${p.namespace}::TaxData##${p.customizationId}::1.0`,
    rootName: 'TaxData',
    rootNamespace: p.namespace,
    customizationId: p.customizationId,
    profileId: p.profileId,
  };
}

function refuseUnpinned(p: TddProfile, version: TddVersion): never {
  const has = Object.keys(p.versions).join(', ');
  throw new GatewayError(
    'NOT_IMPLEMENTED',
    p.versions[version]
      ? `No validation rules are pinned for the ${p.name} ${version}: its artefacts are not served by the registry ` +
          `rules:fetch uses; validate a version whose artefacts are pinned or pin them first`
      : `The ${p.name} has no version ${version} (it has ${has})`,
    { details: { reason: 'RULES_NOT_AVAILABLE', format: `${p.formatId}@${version}` } },
  );
}

/**
 * Validates a rendered TDD with the official artefacts of its profile (default `vida-1`) and version through the
 * gateway's validator. A version without pinned artefacts is refused (NOT_IMPLEMENTED), never passed unchecked; so is
 * a document that is not a pxs:TaxData of the profile's namespace (BAD_REQUEST), which the profile's Schematron
 * would otherwise pass without firing a rule. The result's ruleSets say what ran: for a profile published without a
 * schema (`sk-1`) there is no schema outcome.
 */
export async function validateTdd(
  validator: Pick<Validator, 'validateDocument'>,
  xml: string,
  version: TddVersion,
  profile: TddProfileId = DEFAULT_TDD_PROFILE,
): Promise<ValidationResult> {
  const p = tddProfile(profile);
  const ruleSet = p.versions[version]?.rulePacks;
  if (!ruleSet) refuseUnpinned(p, version);
  const doc = parseXml(xml);
  const root = doc.documentElement;
  const local = root?.localName ?? root?.nodeName;
  if (!root || local !== 'TaxData' || root.namespaceURI !== p.namespace)
    throw new GatewayError(
      'BAD_REQUEST',
      `The document is not a ${p.name}: its root is {${root?.namespaceURI ?? ''}}${local ?? '(none)'}, ` +
        `not {${p.namespace}}TaxData`,
      { details: { reason: 'TDD_PROFILE_MISMATCH', format: `${p.formatId}@${version}` } },
    );
  return validator.validateDocument(doc, xml, tddFormat(p.id), { ruleSet });
}
