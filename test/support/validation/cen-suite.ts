import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { XMLSerializer, type Element } from '@xmldom/xmldom';
import { parseXml } from '../../../src/formats';
import { CORPUS_DIR } from '../corpus';

/**
 * The official EN 16931 conformance suite (ConnectingEurope/eInvoicing-EN16931 `test/`, VEFA testSet files): each
 * <test> holds a rule-focused document fragment and which rules must or must not fire on it.
 */

const VEFA = 'http://difi.no/xsd/vefa/validator/1.0';
export const CEN_SUITE_DIR = path.join(CORPUS_DIR, 'en16931', 'unit-tests');

export interface CenExpectation {
  kind: 'error' | 'warning' | 'success';
  rule: string;
  /** For `error number="n"`: how often the rule must fire. */
  count?: number;
}

export interface CenCase {
  description: string;
  expectations: CenExpectation[];
  document: string;
  root: string;
}

function children(el: Element, ns: string | null, local?: string): Element[] {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType !== 1) continue;
    const e = c as Element;
    if ((ns === null || e.namespaceURI === ns) && (local === undefined || e.localName === local)) out.push(e);
  }
  return out;
}

export function readCenTestSet(file: string): CenCase[] {
  const doc = parseXml(readFileSync(file));
  const root = doc.documentElement!;
  const cases: CenCase[] = [];
  for (const test of children(root, VEFA, 'test')) {
    const assert = children(test, VEFA, 'assert')[0];
    const expectations: CenExpectation[] = [];
    let description = '';
    for (const e of assert ? children(assert, VEFA) : []) {
      if (e.localName === 'description') description = (e.textContent ?? '').trim();
      if (e.localName === 'error' || e.localName === 'warning' || e.localName === 'success') {
        const n = e.getAttribute('number');
        expectations.push({
          kind: e.localName,
          rule: (e.textContent ?? '').trim(),
          ...(n ? { count: Number(n) } : {}),
        });
      }
    }
    const body = children(test, null).find((e) => e.namespaceURI !== VEFA);
    if (!body) continue;
    cases.push({
      description,
      expectations,
      document: new XMLSerializer().serializeToString(body),
      root: body.localName ?? '',
    });
  }
  return cases;
}

/** The suite's folders, the format their documents are validated as, and the Schematron pack that judges them. */
export const CEN_SUITE_DIRS: ReadonlyArray<{ dir: string; sourceFormat: string; ruleSet: string }> = [
  { dir: 'Invoice-unit-UBL', sourceFormat: 'en16931-ubl-invoice', ruleSet: 'en16931-ubl' },
  { dir: 'CreditNote-unit-UBL', sourceFormat: 'en16931-ubl-creditnote', ruleSet: 'en16931-ubl' },
  { dir: 'cii', sourceFormat: 'en16931-cii', ruleSet: 'en16931-cii' },
];

/** Every testSet file of the suite, in a stable order. */
export function cenSuiteFiles(): Array<{ dir: string; sourceFormat: string; ruleSet: string; file: string }> {
  return CEN_SUITE_DIRS.flatMap((d) =>
    readdirSync(path.join(CEN_SUITE_DIR, d.dir))
      .filter((f) => f.endsWith('.xml'))
      .sort()
      .map((f) => ({ ...d, file: f })),
  );
}
