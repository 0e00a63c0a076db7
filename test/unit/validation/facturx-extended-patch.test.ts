import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { GatewayError } from '../../../src/core/gateway-error';
import { detectFormat, extractFromPdf, isPdf } from '../../../src/formats';
import { loadManifest } from '../../../src/validation';
import { simplifySvrlLocation } from '../../../src/validation/locations';
import { CORPUS_DIR } from '../../support/corpus';
import { RULES_DIR, requirePacks, saxonHeClasspath, svrlFindings, validator } from './support';

/**
 * Factur-X EXTENDED: SaxonJS cannot run the official XSLT (XPTY0004 on `round(sum(…) * xs:decimal(100)) div …`), so
 * rules:fetch applies the manifest's `decimal-sum` patch before compiling. This proves the patch keeps the rules'
 * meaning: on every EXTENDED sample, our patched pack on SaxonJS fires exactly the asserts (id, flag, location) that
 * the unpatched official XSLT fires on Saxon-HE, the reference engine.
 */

jest.setTimeout(600_000);

const manifest = loadManifest();
const pack = manifest.packs.find((p) => p.id === 'facturx-extended')!;
const OFFICIAL = path.join(RULES_DIR, pack.id, pack.version, 'files', pack.kind === 'schematron' ? pack.xslt[0]! : '');

function collect(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? collect(path.join(dir, e.name)) : /\.(xml|pdf)$/i.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

/** Every EXTENDED document of the Factur-X corpus, as XML (PDF attachments extracted). */
function extendedSamples(): Array<{ name: string; xml: Buffer }> {
  const out: Array<{ name: string; xml: Buffer }> = [];
  for (const file of collect(path.join(CORPUS_DIR, 'facturx'))) {
    const bytes = readFileSync(file);
    let format;
    try {
      format = detectFormat(bytes);
    } catch {
      continue;
    }
    if (format.id !== 'facturx-extended') continue;
    out.push({
      name: path.basename(file).replace(/\.(pdf|xml)$/i, '.xml'),
      xml: isPdf(bytes) ? Buffer.from(extractFromPdf(bytes).xml) : bytes,
    });
  }
  return out;
}

function saxonHe(args: string[]): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'java',
      ['-cp', saxonHeClasspath(), 'net.sf.saxon.Transform', ...args],
      { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (err, _out, stderr) => resolve({ ok: !err, stderr }),
    );
  });
}

const key = (f: { id: string; flag: string; location: string }): string => `${f.id}|${f.flag}|${f.location}`;

describe('Factur-X EXTENDED decimal-sum patch', () => {
  let work: string;
  beforeAll(() => {
    requirePacks(['facturx-extended']);
    work = mkdtempSync(path.join(os.tmpdir(), 'fx-ext-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('is declared in the manifest with its exact rewrite count and reason', () => {
    expect(pack.kind === 'schematron' && pack.patches).toEqual([
      expect.objectContaining({
        id: 'decimal-sum',
        transform: 'decimal-sum-under-round',
        count: 45,
        reason: expect.stringContaining('XPTY0004'),
      }),
    ]);
  });

  it('fires the same asserts as the unpatched official rules on Saxon-HE, on every EXTENDED sample', async () => {
    const samples = extendedSamples();
    expect(samples.length).toBeGreaterThanOrEqual(8);
    const inDir = path.join(work, 'in');
    const outDir = path.join(work, 'out');
    mkdirSync(inDir);
    mkdirSync(outDir);

    const ours = new Map<string, string[]>();
    const failedOnOurs: string[] = [];
    for (const s of samples) {
      writeFileSync(path.join(inDir, s.name), s.xml);
      try {
        const r = await validator().validate(s.xml, { sourceFormat: 'facturx-extended', ruleSet: 'facturx-extended' });
        ours.set(
          s.name,
          r.assertions
            .map((a) => key({ id: a.ruleId, flag: a.flag === 'error' ? 'error' : 'warning', location: a.location }))
            .sort(),
        );
      } catch (e) {
        expect(e).toBeInstanceOf(GatewayError);
        failedOnOurs.push(s.name);
      }
    }

    // One Saxon-HE run over the documents our engine could evaluate (one compile of the 1.4 MB stylesheet).
    for (const f of failedOnOurs) rmSync(path.join(inDir, f));
    const run = await saxonHe([`-s:${inDir}`, `-xsl:${OFFICIAL}`, `-o:${outDir}`]);
    if (!run.ok) throw new Error(`Saxon-HE failed on the EXTENDED samples: ${run.stderr.slice(-2000)}`);

    let compared = 0;
    let findings = 0;
    for (const [name, mine] of ours) {
      const theirs = svrlFindings(readFileSync(path.join(outDir, name), 'utf8'))
        .map((f) =>
          key({
            id: f.id,
            flag: ['warning', 'information'].includes(f.flag) ? 'warning' : 'error',
            location: simplifySvrlLocation(f.location),
          }),
        )
        .sort();
      expect([name, mine]).toEqual([name, theirs]);
      compared++;
      findings += theirs.length;
    }
    expect(compared).toBeGreaterThanOrEqual(7);
    expect(findings).toBeGreaterThan(0);

    // A document the official rules cannot evaluate fails on Saxon-HE too: nothing the patch could have hidden.
    for (const f of failedOnOurs) {
      const s = samples.find((x) => x.name === f)!;
      const single = path.join(work, `single-${f}`);
      writeFileSync(single, s.xml);
      expect([
        f,
        (await saxonHe([`-s:${single}`, `-xsl:${OFFICIAL}`, `-o:${path.join(work, `single-${f}.svrl`)}`])).ok,
      ]).toEqual([f, false]);
    }
  });
});
