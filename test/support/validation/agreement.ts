import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isGatewayError } from '../../../src/core/gateway-error';
import { decodeXml, detectFormatFromDocument, extractFromPdf, isPdf, parseXml } from '../../../src/formats';
import { buildXdmTree, compiledPack, runCompiledPack, type XNode } from '../../../src/validation/compiled';
import { XPathError } from '../../../src/validation/compiled/model';
import type { RulePackStore } from '../../../src/validation/pack-store';
import { assertionOf, parseForSaxon, runSchematronPack, type SaxonDocument } from '../../../src/validation/schematron';
import { selectRulePacks } from '../../../src/validation/selection';
import type { Assertion } from '../../../src/validation/types';
import { CORPUS_DIR } from '../corpus';
import { CEN_SUITE_DIR, CEN_SUITE_DIRS, cenSuiteFiles, readCenTestSet } from './cen-suite';
import { variants, describeVariant, type MutationSource } from './mutations';

/**
 * Agreement of two Schematron engines: both run the same pack on the same document, and their fired assertions must be
 * the same ordered list (rule id, flag, location, text and the rest of each Assertion), or both must refuse the
 * document the same way (a dynamic XPath error: same code, reason and XPath error code). The cases come from three
 * sources: (a) the CEN EN 16931 unit suite, (b) every corpus document a Schematron pack applies to, (c) seeded
 * mutations of small corpus invoices and suite documents.
 */

/** A Schematron engine: runs pack `packId` (`id` or `id@version`) on a document's text. */
export type Engine = (packId: string, xmlText: string) => Promise<Assertion[]> | Assertion[];

export type CaseSource = 'cen-suite' | 'corpus' | 'mutation';

export interface AgreementCase {
  /** Where the document comes from, precise enough to regenerate it (file, suite case, seed and index). */
  name: string;
  source: CaseSource;
  packId: string;
  xmlText: string;
}

/** What an engine answered: its assertions, or the error it threw. */
export type Outcome =
  | { kind: 'assertions'; assertions: Assertion[] }
  | {
      kind: 'error';
      /** GatewayError code, or the error's name for anything else. */
      code: string;
      reason?: string;
      /** The XPath / XSLT error code (XPTY0004, FORG0001 …) of a rules evaluation failure. */
      errorCode?: string;
      message: string;
      /** Not the refusal a rule pack gives on a document it cannot judge: never counts as agreement. */
      unexpected: boolean;
    };

export interface Disagreement {
  name: string;
  source: CaseSource;
  packId: string;
  /**
   * assertions: both answered and the lists differ; outcome: one answered, the other threw; error: both threw,
   * differently; unexpected-error: an engine failed in a way no document should cause (missing pack, bug).
   */
  kind: 'assertions' | 'outcome' | 'error' | 'unexpected-error';
  /** For `assertions`: the index of the first assertion that differs, and its first differing field. */
  index?: number;
  field?: keyof Assertion | 'count';
  /** The rule concerned: the first differing assertion's rule id (A's, else B's). */
  ruleId?: string;
  a: Outcome;
  b: Outcome;
}

export interface PackTiming {
  cases: number;
  aMs: number;
  bMs: number;
}

export interface AgreementReport {
  cases: number;
  agreed: number;
  /** Cases where both engines refused the document with the same error. */
  agreedErrors: number;
  /** Assertions compared (those of engine A on agreeing and disagreeing cases). */
  assertions: number;
  disagreements: Disagreement[];
  /** Time spent in each engine, per pack. */
  timing: Record<string, PackTiming>;
}

const ASSERTION_FIELDS: ReadonlyArray<keyof Assertion> = [
  'ruleId',
  'flag',
  'location',
  'text',
  'artifact',
  'reasonCode',
  'ruleSet',
];

export async function runEngine(engine: Engine, packId: string, xmlText: string): Promise<Outcome> {
  try {
    return { kind: 'assertions', assertions: await engine(packId, xmlText) };
  } catch (e) {
    if (isGatewayError(e)) {
      const reason = typeof e.details?.['reason'] === 'string' ? e.details['reason'] : undefined;
      const errorCode = typeof e.details?.['errorCode'] === 'string' ? e.details['errorCode'] : undefined;
      return {
        kind: 'error',
        code: e.code,
        ...(reason !== undefined ? { reason } : {}),
        ...(errorCode !== undefined ? { errorCode } : {}),
        message: e.message,
        unexpected: !(e.code === 'UNPROCESSABLE' && reason === 'RULES_EVALUATION_FAILED'),
      };
    }
    const err = e instanceof Error ? e : new Error(String(e));
    return { kind: 'error', code: err.name, message: err.stack ?? err.message, unexpected: true };
  }
}

/** The disagreement between two outcomes of one case, or undefined when they agree. */
export function compareOutcomes(c: AgreementCase, a: Outcome, b: Outcome): Disagreement | undefined {
  const base = { name: c.name, source: c.source, packId: c.packId, a, b };
  if ((a.kind === 'error' && a.unexpected) || (b.kind === 'error' && b.unexpected))
    return { ...base, kind: 'unexpected-error' };
  if (a.kind === 'error' || b.kind === 'error') {
    if (a.kind !== b.kind) return { ...base, kind: 'outcome' };
    const ea = a as Extract<Outcome, { kind: 'error' }>;
    const eb = b as Extract<Outcome, { kind: 'error' }>;
    const same = ea.code === eb.code && ea.reason === eb.reason && ea.errorCode === eb.errorCode;
    return same ? undefined : { ...base, kind: 'error' };
  }
  const la = a.assertions;
  const lb = b.assertions;
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    const x = la[i];
    const y = lb[i];
    if (!x || !y) {
      return { ...base, kind: 'assertions', index: i, field: 'count', ruleId: (x ?? y)!.ruleId };
    }
    const field = ASSERTION_FIELDS.find((f) => x[f] !== y[f]);
    if (field) return { ...base, kind: 'assertions', index: i, field, ruleId: x.ruleId };
  }
  return undefined;
}

function showOutcome(o: Outcome): string {
  if (o.kind === 'error')
    return `threw ${o.code}${o.reason ? `/${o.reason}` : ''}${o.errorCode ? `/${o.errorCode}` : ''}: ${o.message}`;
  return `${o.assertions.length} assertion(s):\n${o.assertions.map((x, i) => `    ${i}: ${JSON.stringify(x)}`).join('\n')}`;
}

/** A disagreement as text: document, pack, rule, the first differing assertion of each engine, both full results. */
export function formatDisagreement(d: Disagreement): string {
  const head = `${d.name} [pack ${d.packId}]`;
  let what: string;
  if (d.kind === 'assertions') {
    const x = d.a.kind === 'assertions' ? d.a.assertions[d.index!] : undefined;
    const y = d.b.kind === 'assertions' ? d.b.assertions[d.index!] : undefined;
    what =
      `rule ${d.ruleId}: assertion #${d.index} differs in ${d.field}\n` +
      `  A: ${x ? JSON.stringify(x) : '(none)'}\n  B: ${y ? JSON.stringify(y) : '(none)'}`;
  } else if (d.kind === 'outcome') what = 'one engine threw, the other answered';
  else if (d.kind === 'error') what = 'both threw, with different errors';
  else what = 'an engine failed unexpectedly';
  return `${head}: ${what}\n  engine A ${showOutcome(d.a)}\n  engine B ${showOutcome(d.b)}`;
}

export interface CompareOptions {
  /** Called after each case (progress, early stop by throwing). */
  onCase?(c: AgreementCase, d: Disagreement | undefined): void;
}

/** Runs every case through both engines (A first) and reports each disagreement and the time each engine took. */
export async function compareEngines(
  engineA: Engine,
  engineB: Engine,
  cases: Iterable<AgreementCase> | AsyncIterable<AgreementCase>,
  options: CompareOptions = {},
): Promise<AgreementReport> {
  const report: AgreementReport = {
    cases: 0,
    agreed: 0,
    agreedErrors: 0,
    assertions: 0,
    disagreements: [],
    timing: {},
  };
  for await (const c of cases) {
    const t0 = performance.now();
    const a = await runEngine(engineA, c.packId, c.xmlText);
    const t1 = performance.now();
    const b = await runEngine(engineB, c.packId, c.xmlText);
    const t2 = performance.now();
    const timing = (report.timing[c.packId] ??= { cases: 0, aMs: 0, bMs: 0 });
    timing.cases++;
    timing.aMs += t1 - t0;
    timing.bMs += t2 - t1;
    report.cases++;
    if (a.kind === 'assertions') report.assertions += a.assertions.length;
    const d = compareOutcomes(c, a, b);
    if (d) report.disagreements.push(d);
    else {
      report.agreed++;
      if (a.kind === 'error') report.agreedErrors++;
    }
    options.onCase?.(c, d);
  }
  return report;
}

// ---------------------------------------------------------------------------------------------------------------------
// Engines

/**
 * The SaxonJS engine (the validator's own path): the pack from the store, the document parsed once by SaxonJS and
 * reused while consecutive calls give the same text (a document's packs are consecutive cases).
 */
export function saxonEngine(store: RulePackStore): Engine {
  let lastText: string | undefined;
  let lastDoc: Promise<SaxonDocument> | undefined;
  return async (packId, xmlText) => {
    const [id, version] = packId.split('@') as [string, string | undefined];
    const pack = await store.get(id, version);
    if (pack.kind !== 'schematron') throw new Error(`${packId} is a schema pack, not a Schematron pack`);
    if (xmlText !== lastText || !lastDoc) {
      lastText = xmlText;
      lastDoc = parseForSaxon(xmlText);
    }
    return runSchematronPack(pack, await lastDoc);
  };
}

/** Documents SaxonJS answered after the compiled rules raised a dynamic error on them (see compiledEngine). */
export interface FallbackLog {
  count: number;
  cases: string[];
}

/**
 * The compiled engine as the validator runs it (src/validation/compiled). A pack the compiler refuses runs on SaxonJS,
 * as in the validator (which packs those are is pinned by test/unit/validation/compiled/engine.test.ts). A dynamic
 * error of the compiled rules hands the document to SaxonJS, as the validator does, so the result is SaxonJS's: its
 * refusal (then both engines refused) or its answer. Answers are counted in `fallbacks` (XPath lets SaxonJS skip an
 * error a full evaluation meets: an existential comparison stops at its first match, so a later item's error is never
 * raised), and the gate bounds them.
 */
export function compiledEngine(store: RulePackStore, fallbacks?: FallbackLog): Engine {
  const reference = saxonEngine(store);
  let lastText: string | undefined;
  let lastTree: XNode | undefined;
  return async (packId, xmlText) => {
    const [id, version] = packId.split('@') as [string, string | undefined];
    const pack = await store.get(id, version);
    if (pack.kind !== 'schematron') throw new Error(`${packId} is a schema pack, not a Schematron pack`);
    const c = compiledPack(pack);
    if (!c.ok) return reference(packId, xmlText);
    if (xmlText !== lastText || !lastTree) {
      lastText = xmlText;
      lastTree = buildXdmTree(parseXml(xmlText));
    }
    try {
      return runCompiledPack(c, lastTree).map((f) => assertionOf(pack, f));
    } catch (e) {
      if (!(e instanceof XPathError)) throw e;
      // SaxonJS judges the document, as in the validator: its refusal (the usual case: both engines refuse) or its
      // answer, which is a hand-over to count.
      const answer = await reference(packId, xmlText);
      if (fallbacks) {
        fallbacks.count++;
        if (fallbacks.cases.length < 20) fallbacks.cases.push(`${packId}: ${e.code} ${e.message}`);
      }
      return answer;
    }
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// (a) The CEN EN 16931 unit suite

const INVOICE_ROOTS = new Set(['Invoice', 'CreditNote', 'CrossIndustryInvoice']);

/** Every test document of the CEN suite, with the pack the suite applies to it. */
export function cenSuiteCases(): AgreementCase[] {
  const out: AgreementCase[] = [];
  for (const { dir, file, ruleSet } of cenSuiteFiles()) {
    readCenTestSet(path.join(CEN_SUITE_DIR, dir, file)).forEach((c, k) => {
      out.push({
        name: `cen-suite:${dir}/${file}#${k + 1}`,
        source: 'cen-suite',
        packId: ruleSet,
        xmlText: c.document,
      });
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// (b) The corpus

export interface CorpusDocument {
  /** Path relative to the corpus, with " (embedded XML)" for a PDF's attachment. */
  name: string;
  xmlText: string;
  formatId: string;
  rootName: string;
  /** Schematron packs of the format, in the validator's order; previous pinned versions as `id@version` after them. */
  packIds: string[];
  bytes: number;
}

export interface CorpusSkip {
  name: string;
  reason: string;
}

/** Every file below `dir`, as paths relative to it, sorted. */
export function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${entry}` : entry;
    if (statSync(path.join(dir, r)).isDirectory()) out.push(...listFiles(dir, r));
    else out.push(r);
  }
  return out;
}

/** The CEN suite's testSet files are not documents; (a) covers their content. */
const SUITE_FOLDERS = new Set(
  CEN_SUITE_DIRS.map((d) => path.relative(CORPUS_DIR, path.join(CEN_SUITE_DIR, d.dir)).split(path.sep).join('/')),
);

/**
 * Every corpus document (XML, and the XML inside a Factur-X PDF) whose detected format has Schematron packs, with
 * those packs (the validator's selection); `previous` adds the older pinned versions of those packs (the transition
 * window) as cases of their own. Documents no pack applies to are listed with the reason.
 */
export function corpusDocuments(
  manifestPacks: ReadonlyArray<{ id: string; version: string; kind: string }>,
  options: { previous?: boolean } = {},
): { documents: CorpusDocument[]; skipped: CorpusSkip[] } {
  const documents: CorpusDocument[] = [];
  const skipped: CorpusSkip[] = [];
  for (const rel of listFiles(CORPUS_DIR)) {
    if (SUITE_FOLDERS.has(path.posix.dirname(rel))) continue;
    if (!/\.(xml|pdf)$/i.test(rel)) continue;
    let name = rel;
    try {
      let bytes: Buffer = readFileSync(path.join(CORPUS_DIR, rel));
      let container: 'pdf' | undefined;
      if (isPdf(bytes)) {
        bytes = extractFromPdf(bytes).xml;
        container = 'pdf';
        name = `${rel} (embedded XML)`;
      }
      const { text } = decodeXml(bytes);
      const format = detectFormatFromDocument(parseXml(text), container ? { container } : {});
      const ids = selectRulePacks(format)
        .packs.map((p) => p.id)
        .filter((id) => manifestPacks.find((m) => m.id === id)?.kind === 'schematron');
      if (ids.length === 0) {
        skipped.push({ name, reason: `${format.id}: no Schematron pack` });
        continue;
      }
      const older = options.previous
        ? ids.flatMap((id) =>
            manifestPacks
              .filter((m) => m.id === id)
              .slice(1)
              .map((m) => `${m.id}@${m.version}`),
          )
        : [];
      documents.push({
        name,
        xmlText: text,
        formatId: format.id,
        rootName: format.rootName,
        packIds: [...ids, ...older],
        bytes: Buffer.byteLength(text),
      });
    } catch (e) {
      skipped.push({ name, reason: isGatewayError(e) ? `${e.code}: ${e.message}` : String(e) });
    }
  }
  return { documents, skipped };
}

export function corpusCases(documents: readonly CorpusDocument[]): AgreementCase[] {
  return documents.flatMap((d) =>
    d.packIds.map((packId) => ({ name: `corpus:${d.name}`, source: 'corpus' as const, packId, xmlText: d.xmlText })),
  );
}

// ---------------------------------------------------------------------------------------------------------------------
// (c) Seeded mutations

/**
 * The share of the variants each pack gets (relative weights). A variant is checked against one pack, so a variant
 * costs one SaxonJS run: ~15–25 ms for the CEN rules on a suite fragment or a small invoice with the light national
 * packs (XRechnung, Peppol BIS, MLS, Factur-X MINIMUM), 40–170 ms for the packs that embed the whole CEN rule set or
 * load code lists (SI-UBL, NLCIUS, Factur-X BASIC and above). The shares favour the cheap runs and still give every
 * pack about a hundred variants or more in 10,000. A pack missing here gets no variants.
 */
export const DEFAULT_PACK_SHARES: Readonly<Record<string, number>> = {
  'en16931-ubl': 45,
  'en16931-cii': 8,
  'xrechnung-ubl': 8,
  'xrechnung-cii': 6,
  'peppol-bis3-ubl': 8,
  'peppol-cen-en16931-ubl': 3,
  'si-ubl-2.0': 3,
  'si-ubl-2.0-gaccount': 2,
  'nlcius-cii': 1,
  'facturx-minimum': 6,
  'facturx-basic': 1,
  'facturx-en16931': 1,
  'facturx-extended': 1,
  'peppol-mls': 8,
};

export interface MutationSourceOptions {
  /** Relative share of the variants per pack; default DEFAULT_PACK_SHARES. */
  shares?: Readonly<Record<string, number>>;
  /** Per pack, the smallest corpus documents taken as sources. Default 3. */
  perPack?: number;
  /** Corpus documents above this size are not taken (bytes). Default 32 KiB. */
  maxBytes?: number;
  /** For the CEN packs (en16931-ubl / -cii), the part of their share that goes to the suite's documents. Default 0.9. */
  cenSuitePart?: number;
}

/** Roots of the documents mutated: invoices and credit notes (UBL, CII), and Peppol's status messages (MLS). */
const MUTATED_ROOTS = new Set([...INVOICE_ROOTS, 'ApplicationResponse']);

/**
 * The sources of the mutation generator, each bound to one pack: for every pack with a share, the smallest corpus
 * documents it applies to, and for the CEN packs also the suite's invoice documents (small fragments, the cheapest to
 * judge). Weights split each pack's share among its sources.
 */
export function mutationSources(
  documents: readonly CorpusDocument[],
  options: MutationSourceOptions = {},
): MutationSource[] {
  const shares = options.shares ?? DEFAULT_PACK_SHARES;
  const perPack = options.perPack ?? 3;
  const maxBytes = options.maxBytes ?? 32 * 1024;
  const cenPart = options.cenSuitePart ?? 0.9;
  // Suite documents with content: a few are a bare root (the rule tests an empty document), nothing to mutate.
  const suite = cenSuiteCases().filter((c) => {
    const root = parseXml(c.xmlText).documentElement;
    return !!root && INVOICE_ROOTS.has(root.localName ?? '') && root.getElementsByTagNameNS('*', '*').length > 0;
  });
  const out: MutationSource[] = [];
  for (const packId of Object.keys(shares).sort()) {
    const share = shares[packId]!;
    if (share <= 0) continue;
    const corpus = documents
      .filter((d) => MUTATED_ROOTS.has(d.rootName) && d.bytes <= maxBytes && d.packIds.includes(packId))
      .sort((x, y) => x.bytes - y.bytes || (x.name < y.name ? -1 : 1))
      .slice(0, perPack);
    const fragments = suite.filter((c) => c.packId === packId);
    if (corpus.length === 0 && fragments.length === 0)
      throw new Error(`mutation sources: no corpus document or suite case for pack ${packId}`);
    const corpusShare = fragments.length === 0 ? share : corpus.length === 0 ? 0 : share * (1 - cenPart);
    for (const d of corpus)
      out.push({
        name: `corpus:${d.name}`,
        xmlText: d.xmlText,
        packIds: [packId],
        weight: corpusShare / corpus.length,
      });
    for (const c of fragments)
      out.push({
        name: c.name,
        xmlText: c.xmlText,
        packIds: [packId],
        weight: (share - corpusShare) / fragments.length,
      });
  }
  return out;
}

/** `count` variants of `seed` as cases: one per variant and pack of its source. */
export function* mutationCases(
  sources: readonly MutationSource[],
  options: { seed: number; count: number; start?: number },
): Generator<AgreementCase> {
  for (const v of variants(sources, options)) {
    const name = describeVariant(v);
    for (const packId of v.packIds) yield { name, source: 'mutation', packId, xmlText: v.xmlText };
  }
}
