import { GatewayError } from '../core/gateway-error';
import { truncateForEcho } from '../core/truncate';
import type { DetectedFormat } from '../formats';
import { catalogueEntry, ROOT, VERSION, type RuleLevels } from '../formats/catalogue';

/**
 * Which rule packs validate which detected format, in the order they run: the format catalogue's entry
 * (src/formats/catalogue.ts) names them, the schema first, then the business rules the specification layers on it
 * (XRechnung after EN 16931, as KoSIT's scenarios do). Where the official artefact bundles the EN 16931 rules with
 * its own (SI-UBL/NLCIUS, Factur-X, Peppol's CEN copy), that artefact is used as published instead of adding the CEN
 * pack a second time.
 */

export interface PackRef {
  id: string;
  /** A version other than the current one (explicit `ruleSet=id@version`). */
  version?: string;
  /** For schema packs: the document root whose schema applies. */
  entry?: string;
  /** The format's re-levelled rules of this pack (catalogue `levels`); an explicit `ruleSet` runs packs as published. */
  levels?: RuleLevels;
}

export interface Selection {
  packs: PackRef[];
}

function notAvailable(format: DetectedFormat, reason: string): GatewayError {
  return new GatewayError(
    'NOT_IMPLEMENTED',
    `No validation rules are available for ${format.name} (${format.id}): ${reason}`,
    {
      details: { reason: 'RULES_NOT_AVAILABLE', format: format.id },
    },
  );
}

/** The format's rule packs from its catalogue entry, at their current (pinned) versions. */
export function selectRulePacks(format: DetectedFormat): Selection {
  const rules = catalogueEntry(format.id)?.rules;
  if (!rules) throw notAvailable(format, 'no rule packs are mapped to this format');
  if ('notAvailable' in rules) throw notAvailable(format, rules.notAvailable);
  const packs: PackRef[] = [];
  for (const use of rules.packs) {
    const id = use.pack.slice(0, use.pack.lastIndexOf('@'));
    if (use.entry === undefined) {
      packs.push({ id, ...(use.levels ? { levels: use.levels } : {}) });
      continue;
    }
    const entry = use.entry === ROOT ? format.rootName : use.entry === VERSION ? format.version : use.entry;
    if (!entry) throw notAvailable(format, 'no rule packs are mapped to this format');
    packs.push({ id, entry });
  }
  return { packs };
}

/**
 * An explicit `ruleSet`: comma-separated pack ids (`id` or `id@version`), run in the given order. Schema packs take
 * the entry for the document's root. The version, when given, must be the pinned one.
 */
export function parseRuleSet(
  ruleSet: string,
  format: DetectedFormat,
  pinned: (id: string) => Array<{ version: string; kind: 'xsd' | 'schematron'; entries?: string[] }>,
): Selection {
  const packs: PackRef[] = [];
  for (const given of ruleSet
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [id, version] = given.split('@') as [string, string | undefined];
    // Quoted back in refusals: bounded, as is the document's root name.
    const raw = truncateForEcho(given);
    const shownId = truncateForEcho(id);
    const versions = pinned(id);
    if (versions.length === 0)
      throw new GatewayError('BAD_REQUEST', `ruleSet: unknown rule pack "${shownId}"`, {
        details: { reason: 'UNKNOWN_RULE_SET', ruleSet: raw },
      });
    const def = version === undefined ? versions[0]! : versions.find((v) => v.version === version);
    if (!def) {
      throw new GatewayError(
        'BAD_REQUEST',
        `ruleSet: rule pack ${shownId} is pinned at version ${versions.map((v) => v.version).join(' or ')}, not ` +
          `${truncateForEcho(version ?? '')}`,
        {
          details: { reason: 'UNKNOWN_RULE_SET', ruleSet: raw },
        },
      );
    }
    if (def.kind === 'xsd') {
      const entry =
        def.entries?.find((e) => e === format.rootName) ?? (def.entries?.length === 1 ? def.entries[0] : undefined);
      if (!entry)
        throw new GatewayError(
          'BAD_REQUEST',
          `ruleSet: schema pack ${shownId} has no schema for <${truncateForEcho(format.rootName)}>`,
          { details: { reason: 'UNKNOWN_RULE_SET', ruleSet: raw } },
        );
      packs.push({ id, entry, ...(def !== versions[0] ? { version: def.version } : {}) });
    } else packs.push({ id, ...(def !== versions[0] ? { version: def.version } : {}) });
  }
  if (packs.length === 0)
    throw new GatewayError('BAD_REQUEST', 'ruleSet names no rule pack', { details: { reason: 'UNKNOWN_RULE_SET' } });
  return { packs };
}
