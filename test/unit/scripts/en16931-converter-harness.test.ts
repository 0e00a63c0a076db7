import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CORPUS_DIR } from '../../support/corpus';

// Plain CommonJS, run by the benchmark without a build step.
type Harness = { classpath: string; java: string; mainClass: string } | { unavailable: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureConverterHarness } = require('../../../scripts/en16931-converter-harness') as {
  ensureConverterHarness(env?: NodeJS.ProcessEnv, log?: (m: string) => void): Harness;
};

function which(bin: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Runs `fn` with a PATH holding only links to `bins` and an empty cache, so the other tools look absent. */
function withPathOf<T>(bins: string[], fn: (env: NodeJS.ProcessEnv) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'harness-path-'));
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'harness-cache-'));
  for (const b of bins) {
    const real = which(b);
    if (real) fs.symlinkSync(real, path.join(dir, b));
  }
  try {
    return fn({ ...process.env, PATH: dir, INVOICE_GATEWAY_CACHE: cache });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

describe('en16931 converter harness build', () => {
  it('reports a missing Maven instead of installing one, when the dependencies are not resolved yet', () => {
    const h = withPathOf(['java', 'javac'], (env) => ensureConverterHarness(env, () => {}));
    expect('unavailable' in h && h.unavailable).toMatch(/Maven \(mvn\) is not on PATH/);
  });

  it('reports a missing JDK', () => {
    const h = withPathOf(['mvn'], (env) => ensureConverterHarness(env, () => {}));
    expect('unavailable' in h && h.unavailable).toMatch(/no JDK on PATH/);
  });

  it('builds and converts both ways with the reference converters, printing timings as JSON', () => {
    const h = ensureConverterHarness(process.env, () => {});
    if ('unavailable' in h) throw new Error(`the harness cannot be built here: ${h.unavailable}`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'harness-docs-'));
    try {
      const ubl = path.join(dir, 'invoice.xml');
      const cii = path.join(dir, 'invoice-cii.xml');
      const corpus = path.join(CORPUS_DIR, 'en16931');
      fs.copyFileSync(path.join(corpus, 'ubl-examples', 'ubl-tc434-example1.xml'), ubl);
      fs.copyFileSync(path.join(corpus, 'cii-examples', 'CII_example1.xml'), cii);
      const out = execFileSync(
        h.java,
        [
          '-cp',
          h.classpath,
          h.mainClass,
          '--warmup',
          '1',
          '--min-runs',
          '2',
          '--max-runs',
          '2',
          '--budget-ms',
          '0',
          '--out',
          dir,
          `ubl2cii=${ubl}`,
          `cii2ubl=${cii}`,
        ],
        {
          encoding: 'utf8',
          timeout: 120_000,
        },
      );
      const report = JSON.parse(out.trim()) as {
        xsd: boolean;
        documents: Array<{
          direction: string;
          runs: number;
          p50Ms: number;
          docsPerS: number;
          cpuMsPerDoc: number;
          outputBytes: number;
        }>;
      };
      expect(report.xsd).toBe(false);
      expect(report.documents.map((d) => d.direction)).toEqual(['ubl2cii', 'cii2ubl']);
      for (const d of report.documents) {
        expect(d.runs).toBe(2);
        expect(d.p50Ms).toBeGreaterThan(0);
        expect(d.docsPerS).toBeGreaterThan(0);
        expect(d.outputBytes).toBeGreaterThan(1000);
      }
      expect(fs.readFileSync(path.join(dir, 'invoice.xml.ubl2cii.xml'), 'utf8')).toContain('CrossIndustryInvoice');
      expect(fs.readFileSync(path.join(dir, 'invoice-cii.xml.cii2ubl.xml'), 'utf8')).toContain(
        'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
