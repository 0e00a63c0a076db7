import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { transformDocument } from '../../../src/transform';
import { CORPUS_DIR } from '../../support/corpus';

// Thousands of conversions, each twice; a loaded machine is slow.
jest.setTimeout(900_000);

/**
 * transformDocument reads its source into the light tree (parseXmlForReading) by default; `sourceTree: 'xmldom'` reads
 * it with xmldom, as before. For every XML and PDF document of the corpus and the benchmark's documents, and for each
 * target below, both must give the same answer: the same XML and report, or the same refusal (code, status, message,
 * details).
 */

const TARGETS = ['en16931-ubl', 'en16931-cii', 'peppol-bis3-ubl', 'xrechnung-cii', 'fatturapa-1.2', 'ebinterface-6.1'];

// eslint-disable-next-line @typescript-eslint/no-require-imports
const benchDocs = require('../../../bench/lib/validation-documents') as {
  invoiceOfSize(bytes: number): { body: Buffer };
  buildInvoice(o: { lines: number }): { body: Buffer };
};

function outcome(body: Buffer, targetFormat: string, sourceTree: 'read-tree' | 'xmldom'): string {
  try {
    const r = transformDocument(body, { targetFormat, sourceTree, date: new Date('2026-11-25T00:00:00Z') });
    return JSON.stringify({ xml: r.xml, contentType: r.contentType, report: r.report });
  } catch (e) {
    if (e instanceof GatewayError)
      return JSON.stringify({ code: e.code, status: e.status, message: e.message, details: e.details });
    return JSON.stringify({ error: String(e) });
  }
}

function walk(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((f) => {
      const p = path.join(dir, f);
      return statSync(p).isDirectory() ? walk(p) : /\.(xml|pdf)$/i.test(f) ? [p] : [];
    })
    .sort();
}

interface Tally {
  compared: number;
  converted: number;
  differences: string[];
}

function compare(name: string, body: Buffer, tally: Tally): void {
  for (const target of TARGETS) {
    const viaTree = outcome(body, target, 'read-tree');
    const viaDom = outcome(body, target, 'xmldom');
    tally.compared++;
    if (viaTree.startsWith('{"xml"')) tally.converted++;
    if (viaTree !== viaDom)
      tally.differences.push(
        `${name} → ${target}:\n  tree:   ${viaTree.slice(0, 400)}\n  xmldom: ${viaDom.slice(0, 400)}`,
      );
  }
}

describe('transformDocument: the light source tree gives the same results as xmldom', () => {
  const total: Tally = { compared: 0, converted: 0, differences: [] };
  afterAll(() => {
    // Printed for the record: how many answers were compared, and how many of them were conversions (not refusals).
    process.stdout.write(
      `source-tree equivalence: ${total.compared} answers compared, ${total.converted} conversions\n`,
    );
  });
  const folders = readdirSync(CORPUS_DIR).filter(
    (f) => statSync(path.join(CORPUS_DIR, f)).isDirectory() && f !== 'as4',
  );

  it.each(folders)('corpus folder %s', (folder) => {
    const files = walk(path.join(CORPUS_DIR, folder));
    const tally: Tally = { compared: 0, converted: 0, differences: [] };
    for (const file of files) compare(path.relative(CORPUS_DIR, file), readFileSync(file), tally);
    expect(tally.differences).toEqual([]);
    expect(tally.compared).toBe(files.length * TARGETS.length);
    total.compared += tally.compared;
    total.converted += tally.converted;
  });

  it('compared conversions, not only refusals', () => {
    // Runs after the folders (jest keeps declaration order within a file).
    expect(total.converted).toBeGreaterThan(700);
  });

  it('the benchmark documents (UBL and the CII written from them)', () => {
    const tally: Tally = { compared: 0, converted: 0, differences: [] };
    const ubl = [
      benchDocs.invoiceOfSize(10 * 1024).body,
      benchDocs.invoiceOfSize(100 * 1024).body,
      benchDocs.buildInvoice({ lines: 1000 }).body,
    ];
    ubl.forEach((body, k) => {
      compare(`bench UBL #${k}`, body, tally);
      compare(
        `bench CII #${k}`,
        Buffer.from(transformDocument(body, { targetFormat: 'en16931-cii' }).xml, 'utf8'),
        tally,
      );
    });
    expect(tally.differences).toEqual([]);
    // Each document converts at least to the EN 16931 and Peppol targets of both syntaxes.
    expect(tally.converted).toBeGreaterThanOrEqual(6 * 3);
  });
});
