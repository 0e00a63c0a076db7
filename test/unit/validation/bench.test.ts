import { benchmarkValidation } from '../../../bench/lib/validation-timing';
import { corpusFile } from '../../support/corpus';
import { requirePacks, validator } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(180_000);

describe('benchmarkValidation', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'en16931-ubl', 'cii-d16b', 'en16931-cii']));

  it('times every document over the requested runs and reports their outcome', async () => {
    const docs = [
      { name: 'ubl', content: corpusFile('en16931/ubl-examples/ubl-tc434-example1.xml') },
      { name: 'cii', content: corpusFile('en16931/cii-examples/CII_example1.xml') },
    ];
    const report = await benchmarkValidation(validator(), docs, { iterations: 3, warmup: 1 });
    expect(report.totalRuns).toBe(6);
    expect(report.documents.map((d) => [d.name, d.bytes, d.isValid, d.runsMs.length])).toEqual([
      ['ubl', docs[0]!.content.length, true, 3],
      ['cii', docs[1]!.content.length, true, 3],
    ]);
    for (const d of report.documents) {
      expect(d.minMs).toBeGreaterThan(0);
      expect(d.minMs).toBeLessThanOrEqual(d.medianMs);
      expect(d.medianMs).toBeLessThanOrEqual(d.p95Ms);
      expect(d.p95Ms).toBeLessThanOrEqual(d.maxMs);
    }
    expect(report.peakRssBytes).toBeGreaterThan(0);
    expect(report.totalMs).toBeGreaterThanOrEqual(
      report.documents.reduce((s, d) => s + d.runsMs.reduce((a, b) => a + b, 0), 0),
    );
  });
});
