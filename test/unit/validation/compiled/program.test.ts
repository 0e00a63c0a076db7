import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { FN_NS, Unsupported, XS_NS, type Expr } from '../../../../src/validation/compiled/model';
import { readSchematronProgram, type Check, type SchematronProgram } from '../../../../src/validation/compiled/program';
import { RULES_DIR } from '../support';

/**
 * The reader on the real rule packs of the cache: what it extracts must add up to a plain count of the XSLT text, and
 * the packs it cannot model must say why.
 */

const UBL_CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
const UBL_CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';

function xsltFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (!e.name.startsWith('_')) xsltFiles(p, out);
    } else if (e.name.endsWith('.xslt')) out.push(p);
  }
  return out;
}

/** The stylesheets of one pack (every cached version). */
function packFiles(pack: string): string[] {
  const files = xsltFiles(join(RULES_DIR, pack));
  if (files.length === 0) throw new Error(`no XSLT for ${pack} in ${RULES_DIR}: run npm run rules:fetch`);
  return files;
}

const cache = new Map<string, { text: string; program?: SchematronProgram; error?: Error }>();
function load(file: string): { text: string; program?: SchematronProgram; error?: Error } {
  let entry = cache.get(file);
  if (!entry) {
    const text = readFileSync(file, 'utf8');
    try {
      entry = { text, program: readSchematronProgram(text) };
    } catch (e) {
      entry = { text, error: e as Error };
    }
    cache.set(file, entry);
  }
  return entry;
}

function program(file: string): SchematronProgram {
  const { program: p, error } = load(file);
  if (!p) throw error ?? new Error('no program');
  return p;
}

/** Counts straight from the XSLT text (the skeleton's output elements), independent of the reader. */
function textCounts(text: string): Record<string, number> {
  const count = (re: RegExp): number => (text.match(re) ?? []).length;
  const applies = text.match(/<xsl:apply-templates\s[^>]*>/g) ?? [];
  return {
    patterns: applies.filter((a) => /\bselect="\/"/.test(a) && /\bmode="/.test(a)).length,
    rules: count(/<svrl:fired-rule[\s/>]/g),
    asserts: count(/<svrl:failed-assert[\s>]/g),
    reports: count(/<svrl:successful-report[\s>]/g),
    functions: count(/<xsl:function[\s>]/g),
    keys: count(/<xsl:key[\s>]/g),
  };
}

function programCounts(p: SchematronProgram): Record<string, number> {
  const checks: Check[] = p.patterns.flatMap((pat) => pat.rules.flatMap((r) => r.checks));
  return {
    patterns: p.patterns.length,
    rules: p.patterns.reduce((n, pat) => n + pat.rules.length, 0),
    asserts: checks.filter((c) => c.kind === 'assert').length,
    reports: checks.filter((c) => c.kind === 'report').length,
    functions: p.functions.length,
    keys: p.keys.length,
  };
}

function findCheck(
  p: SchematronProgram,
  id: string,
): { check: Check; rule: SchematronProgram['patterns'][0]['rules'][0] } {
  for (const pat of p.patterns) {
    for (const rule of pat.rules) {
      const check = rule.checks.find((c) => c.id === id);
      if (check) return { check, rule };
    }
  }
  throw new Error(`no check ${id}`);
}

const CONTEXT: Expr = { k: 'context' };

describe('readSchematronProgram on the main packs', () => {
  const PACKS = ['en16931-ubl', 'en16931-cii', 'peppol-bis3-ubl', 'xrechnung-ubl', 'xrechnung-cii', 'nlcius-cii'];
  const cases = PACKS.flatMap((pack) => packFiles(pack).map((f) => [relative(RULES_DIR, f), f]));

  test.each(cases)('%s: patterns, rules, checks and functions add up to the XSLT', (_label, file) => {
    const { text } = load(file);
    const p = program(file);
    const counts = programCounts(p);
    expect(counts).toEqual(textCounts(text));
    expect(counts.asserts).toBeGreaterThan(0);
    for (const pat of p.patterns) {
      expect(pat.defaultApply).toBeDefined();
      for (const rule of pat.rules) {
        expect(rule.mode).toBe(pat.mode);
        expect(rule.priority).toBeGreaterThanOrEqual(0);
        for (const c of rule.checks) {
          expect(c.location.mode).toBe('schematron-select-full-path');
          expect(c.location.select).toEqual(CONTEXT);
          expect(c.text.length).toBeGreaterThan(0);
        }
      }
      // Rules are kept highest priority first, as XSLT tries them.
      const priorities = pat.rules.map((r) => r.priority);
      expect(priorities).toEqual([...priorities].sort((a, b) => b - a));
    }
    expect(p.locationStyle).toBe('namespaced');
    expect(p.globals.find((g) => g.name.local === 'document-uri')?.body).toEqual([
      {
        k: 'valueOf',
        select: { k: 'call', fn: { ns: FN_NS, local: 'document-uri' }, args: [{ k: 'path', root: 'root', steps: [] }] },
      },
    ]);
  });

  test('en16931-ubl: one rule in full', () => {
    const p = program(packFiles('en16931-ubl')[0]!);
    expect(p.namespaces.cbc).toBe(UBL_CBC);
    expect(p.patterns.map((pat) => pat.id)).toEqual(['UBL-model', 'UBL-syntax', 'Codesmodel']);
    const { check, rule } = findCheck(p, 'BR-52');
    expect(rule.matchText).toBe('cac:AdditionalDocumentReference');
    expect(rule.context).toBe('cac:AdditionalDocumentReference');
    expect(rule.match).toEqual({
      k: 'path',
      root: 'none',
      steps: [
        { k: 'axis', axis: 'child', test: { k: 'name', ns: UBL_CAC, local: 'AdditionalDocumentReference' }, preds: [] },
      ],
    });
    expect(rule.applyTo).toEqual({
      k: 'union',
      l: {
        k: 'path',
        root: 'none',
        steps: [{ k: 'axis', axis: 'attribute', test: { k: 'name', ns: '*', local: '*' }, preds: [] }],
      },
      r: {
        k: 'path',
        root: 'none',
        steps: [{ k: 'axis', axis: 'child', test: { k: 'name', ns: '*', local: '*' }, preds: [] }],
      },
    });
    expect(check).toEqual({
      kind: 'assert',
      test: {
        k: 'gcmp',
        op: '!=',
        l: {
          k: 'call',
          fn: { ns: FN_NS, local: 'normalize-space' },
          args: [
            {
              k: 'path',
              root: 'none',
              steps: [{ k: 'axis', axis: 'child', test: { k: 'name', ns: UBL_CBC, local: 'ID' }, preds: [] }],
            },
          ],
        },
        r: { k: 'string', v: '' },
      },
      testText: "normalize-space(cbc:ID) != ''",
      id: 'BR-52',
      flag: 'fatal',
      location: { mode: 'schematron-select-full-path', select: CONTEXT },
      text: [
        {
          k: 'text',
          v: '[BR-52]-Each Additional supporting document (BG-24) shall contain a Supporting document reference (BT-122).',
        },
      ],
      diagnostics: [],
    });
  });

  test('peppol-bis3-ubl: functions with their parameters and types', () => {
    const p = program(packFiles('peppol-bis3-ubl').sort().at(-1)!);
    const U = p.namespaces.u!;
    const slack = p.functions.find((f) => f.name.ns === U && f.name.local === 'slack');
    const decimal = { k: 'item', item: { k: 'atomic', type: { ns: XS_NS, local: 'decimal' } }, occ: '' };
    expect(slack).toMatchObject({
      as: { k: 'item', item: { k: 'atomic', type: { ns: XS_NS, local: 'boolean' } }, occ: '' },
      params: [
        { name: { ns: '', local: 'exp' }, as: decimal },
        { name: { ns: '', local: 'val' }, as: decimal },
        { name: { ns: '', local: 'slack' }, as: decimal },
      ],
      body: [{ k: 'sequence', select: { k: 'and' } }],
    });
    const gln = p.functions.find((f) => f.name.local === 'gln');
    expect(gln?.params).toEqual([{ name: { ns: '', local: 'val' } }]);
    expect(gln?.body.map((i) => i.k)).toEqual(['variable', 'variable', 'variable', 'sequence']);
    // A variable whose value is its content (a temporary tree), not a select.
    const ipa = p.functions.find((f) => f.name.local === 'checkCodiceIPA');
    expect(ipa?.params).toEqual([
      {
        name: { ns: '', local: 'arg' },
        as: { k: 'item', item: { k: 'atomic', type: { ns: XS_NS, local: 'string' } }, occ: '?' },
      },
    ]);
    expect(ipa?.body[0]).toEqual({
      k: 'variable',
      name: { ns: '', local: 'allowed-characters' },
      body: [{ k: 'text', v: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789' }],
    });
  });

  test('xrechnung-ubl: global variables, rule variables, and parenthesized match patterns', () => {
    const p = program(packFiles('xrechnung-ubl')[0]!);
    expect(p.globals.find((g) => g.name.local === 'XR-MAJOR-MINOR-VERSION')?.select).toEqual({ k: 'string', v: '3.0' });
    const params = p.globals.filter((g) => g.param);
    expect(params.map((g) => g.name.local)).toContain('archiveDirParameter');
    const cvd = p.patterns
      .flatMap((pat) => pat.rules)
      .find((r) => r.matchText.startsWith('(/ubl:Invoice | /cn:CreditNote)'));
    expect(cvd?.match).toMatchObject({
      k: 'path',
      steps: [{ k: 'filter', expr: { k: 'union' }, preds: [{ k: 'var' }] }],
    });
    expect(p.patterns.some((pat) => pat.rules.some((r) => r.variables.length > 0))).toBe(true);
  });

  test('xrechnung-cii: message text is kept as written', () => {
    const p = program(packFiles('xrechnung-cii')[0]!);
    const { check } = findCheck(p, 'PEPPOL-EN16931-R041');
    expect(check.testText).toBe('false()');
    expect(check.text).toEqual([
      {
        k: 'text',
        v: 'Allowance/charge base\n                amount MUST be provided when allowance/charge percentage is provided.',
      },
    ]);
  });
});

describe('readSchematronProgram: messages, roles, diagnostics and reports', () => {
  test('pint-om: a message with value-of, a role and a diagnostic', () => {
    const file = packFiles('pint-om').find((f) => f.endsWith('PINT-jurisdiction-aligned-rules.xslt'))!;
    const { check } = findCheck(program(file), 'BTOM-PRE-001');
    expect(check.role).toBe('fatal');
    expect(check.flag).toBe('fatal');
    const localNameOfFirst = {
      k: 'call',
      fn: { ns: FN_NS, local: 'local-name' },
      args: [
        {
          k: 'path',
          root: 'none',
          steps: [
            { k: 'axis', axis: 'child', test: { k: 'name', ns: '*', local: '*' }, preds: [{ k: 'integer', v: '1' }] },
          ],
        },
      ],
    };
    expect(check.text[1]).toEqual({ k: 'valueOf', select: localNameOfFirst });
    expect(check.text.map((t) => t.k)).toEqual(['text', 'valueOf', 'text', 'valueOf', 'text']);
    expect(check.diagnostics).toHaveLength(1);
    expect(check.diagnostics[0]?.diagnostic).toBe('d-BTOM-PRE-001');
    expect(check.diagnostics[0]?.text.filter((t) => t.k === 'valueOf')).toHaveLength(2);
  });

  test('facturx-en16931: reports (xsl:if + successful-report) without id', () => {
    const [file] = packFiles('facturx-en16931');
    const { text } = load(file!);
    const p = program(file!);
    expect(programCounts(p)).toEqual(textCounts(text));
    const rule = p.patterns
      .flatMap((pat) => pat.rules)
      .find((r) => r.context === '/rsm:CrossIndustryInvoice/rsm:ExchangedDocument/ram:ID');
    const report = rule?.checks.find((c) => c.kind === 'report');
    expect(report).toMatchObject({ kind: 'report', testText: '@schemeID' });
    expect(report?.id).toBeUndefined();
  });

  test('svefaktura: the older skeleton writes local-name locations', () => {
    const [file] = packFiles('svefaktura');
    const { text } = load(file!);
    const p = program(file!);
    expect(p.locationStyle).toBe('local-name');
    expect(programCounts(p)).toEqual(textCounts(text));
  });
});

describe('readSchematronProgram: what it refuses', () => {
  const skeleton = (ruleBody: string, extra = '', root = 'version="2.0"'): string => `<?xml version="1.0"?>
<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:svrl="http://purl.oclc.org/dsdl/svrl"
    xmlns:xs="http://www.w3.org/2001/XMLSchema" ${root}>
  ${extra}
  <xsl:template match="*" mode="schematron-select-full-path">
    <xsl:apply-templates select="." mode="schematron-get-full-path"/>
  </xsl:template>
  <xsl:template match="*" mode="schematron-get-full-path">
    <xsl:apply-templates mode="schematron-get-full-path" select="parent::*" />
    <xsl:text>/</xsl:text>
    <xsl:choose>
      <xsl:when test="namespace-uri()=''"><xsl:value-of select="name()" /></xsl:when>
      <xsl:otherwise>
        <xsl:text>*:</xsl:text><xsl:value-of select="local-name()" />
        <xsl:text>[namespace-uri()='</xsl:text><xsl:value-of select="namespace-uri()" /><xsl:text>']</xsl:text>
      </xsl:otherwise>
    </xsl:choose>
    <xsl:variable name="preceding" select="count(preceding-sibling::*[local-name()=local-name(current())
        and namespace-uri() = namespace-uri(current())])" />
    <xsl:text>[</xsl:text><xsl:value-of select="1+ $preceding" /><xsl:text>]</xsl:text>
  </xsl:template>
  <xsl:template match="@*" mode="schematron-get-full-path">
    <xsl:apply-templates mode="schematron-get-full-path" select="parent::*" />
    <xsl:text>/</xsl:text>
    <xsl:choose>
      <xsl:when test="namespace-uri()=''">@<xsl:value-of select="name()" /></xsl:when>
      <xsl:otherwise>
        <xsl:text>@*[local-name()='</xsl:text><xsl:value-of select="local-name()" />
        <xsl:text>' and namespace-uri()='</xsl:text><xsl:value-of select="namespace-uri()" /><xsl:text>']</xsl:text>
      </xsl:otherwise>
    </xsl:choose>
  </xsl:template>
  <xsl:template match="text()" priority="-1" />
  <xsl:template match="/">
    <svrl:schematron-output>
      <svrl:active-pattern><xsl:attribute name="id">p1</xsl:attribute><xsl:apply-templates /></svrl:active-pattern>
      <xsl:apply-templates select="/" mode="M1"/>
    </svrl:schematron-output>
  </xsl:template>
  <xsl:template match="a" priority="1000" mode="M1">
    <svrl:fired-rule context="a"/>
    ${ruleBody}
    <xsl:apply-templates select="@*|*" mode="M1"/>
  </xsl:template>
  <xsl:template match="text()" priority="-1" mode="M1"/>
  <xsl:template match="@*|node()" priority="-2" mode="M1">
    <xsl:apply-templates select="@*|*" mode="M1"/>
  </xsl:template>
</xsl:stylesheet>`;
  const assert = `<xsl:choose><xsl:when test="b"/><xsl:otherwise>
      <svrl:failed-assert test="b"><xsl:attribute name="id">R1</xsl:attribute><xsl:attribute name="flag">fatal</xsl:attribute>
        <xsl:attribute name="location"><xsl:apply-templates select="." mode="schematron-select-full-path"/></xsl:attribute>
        <svrl:text>Value <xsl:value-of select="string(b)"/> is wrong</svrl:text></svrl:failed-assert>
    </xsl:otherwise></xsl:choose>`;

  function refusal(text: string): string {
    try {
      readSchematronProgram(text);
    } catch (e) {
      if (e instanceof Unsupported) return e.message;
      throw e;
    }
    return 'read';
  }

  test('a minimal skeleton stylesheet reads', () => {
    const p = readSchematronProgram(skeleton(`<xsl:variable name="v" select="1"/>${assert}`));
    expect(p.patterns).toHaveLength(1);
    expect(p.patterns[0]).toMatchObject({ mode: 'M1', id: 'p1', rules: [{ priority: 1000, context: 'a' }] });
    const rule = p.patterns[0]!.rules[0]!;
    expect(rule.variables).toEqual([{ name: { ns: '', local: 'v' }, select: { k: 'integer', v: '1' } }]);
    expect(rule.checks[0]?.text).toEqual([
      { k: 'text', v: 'Value ' },
      {
        k: 'valueOf',
        select: {
          k: 'call',
          fn: { ns: FN_NS, local: 'string' },
          args: [
            {
              k: 'path',
              root: 'none',
              steps: [{ k: 'axis', axis: 'child', test: { k: 'name', ns: '', local: 'b' }, preds: [] }],
            },
          ],
        },
      },
      { k: 'text', v: ' is wrong' },
    ]);
  });

  test('locations: only the skeleton full-path templates, through schematron-select-full-path', () => {
    const otherMode = assert.replace(
      'mode="schematron-select-full-path"/></xsl:attribute>',
      'mode="schematron-get-full-path-2"/></xsl:attribute>',
    );
    expect(refusal(skeleton(otherMode))).toMatch(/location mode "schematron-get-full-path-2"/);
    const changed = skeleton(assert).replace('<xsl:text>*:</xsl:text>', '<xsl:text>*/</xsl:text>');
    expect(refusal(changed)).toMatch(/schematron-get-full-path templates are not a known skeleton version/);
  });

  test('another compiler (SchXslt, XSLT 3.0) is refused up front', () => {
    expect(
      refusal(skeleton(assert, '', 'version="2.0" xmlns:schxslt="https://doi.org/10.5281/zenodo.1495494"')),
    ).toMatch(/SchXslt/);
    expect(refusal(skeleton(assert, '', 'version="3.0"'))).toMatch(/XSLT version 3\.0/);
    expect(refusal('<not-xslt/>')).toMatch(/not an XSLT stylesheet/);
  });

  test.each([
    [
      'xsl:for-each in a rule',
      `<xsl:for-each select="b">${assert}</xsl:for-each>`,
      /template match="a" mode="M1".*xsl:for-each/,
    ],
    ['xsl:call-template in a rule', '<xsl:call-template name="x"/>', /<xsl:call-template> in a rule/],
    [
      'xsl:copy-of in a message',
      assert.replace('<xsl:value-of select="string(b)"/>', '<xsl:copy-of select="b"/>'),
      /<xsl:copy-of> in the message/,
    ],
    [
      'an attribute value template in an id',
      assert.replace(
        '<xsl:attribute name="id">R1</xsl:attribute>',
        '<xsl:attribute name="id"><xsl:value-of select="1"/></xsl:attribute>',
      ),
      /computed content/,
    ],
    [
      'a choose that is not an assert',
      '<xsl:choose><xsl:when test="b">x</xsl:when></xsl:choose>',
      /not a skeleton assert/,
    ],
    ['an xsl:if that is not a report', '<xsl:if test="b"><x/></xsl:if>', /not a skeleton report/],
  ])('%s', (_label, body, message) => {
    expect(refusal(skeleton(body))).toMatch(message);
  });

  test.each([
    ['xsl:key without use', '<xsl:key name="k" match="a"><xsl:sequence select="b"/></xsl:key>', /without @use/],
    ['xsl:key with a collation', '<xsl:key name="k" match="a" use="b" collation="urn:c"/>', /attribute collation/],
    ['xsl:include', '<xsl:include href="x.xsl"/>', /top-level xsl:include/],
    [
      'xsl:for-each in a function',
      '<xsl:function name="f:x" xmlns:f="urn:f"><xsl:for-each select="1"/></xsl:function>',
      /function f:x: xsl:for-each/,
    ],
    [
      'a template in a pattern mode without fired-rule',
      '<xsl:template match="b" priority="5" mode="M1"><xsl:apply-templates select="*" mode="M1"/></xsl:template>',
      /no svrl:fired-rule/,
    ],
    ['a template in an unknown mode', '<xsl:template match="b" mode="X"/>', /outside the skeleton's patterns/],
    ['use-when', '<xsl:variable name="v" select="1" use-when="true()"/>', /use-when/],
  ])('%s', (_label, extra, message) => {
    expect(refusal(skeleton(assert, extra))).toMatch(message);
  });
});

describe('readSchematronProgram over the whole cache', () => {
  /** Packs the reader refuses, and why (the engine runs them on SaxonJS): none today. */
  const UNSUPPORTED: Record<string, RegExp> = {};

  test.each(xsltFiles(RULES_DIR).map((f) => [relative(RULES_DIR, f), f]))('%s', (label, file) => {
    const pack = label.split('/')[0]!;
    const { text, program: p, error } = load(file);
    const expected = UNSUPPORTED[pack];
    if (expected) {
      expect(error).toBeInstanceOf(Unsupported);
      expect(error?.message).toMatch(expected);
    } else {
      expect(error).toBeUndefined();
      expect(programCounts(p!)).toEqual(textCounts(text));
    }
  });
});
