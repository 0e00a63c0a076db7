import { loadManifest } from '../../../src/validation/manifest';
import type { RulePackStore } from '../../../src/validation/pack-store';
import {
  cenSuiteCases,
  compareEngines,
  corpusCases,
  corpusDocuments,
  formatDisagreement,
  mutationCases,
  mutationSources,
  saxonEngine,
  compiledEngine,
  type AgreementCase,
  type AgreementReport,
  type CorpusDocument,
  type Engine,
  type FallbackLog,
} from './agreement';
import type { MutationSource } from './mutations';
import { requirePacks, validator } from '../../unit/validation/support';

/**
 * Engine B, the engine under test: the compiled Schematron engine (src/validation/compiled), exactly as the validator
 * runs it (compiledEngine in agreement.ts says how refused packs and dynamic errors are held). Engine A, the
 * reference, is SaxonJS through the validator's own path (runSchematronPack).
 */
const fallbacks: FallbackLog = { count: 0, cases: [] };
const engineB = (store: RulePackStore): Engine => compiledEngine(store, fallbacks);
/** At most this share of cases may be handed to SaxonJS after a dynamic error of the compiled rules. */
const MAX_FALLBACK_SHARE = 0.005;

/**
 * The gate of the compiled Schematron engine: on every case it must fire the same assertions as SaxonJS, in the same
 * order, with the same rule id, flag, location and text (the validate answer is byte-identical whichever engine ran),
 * or refuse the document with the same error. Cases: (a) the CEN EN 16931 unit suite, (b) every corpus document a
 * Schematron pack applies to, with every pinned version of its packs, (c) seeded mutations of small corpus invoices
 * and suite documents, one pack each (test/support/validation/agreement.ts). CI runs the fixed seed; a benchmark or a
 * hunt for disagreements sets AGREEMENT_SEED (and AGREEMENT_VARIANTS) to other values.
 */

const SEED = Number(process.env['AGREEMENT_SEED'] ?? 20261129);
const VARIANTS = Number(process.env['AGREEMENT_VARIANTS'] ?? 10_000);
/** Variants per test, so a slow machine shows progress and a disagreement is reported without waiting for the rest. */
const CHUNK = 500;
/** Disagreements printed in full per test; the rest are counted. */
const SHOWN = 5;

// Each chunk runs 500 documents through both engines (SaxonJS: ~25 ms each); a loaded 2-core machine is slower.
jest.setTimeout(600_000);

export interface GatePart {
  /** Run (a) the CEN suite and (b) the corpus in this file. */
  suites: boolean;
  /** The share of (c) this file runs: variants [from × VARIANTS, to × VARIANTS). */
  from: number;
  to: number;
}

/**
 * Defines the gate's tests for one test file. The gate is split over two files so that jest's two workers share its
 * 10,000 variants (SaxonJS takes about 50 ms of CPU per variant).
 */
export function agreementGate(part: GatePart): void {
  function expectAgreement(report: AgreementReport, floor: number): void {
    const handedOver = fallbacks.count;
    fallbacks.count = 0;
    const shownFallbacks = fallbacks.cases.splice(0);
    if (handedOver > MAX_FALLBACK_SHARE * report.cases) {
      throw new Error(
        `${handedOver} of ${report.cases} cases went to SaxonJS after a dynamic error of the compiled rules ` +
          `(at most ${MAX_FALLBACK_SHARE * 100} % may):\n${shownFallbacks.join('\n')}`,
      );
    }
    if (report.disagreements.length > 0) {
      const shown = report.disagreements.slice(0, SHOWN).map(formatDisagreement);
      const more = report.disagreements.length - shown.length;
      throw new Error(
        `${report.disagreements.length} of ${report.cases} cases disagree` +
          `${more > 0 ? ` (first ${SHOWN} shown)` : ''}:\n\n${shown.join('\n\n')}`,
      );
    }
    expect(report.cases).toBeGreaterThanOrEqual(floor);
    expect(report.agreed).toBe(report.cases);
  }

  let documents: CorpusDocument[];
  let sources: MutationSource[];
  let run: (cases: Iterable<AgreementCase>) => Promise<AgreementReport>;

  beforeAll(() => {
    const manifest = loadManifest();
    documents = corpusDocuments(manifest.packs, { previous: true }).documents;
    sources = mutationSources(documents);
    requirePacks([
      ...new Set(
        [...documents.flatMap((d) => d.packIds), ...sources.flatMap((s) => s.packIds)].map((p) => p.split('@')[0]!),
      ),
    ]);
    const store = validator().store;
    const a = saxonEngine(store);
    const b = engineB(store);
    run = async (cases) => {
      const report = await compareEngines(a, b, cases);
      for (const [pack, t] of Object.entries(report.timing)) {
        const total = (timing[pack] ??= { cases: 0, aMs: 0, bMs: 0 });
        total.cases += t.cases;
        total.aMs += t.aMs;
        total.bMs += t.bMs;
      }
      return report;
    };
  });

  // AGREEMENT_TIMING=1 prints the time each engine took per pack (what the gate costs on this machine).
  const timing: AgreementReport['timing'] = {};
  afterAll(() => {
    if (!process.env['AGREEMENT_TIMING']) return;
    const rows = Object.entries(timing).map(
      ([pack, t]) =>
        `${pack.padEnd(32)} ${String(t.cases).padStart(6)} cases  A ${(t.aMs / 1000).toFixed(1).padStart(7)} s ` +
        `(${(t.aMs / t.cases).toFixed(1)} ms each)  B ${(t.bMs / 1000).toFixed(1).padStart(7)} s ` +
        `(${(t.bMs / t.cases).toFixed(1)} ms each)`,
    );
    process.stdout.write(`\nengine time per pack (wall):\n${rows.join('\n')}\n`);
  });

  describe('compiled Schematron engine agrees with SaxonJS', () => {
    if (part.suites)
      it('(a) on the CEN EN 16931 unit suite', async () => {
        expectAgreement(await run(cenSuiteCases()), 1_100);
      });

    if (part.suites)
      it('(b) on every corpus document a Schematron pack applies to, with every pinned version', async () => {
        const cases = corpusCases(documents);
        // 291 documents in 16 packs and versions when this was written: a floor against a selection that empties itself.
        expect(new Set(cases.map((c) => c.packId)).size).toBeGreaterThanOrEqual(14);
        expectAgreement(await run(cases), 400);
      });

    const first = Math.round(part.from * VARIANTS);
    const last = Math.round(part.to * VARIANTS);
    const chunks = Array.from({ length: Math.ceil((last - first) / CHUNK) }, (_, k) => ({
      start: first + k * CHUNK,
      count: Math.min(CHUNK, last - first - k * CHUNK),
    }));
    it.each(chunks)(`(c) on seeded mutations (seed ${SEED}): variants $start +$count`, async ({ start, count }) => {
      expectAgreement(await run(mutationCases(sources, { seed: SEED, count, start })), count);
    });
  });
}
