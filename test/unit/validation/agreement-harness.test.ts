import { createHash } from 'node:crypto';
import { XMLSerializer } from '@xmldom/xmldom';
import { GatewayError } from '../../../src/core/gateway-error';
import { parseXml } from '../../../src/formats';
import { loadManifest } from '../../../src/validation/manifest';
import type { Assertion } from '../../../src/validation/types';
import {
  cenSuiteCases,
  compareEngines,
  corpusCases,
  corpusDocuments,
  DEFAULT_PACK_SHARES,
  formatDisagreement,
  mutationCases,
  mutationSources,
  saxonEngine,
  type AgreementCase,
  type CorpusDocument,
  type Engine,
} from '../../support/validation/agreement';
import {
  applyMutation,
  createRng,
  MUTATION_KINDS,
  variant,
  variants,
  type MutationSource,
} from '../../support/validation/mutations';
import { requirePacks, validator } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(120_000);

/**
 * The agreement harness of the compiled Schematron engine (test/support/validation/agreement.ts, mutations.ts): the
 * seeded generator is deterministic and produces every kind of mutation as well-formed XML, the comparer finds and
 * names a planted disagreement, and SaxonJS agrees with itself on a sample of each source.
 */

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

let documents: CorpusDocument[];
let sources: MutationSource[];

beforeAll(() => {
  documents = corpusDocuments(loadManifest().packs, { previous: true }).documents;
  sources = mutationSources(documents);
});

describe('seeded mutation generator', () => {
  it('gives byte-identical variants for the same seed, others for another seed', () => {
    const run = (seed: number): string[] => [...variants(sources, { seed, count: 40 })].map((v) => v.xmlText);
    const first = run(42);
    expect(run(42).map(sha)).toEqual(first.map(sha));
    const other = run(43);
    expect(other.filter((x, i) => x !== first[i]).length).toBeGreaterThan(30);
    // A variant regenerated alone (from a report's seed and index) is the one the sequence gave.
    expect(variant(sources, 42, 17).xmlText).toBe(first[17]);
  });

  it('produces every kind of mutation, 1–4 per variant, as well-formed XML that differs from its source', () => {
    const seen = new Map<string, number>();
    let changed = 0;
    const all = [...variants(sources, { seed: 7, count: 200 })];
    for (const v of all) {
      expect(v.mutations.length).toBeGreaterThanOrEqual(1);
      expect(v.mutations.length).toBeLessThanOrEqual(4);
      for (const m of v.mutations) seen.set(m.kind, (seen.get(m.kind) ?? 0) + 1);
      expect(() => parseXml(v.xmlText)).not.toThrow();
      const source = sources.find((s) => s.name === v.source)!;
      if (new XMLSerializer().serializeToString(parseXml(source.xmlText)) !== v.xmlText) changed++;
    }
    expect([...MUTATION_KINDS].filter((k) => !seen.has(k))).toEqual([]);
    // Only a move between identical siblings or the like leaves a document as it was.
    expect(changed).toBeGreaterThan(190);
    // Every pack with a share has sources to draw from, and the draws spread over the packs.
    const drawable = new Set(sources.filter((x) => (x.weight ?? 1) > 0).flatMap((x) => x.packIds));
    expect(Object.keys(DEFAULT_PACK_SHARES).filter((p) => !drawable.has(p))).toEqual([]);
    expect(new Set(all.flatMap((v) => v.packIds)).size).toBeGreaterThanOrEqual(10);
  });

  it('alters values in the ways rules tell apart, and multiplies lines with new ids', () => {
    const ubl = documents.find((d) => d.name === 'en16931/ubl-examples/ubl-tc434-example1.xml')!;
    const amounts = new Set<string>();
    const dates = new Set<string>();
    for (let k = 0; k < 150; k++) {
      const rng = createRng(99, k);
      amounts.add(applyMutation(parseXml(ubl.xmlText), 'amount', rng)!.detail.split(' → ')[1]!);
      dates.add(applyMutation(parseXml(ubl.xmlText), 'date', rng)!.detail.split(' → ')[1]!);
    }
    const kinds = {
      empty: /^""$/,
      negative: /^"-\d/,
      exponent: /^"[-\d.]+e[-\d]+"$/i,
      padded: /^"\s|\s"$/,
      manyDecimals: /\.\d{5,}"$/,
      nonNumeric: /^"[^-\d\s"]/,
    };
    for (const [kind, re] of Object.entries(kinds))
      expect([kind, [...amounts].some((a) => re.test(a))]).toEqual([kind, true]);
    for (const v of ['"2024-02-29"', '"2023-02-29"']) expect(dates).toContain(v);

    const doc = parseXml(ubl.xmlText);
    const before = doc.getElementsByTagNameNS('*', 'InvoiceLine').length;
    const m = applyMutation(doc, 'lines', createRng(5))!;
    const lines = doc.getElementsByTagNameNS('*', 'InvoiceLine');
    const added = Number(/×(\d+)/.exec(m.detail)![1]);
    expect(lines.length).toBe(before + added);
    const ids: string[] = [];
    for (let k = 0; k < lines.length; k++) {
      const line = lines.item(k)!;
      for (let c = line.firstChild; c; c = c.nextSibling)
        if (c.nodeType === 1 && c.localName === 'ID') ids.push(c.textContent ?? '');
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('comparer', () => {
  const CASE_COUNT = 6;
  let cases: AgreementCase[];
  const results = new Map<string, Assertion[]>();
  // Engine A replays SaxonJS's answers (computed once), so each planted fault is checked without running SaxonJS again.
  const replay: Engine = (packId, xml) => structuredClone(results.get(`${packId}\0${xml}`)!);

  beforeAll(async () => {
    requirePacks(['en16931-ubl']);
    const saxon = saxonEngine(validator().store);
    cases = [];
    for (const c of cenSuiteCases()) {
      const found = await saxon(c.packId, c.xmlText);
      if (found.length >= 2) {
        cases.push(c);
        results.set(`${c.packId}\0${c.xmlText}`, found);
      }
      if (cases.length === CASE_COUNT) break;
    }
    expect(cases).toHaveLength(CASE_COUNT);
  });

  const target = (): AgreementCase => cases[3]!;
  const faulty =
    (fault: (found: Assertion[]) => Assertion[]): Engine =>
    (packId, xml) => {
      const found = replay(packId, xml) as Assertion[];
      return xml === target().xmlText ? fault(found) : found;
    };

  it('agrees with itself', async () => {
    const report = await compareEngines(replay, replay, cases);
    expect(report).toMatchObject({ cases: CASE_COUNT, agreed: CASE_COUNT, disagreements: [] });
    expect(report.assertions).toBeGreaterThanOrEqual(2 * CASE_COUNT);
  });

  it('reports a dropped assertion with the document, the rule and both results', async () => {
    const report = await compareEngines(
      replay,
      faulty((found) => found.slice(1)),
      cases,
    );
    expect(report.agreed).toBe(CASE_COUNT - 1);
    expect(report.disagreements).toHaveLength(1);
    const d = report.disagreements[0]!;
    const expected = results.get(`${target().packId}\0${target().xmlText}`)!;
    expect(d).toMatchObject({ name: target().name, packId: 'en16931-ubl', kind: 'assertions', index: 0 });
    expect(d.ruleId).toBe(expected[0]!.ruleId);
    const text = formatDisagreement(d);
    expect(text).toContain(target().name);
    expect(text).toContain(`rule ${expected[0]!.ruleId}`);
    // Both full results are in the report.
    for (const a of expected) expect(text).toContain(JSON.stringify(a));
  });

  it('reports an altered text, flag or location, naming the field', async () => {
    for (const [field, value] of [
      ['text', 'another text'],
      ['flag', 'warning'],
      ['location', '/Invoice'],
    ] as const) {
      const report = await compareEngines(
        replay,
        faulty((found) => found.map((a, i) => (i === 1 ? { ...a, [field]: value } : a))),
        cases,
      );
      expect(report.disagreements.map((d) => [d.name, d.kind, d.index, d.field])).toEqual([
        [target().name, 'assertions', 1, field],
      ]);
    }
  });

  it('reports an answer against a refusal, different refusals, and unexpected failures', async () => {
    const refusal = (errorCode: string) => (): never => {
      throw new GatewayError('UNPROCESSABLE', 'rules failed', {
        details: { reason: 'RULES_EVALUATION_FAILED', pack: 'en16931-ubl', errorCode },
      });
    };
    const one = [target()];
    const throwing = faulty(refusal('XPTY0004'));
    expect((await compareEngines(replay, throwing, one)).disagreements.map((d) => d.kind)).toEqual(['outcome']);
    expect((await compareEngines(throwing, throwing, one)).agreedErrors).toBe(1);
    const other = faulty(refusal('FORG0001'));
    expect((await compareEngines(throwing, other, one)).disagreements.map((d) => d.kind)).toEqual(['error']);
    const broken: Engine = () => {
      throw new Error('not built');
    };
    // An engine failure that no document causes never counts as agreement, not even when both fail alike.
    expect((await compareEngines(broken, broken, one)).disagreements.map((d) => d.kind)).toEqual(['unexpected-error']);
    expect(formatDisagreement((await compareEngines(replay, broken, one)).disagreements[0]!)).toContain('not built');
  });
});

describe('SaxonJS agrees with SaxonJS on a sample of each source', () => {
  const PER_SOURCE = 20;
  const every = <T>(list: T[], n: number): T[] => list.filter((_, i) => i % Math.ceil(list.length / n) === 0);

  it.each(['cen-suite', 'corpus', 'mutation'] as const)('%s', async (source) => {
    const sample =
      source === 'cen-suite'
        ? every(cenSuiteCases(), PER_SOURCE)
        : source === 'corpus'
          ? every(corpusCases(documents.filter((d) => d.bytes < 16 * 1024)), PER_SOURCE)
          : [...mutationCases(sources, { seed: 2026, count: PER_SOURCE })];
    expect(sample.length).toBeGreaterThanOrEqual(PER_SOURCE - 1);
    requirePacks([...new Set(sample.map((c) => c.packId.split('@')[0]!))]);
    // Two engines with their own parse caches over one pack store (the packs are loaded once).
    const report = await compareEngines(saxonEngine(validator().store), saxonEngine(validator().store), sample);
    expect(report.disagreements.map(formatDisagreement)).toEqual([]);
    expect(report.cases).toBe(sample.length);
    expect(report.assertions).toBeGreaterThan(0);
  });
});
