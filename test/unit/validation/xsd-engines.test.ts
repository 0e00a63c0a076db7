import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeXml, detectFormatFromDocument, extractFromPdf, isPdf, parseXml } from '../../../src/formats';
import { selectRulePacks } from '../../../src/validation/selection';
import { validateWithXmllint, type SchemaIssue } from '../../../src/validation/xsd';
import { validateWithLibxml2Wasm } from '../../../src/validation/xsd-wasm';
import { CORPUS_DIR } from '../../support/corpus';
import { listFiles } from '../../support/validation/agreement';
import { createRng, mutate } from '../../support/validation/mutations';
import { validator } from './support';

/**
 * The in-process XSD engine (libxml2 compiled to WebAssembly) gives the verdicts xmllint gives: the same issues
 * (line, element, message) on every corpus document a schema applies to and on seeded variants of them (elements
 * removed, duplicated, reordered; values altered), which break the schemas in many ways. The two are different builds
 * of libxml2 (the system's and the package's), so this is what proves them interchangeable.
 */

interface SchemaCase {
  name: string;
  xml: Buffer;
  driver: string;
}

async function driverFor(xmlText: string, container?: 'pdf'): Promise<string | undefined> {
  const format = detectFormatFromDocument(parseXml(xmlText), container ? { container } : {});
  const ref = selectRulePacks(format).packs.find((p) => p.entry !== undefined);
  if (!ref?.entry) return undefined;
  const pack = await validator().store.get(ref.id);
  return pack.kind === 'xsd' ? pack.drivers[ref.entry] : undefined;
}

const normalise = (issues: SchemaIssue[]): string[] =>
  issues.map((i) => `${i.line ?? '-'} ${i.element ?? '-'} ${i.message.replace(/\s+/g, ' ').trim()}`);

async function compare(c: SchemaCase): Promise<void> {
  const [viaProcess, inProcess] = await Promise.all([
    validateWithXmllint(c.driver, c.xml),
    validateWithLibxml2Wasm(c.driver, c.xml),
  ]);
  expect({ name: c.name, issues: normalise(inProcess.issues) }).toEqual({
    name: c.name,
    issues: normalise(viaProcess.issues),
  });
}

async function corpusCases(): Promise<SchemaCase[]> {
  const out: SchemaCase[] = [];
  for (const rel of listFiles(CORPUS_DIR).filter((r) => /\.(xml|pdf)$/i.test(r) && !r.includes('/unit-tests/'))) {
    try {
      let bytes: Buffer = readFileSync(path.join(CORPUS_DIR, rel));
      const container = isPdf(bytes) ? ('pdf' as const) : undefined;
      if (container) bytes = extractFromPdf(bytes).xml;
      const driver = await driverFor(decodeXml(bytes).text, container);
      if (driver) out.push({ name: rel, xml: bytes, driver });
    } catch {
      // Not a document the gateway validates (refused, unknown, no schema): nothing to compare.
    }
  }
  return out;
}

let corpus: SchemaCase[] = [];
beforeAll(async () => {
  corpus = await corpusCases();
}, 120_000);

describe('libxml2 in process and xmllint agree', () => {
  it('on every corpus document a schema applies to', async () => {
    expect(corpus.length).toBeGreaterThan(150);
    for (const c of corpus) await compare(c);
  }, 300_000);

  it('on 300 seeded variants of the smaller corpus documents, most of them schema-invalid', async () => {
    const sources = corpus.filter((c) => c.xml.length <= 32 * 1024);
    let invalid = 0;
    for (let k = 0; k < 300; k++) {
      const rng = createRng(20261129, k);
      const source = sources[Math.floor(rng.next() * sources.length)]!;
      const v = mutate(decodeXml(source.xml).text, rng);
      const c = {
        name: `${source.name} #${k}: ${v.mutations.map((m) => m.kind).join(', ')}`,
        xml: Buffer.from(v.xmlText),
        driver: source.driver,
      };
      await compare(c);
      if ((await validateWithLibxml2Wasm(c.driver, c.xml)).issues.length > 0) invalid++;
    }
    expect(invalid).toBeGreaterThan(60);
  }, 300_000);

  it('reports a malformed document as issues, and a missing schema as an engine fault', async () => {
    const driver = corpus[0]!.driver;
    const malformed = await validateWithLibxml2Wasm(driver, Buffer.from('<Invoice><a></Invoice>'));
    expect(malformed.issues.length).toBeGreaterThan(0);
    await expect(validateWithLibxml2Wasm('/nonexistent/driver.xsd', corpus[0]!.xml)).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
      details: { reason: 'XSD_ENGINE_FAILED' },
    });
  });

  it('keeps at most maxIssues and says so', async () => {
    const c = corpus.find((x) => /ubl/i.test(x.name) && x.xml.includes('<cbc:IssueDate>'))!;
    const broken = Buffer.from(c.xml.toString('utf8').replace(/<cbc:IssueDate>[^<]*</g, '<cbc:IssueDate>x<'));
    const r = await validateWithLibxml2Wasm(c.driver, broken, { maxIssues: 0 });
    expect(r).toEqual({ issues: [], truncated: true });
  });
});
