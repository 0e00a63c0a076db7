import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { factsFromXml } from '../../../src/formats';
import type { LoadedXsdPack } from '../../../src/validation';
import { validateWithXmllint } from '../../../src/validation/xsd';
import { CORPUS_DIR } from '../../support/corpus';
import { requirePacks, validator } from './support';

/**
 * xmllint against the JDK's XSD validator (Xerces), the reference the Java e-invoicing stacks use: the same schema
 * verdict for every UBL, CII, MLS and ebInterface document of the corpus and for the spec 7 edge cases. This is the
 * evidence behind choosing libxml2 (and its one correction, dates with surrounding whitespace).
 */

jest.setTimeout(600_000);

const NS = {
  Invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  CreditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  ApplicationResponse: 'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2',
  CrossIndustryInvoice: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  'ebInterface 4.3': 'http://www.ebinterface.at/schema/4p3/',
  'ebInterface 6.1': 'http://www.ebinterface.at/schema/6p1/',
} as const;
type Group = keyof typeof NS;

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : /\.xml$/i.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

function xerces(schema: string, files: string[]): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(
      'java',
      [path.join(__dirname, 'XsdReference.java'), schema, ...files],
      { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`java XsdReference failed: ${stderr.slice(-2000) || err.message}`));
        const out = new Map<string, string>();
        for (const line of stdout.split('\n')) {
          const m = /^(VALID|INVALID)\t([^\t]+)(?:\t(.*))?$/.exec(line);
          if (m) out.set(m[2] as string, m[1] === 'VALID' ? 'valid' : `invalid: ${m[3] ?? ''}`);
        }
        resolve(out);
      },
    );
  });
}

describe('xmllint agrees with the JDK schema validator', () => {
  let work: string;
  beforeAll(() => {
    requirePacks(['ubl-2.1', 'cii-d16b', 'ebinterface-xsd']);
    work = mkdtempSync(path.join(os.tmpdir(), 'xsd-ref-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('gives the same verdict for every document', async () => {
    const groups = new Map<Group, string[]>();
    const add = (g: Group, f: string) => groups.set(g, [...(groups.get(g) ?? []), f]);
    const corpus = walk(CORPUS_DIR).filter(
      (f) => !f.includes(`${path.sep}unit-tests${path.sep}`) || f.includes(`${path.sep}testfiles${path.sep}`),
    );
    for (const f of corpus) {
      let facts;
      try {
        facts = factsFromXml(readFileSync(f));
      } catch {
        continue; // not well-formed or unsafe: never reaches a schema
      }
      const g = (Object.keys(NS) as Group[]).find(
        (k) =>
          NS[k] === facts.rootNamespace &&
          (k.startsWith('ebInterface') ? facts.rootLocalName === 'Invoice' : k === facts.rootLocalName),
      );
      if (g) add(g, f);
    }

    // The spec 7 edge cases and the whitespace cases, made from a valid invoice.
    const base = readFileSync(path.join(CORPUS_DIR, 'en16931/ubl-examples/ubl-tc434-example1.xml'), 'utf8');
    const variants: Record<string, string> = {
      scientific: base.replace(/(<cbc:PayableAmount currencyID="EUR">)[^<]*/, '$11.5E2'),
      emptyPrice: base.replace(/(<cbc:PriceAmount currencyID="EUR">)[^<]*/, '$1'),
      spacedAmount: base.replace(/(<cbc:PayableAmount currencyID="EUR">)([^<]*)/, '$1\n  $2  '),
      spacedDates: base
        .replace(/<cbc:IssueDate>([^<]*)/, '<cbc:IssueDate>  $1 ')
        .replace(/<cbc:DueDate>([^<]*)/, '<cbc:DueDate>$1\n'),
      badDate: base.replace(/<cbc:IssueDate>[^<]*/, '<cbc:IssueDate> 2015-02-30 '),
      twoOrderRefs: base.replace(
        /(\s*<cac:AccountingSupplierParty>)/,
        '<cac:OrderReference><cbc:ID>1</cbc:ID></cac:OrderReference><cac:OrderReference><cbc:ID>2</cbc:ID></cac:OrderReference>$1',
      ),
    };
    for (const [name, xml] of Object.entries(variants)) {
      expect([name, xml === base]).toEqual([name, false]);
      const file = path.join(work, `${name}.xml`);
      writeFileSync(file, xml);
      add('Invoice', file);
    }

    const ubl = (await validator().store.get('ubl-2.1')) as LoadedXsdPack;
    const cii = (await validator().store.get('cii-d16b')) as LoadedXsdPack;
    const ebi = (await validator().store.get('ebinterface-xsd')) as LoadedXsdPack;
    const driverOf = (g: Group): string =>
      g === 'CrossIndustryInvoice'
        ? cii.drivers['CrossIndustryInvoice']!
        : g.startsWith('ebInterface')
          ? ebi.drivers[g.slice('ebInterface '.length)]!
          : ubl.drivers[g]!;

    let compared = 0;
    const disagreements: string[] = [];
    const verdicts = { valid: 0, invalid: 0 };
    for (const [g, files] of groups) {
      const reference = await xerces(driverOf(g), files);
      for (const f of files) {
        const ours = await validateWithXmllint(driverOf(g), readFileSync(f));
        const oursValid = ours.issues.length === 0;
        const theirs = reference.get(f);
        expect([f, theirs === undefined]).toEqual([f, false]);
        if (oursValid !== (theirs === 'valid'))
          disagreements.push(
            `${path.relative(CORPUS_DIR, f)}: xmllint ` +
              `${oursValid ? 'valid' : `invalid (${ours.issues[0]?.message})`}, JDK ${theirs}`,
          );
        verdicts[oursValid ? 'valid' : 'invalid']++;
        compared++;
      }
    }
    expect(disagreements).toEqual([]);
    expect(compared).toBeGreaterThan(150);
    // Both verdicts occur, so agreement is not agreement on one answer only.
    expect(verdicts.valid).toBeGreaterThan(50);
    expect(verdicts.invalid).toBeGreaterThan(5);
  });
});
