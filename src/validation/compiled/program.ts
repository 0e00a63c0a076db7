import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';
import { installXmldomRegexCache } from '../../formats/xml/xmldom-regex-cache';
import { Unsupported, type Expr, type NamespaceResolver, type QName, type SequenceType } from './model';
import { parsePattern, parseSequenceType, parseXPath } from './xpath-parser';

/**
 * Reads a Schematron XSLT as the ISO Schematron skeleton writes it (XSLT 2.0) into a program the compiled engine runs:
 * the global variables, the stylesheet functions, and per pattern (a template mode applied by the root template) its
 * rules with their variables and checks. Every expression is parsed here, once per pack.
 *
 * The reader is strict: it knows the skeleton's output shape, and anything else in a place that can change which
 * assertions fire or what they report (an XSLT instruction it does not model, a key, an attribute value template, a
 * template in a pattern mode that is not a rule, another compiler's output) throws Unsupported, so that the pack runs
 * on SaxonJS instead. The stylesheet comes from our own rule cache and is parsed as trusted XML.
 */

// ---------------------------------------------------------------------------------------------------------------------
// Program

/** An XSLT instruction of a variable's content or a function body (the subset the skeleton's packs use). */
export type Instr =
  | { k: 'variable'; name: QName; as?: SequenceType; select?: Expr; body?: Instr[] }
  | { k: 'sequence'; select: Expr }
  /** xsl:text, or literal text content that is not whitespace-only. */
  | { k: 'text'; v: string }
  | { k: 'valueOf'; select: Expr; separator?: string }
  | { k: 'choose'; whens: Array<{ test: Expr; body: Instr[] }>; otherwise?: Instr[] }
  | { k: 'if'; test: Expr; body: Instr[] };

/**
 * A variable or parameter: its value is `select`, or the content `body` (a temporary tree when there is no `as`).
 * `param` marks an xsl:param, whose value without select and content is the zero-length string (a variable's is an
 * empty document node).
 */
export interface VariableDecl {
  name: QName;
  as?: SequenceType;
  select?: Expr;
  body?: Instr[];
  param?: true;
}

export interface SchematronFunction {
  name: QName;
  params: Array<{ name: QName; as?: SequenceType }>;
  as?: SequenceType;
  body: Instr[];
}

/** A piece of an assertion's message, in order: literal text or the string value of an expression. */
export type MessagePart = { k: 'text'; v: string } | { k: 'valueOf'; select: Expr; separator?: string };

export interface Check {
  /** assert: xsl:choose/when test + otherwise svrl:failed-assert; report: xsl:if test + svrl:successful-report. */
  kind: 'assert' | 'report';
  test: Expr;
  /** The test as evaluated (the xsl:when / xsl:if test attribute). */
  testText: string;
  id?: string;
  flag?: string;
  role?: string;
  /**
   * From `<xsl:attribute name="location"><xsl:apply-templates mode=".." select="."/>`; the mode is always
   * schematron-select-full-path, whose output `SchematronProgram.locationStyle` describes.
   */
  location: { mode: string; select: Expr };
  /** The content of svrl:text (not of the diagnostics). */
  text: MessagePart[];
  /** svrl:diagnostic-reference elements, in order. */
  diagnostics: Array<{ diagnostic: string; text: MessagePart[] }>;
}

export interface Rule {
  match: Expr;
  matchText: string;
  priority: number;
  mode: string;
  variables: VariableDecl[];
  checks: Check[];
  /** The trailing xsl:apply-templates select (usually `@*|*` or `*`): where the pattern's traversal continues. */
  applyTo: Expr;
  /** svrl:fired-rule/@context. */
  context: string;
}

export interface Pattern {
  mode: string;
  /** The id of the svrl:active-pattern the root template writes before applying this mode. */
  id?: string;
  rules: Rule[];
  /** The select of the mode's priority -2 default template (`@*|node()`), e.g. `@*|*`. */
  defaultApply?: Expr;
}

/**
 * How the skeleton's schematron-get-full-path mode writes a location: 'namespaced' is the current skeleton
 * (`/*:Invoice[namespace-uri()='…'][1]/…`, `@name` or `@*[local-name()='…' and namespace-uri()='…']`), 'local-name'
 * the older one (`/*[local-name()='Invoice']/…`, an index only where a same-named sibling exists; attributes without
 * their parent path).
 */
export type LocationStyle = 'namespaced' | 'local-name';

export interface SchematronProgram {
  /** Prefixes declared on xsl:stylesheet. */
  namespaces: Record<string, string>;
  /** Top-level xsl:variable / xsl:param, in order (the document-uri variable included). */
  globals: VariableDecl[];
  functions: SchematronFunction[];
  /** In the order the root template applies their modes. */
  patterns: Pattern[];
  locationStyle: LocationStyle;
  /** Top-level xsl:key declarations (read by the key() function). */
  keys: KeyDecl[];
}

/** `<xsl:key name match use>`: the nodes `match` selects, indexed by the atomized values of `use` on each. */
export interface KeyDecl {
  name: QName;
  match: Expr;
  use: Expr;
}

// ---------------------------------------------------------------------------------------------------------------------
// DOM helpers

const XSL_NS = 'http://www.w3.org/1999/XSL/Transform';
const SVRL_NS = 'http://purl.oclc.org/dsdl/svrl';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
/** Namespaces SchXslt declares in its output. */
const SCHXSLT_NS = ['https://doi.org/10.5281/zenodo.1495494', 'http://dmaus.name/ns/schxslt'];

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_NODE = 4;

const LOCATION_MODE = 'schematron-select-full-path';

/** The modes of the skeleton's location and id helpers: implemented by the engine, not read as rules. */
const HELPER_MODES: ReadonlySet<string> = new Set([
  'schematron-select-full-path',
  'schematron-get-full-path',
  'schematron-get-full-path-2',
  'schematron-get-full-path-3',
  'generate-id-from-path',
  'generate-id-2',
]);

function isXsl(node: Node, local?: string): node is Element {
  return (
    node.nodeType === ELEMENT_NODE && node.namespaceURI === XSL_NS && (local === undefined || node.localName === local)
  );
}

function isSvrl(node: Node, local?: string): node is Element {
  const el = node as Element;
  return (
    node.nodeType === ELEMENT_NODE && el.namespaceURI === SVRL_NS && (local === undefined || el.localName === local)
  );
}

function isText(node: Node): boolean {
  return node.nodeType === TEXT_NODE || node.nodeType === CDATA_NODE;
}

/** Whitespace-only text is stripped from a stylesheet, unless xml:space="preserve" is in scope. */
function isStrippable(node: Node): boolean {
  if (!isText(node) || !/^[ \t\r\n]*$/.test(node.nodeValue ?? '')) return false;
  for (let p = node.parentNode; p && p.nodeType === ELEMENT_NODE; p = p.parentNode) {
    const space = (p as Element).getAttributeNS(XML_NS, 'space');
    if (space === 'preserve') return false;
    if (space === 'default') return true;
  }
  return true;
}

/** The child nodes that matter: elements and text that is not stripped (comments and PIs are dropped). */
function significantChildren(el: Element): Node[] {
  const out: Node[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === ELEMENT_NODE || (isText(c) && !isStrippable(c))) out.push(c);
  }
  return out;
}

function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === ELEMENT_NODE) out.push(c as Element);
  return out;
}

function nameOf(el: Element): string {
  return el.prefix ? `${el.prefix}:${el.localName}` : (el.localName ?? el.nodeName);
}

/** The prefixes in scope at a stylesheet element, as its expressions see them. */
export function resolverOf(el: Element): NamespaceResolver {
  return (prefix) => {
    if (prefix === 'xml') return XML_NS;
    return el.lookupNamespaceURI(prefix) ?? undefined;
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Reader

/** Reads one skeleton-generated Schematron XSLT; throws Unsupported for anything the engine does not model. */
export function readSchematronProgram(xsltText: string): SchematronProgram {
  return new Reader(parseStylesheet(xsltText)).read();
}

function parseStylesheet(text: string): Element {
  installXmldomRegexCache();
  let doc: Document;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(text, 'text/xml');
  } catch (e) {
    throw new Unsupported(`the stylesheet is not well-formed XML: ${e instanceof Error ? e.message : String(e)}`);
  }
  const root = doc.documentElement;
  if (!root || !(isXsl(root, 'stylesheet') || isXsl(root, 'transform'))) {
    throw new Unsupported('not an XSLT stylesheet (no xsl:stylesheet or xsl:transform root)');
  }
  return root;
}

/** Attributes that change how the stylesheet's expressions or whitespace are read: not modelled. */
const UNMODELLED_ATTRIBUTES = ['use-when', 'xpath-default-namespace', 'default-collation', 'default-validation'];

class Reader {
  constructor(private readonly root: Element) {}

  read(): SchematronProgram {
    const root = this.root;
    this.checkCompiler();
    const namespaces: Record<string, string> = {};
    for (let k = 0; k < root.attributes.length; k++) {
      const a = root.attributes.item(k);
      if (a?.prefix === 'xmlns' && a.localName) namespaces[a.localName] = a.value;
    }

    const globals: VariableDecl[] = [];
    const functions: SchematronFunction[] = [];
    const templates: Element[] = [];
    const keys: KeyDecl[] = [];
    for (const node of significantChildren(root)) {
      if (node.nodeType !== ELEMENT_NODE) throw new Unsupported('text at the top level of the stylesheet');
      const el = node as Element;
      if (el.namespaceURI !== XSL_NS) {
        // A user-defined data element (the skeleton writes the schema title as <svrl:text>): ignored by XSLT.
        if (!el.namespaceURI) throw new Unsupported(`top-level element <${nameOf(el)}> in no namespace`);
        continue;
      }
      switch (el.localName) {
        case 'param':
        case 'variable':
          globals.push(this.variable(el, 'a global variable'));
          break;
        case 'function':
          functions.push(this.func(el));
          break;
        case 'template':
          templates.push(el);
          break;
        case 'output':
          break; // Serialization only: the engine reads no SVRL text.
        case 'key':
          keys.push(this.key(el));
          break;
        default:
          throw new Unsupported(`top-level xsl:${el.localName} is not supported`);
      }
    }

    const patterns = this.patterns(templates);
    return { namespaces, globals, functions, patterns, locationStyle: this.locationStyle(templates), keys };
  }

  /** SchXslt and XSLT 3.0 output are another compiler's: refused before reading anything. */
  private checkCompiler(): void {
    const root = this.root;
    const declared: string[] = [];
    const all = root.getElementsByTagName('*');
    for (let k = -1; k < all.length; k++) {
      const el = k < 0 ? root : all.item(k);
      if (!el) continue;
      for (let j = 0; j < el.attributes.length; j++) {
        const a = el.attributes.item(j);
        if (!a) continue;
        if (a.prefix === 'xmlns' || a.name === 'xmlns') declared.push(a.value);
        else if (!a.namespaceURI && el.namespaceURI === XSL_NS && UNMODELLED_ATTRIBUTES.includes(a.localName ?? '')) {
          throw new Unsupported(`the ${a.localName} attribute on xsl:${el.localName} is not supported`);
        } else if (a.namespaceURI === XSL_NS && UNMODELLED_ATTRIBUTES.includes(a.localName ?? '')) {
          throw new Unsupported(`the xsl:${a.localName} attribute on <${nameOf(el)}> is not supported`);
        }
      }
    }
    if (declared.some((uri) => SCHXSLT_NS.includes(uri))) {
      throw new Unsupported('the stylesheet was produced by SchXslt, not the ISO Schematron skeleton');
    }
    const version = root.getAttribute('version');
    if (version !== '2.0') {
      throw new Unsupported(`XSLT version ${version || '(none)'}: only the skeleton's XSLT 2.0 output is supported`);
    }
  }

  // --- templates and patterns ---

  private patterns(templates: Element[]): Pattern[] {
    const roots = templates.filter((t) => t.getAttribute('match') === '/' && !t.hasAttribute('mode'));
    if (roots.length !== 1 || !roots[0]) {
      throw new Unsupported(`expected one root template (match="/", no mode), found ${roots.length}`);
    }
    const patterns = this.rootTemplate(roots[0]);
    const byMode = new Map(patterns.map((p) => [p.mode, p]));

    for (const t of templates) {
      if (t === roots[0]) continue;
      const mode = t.getAttribute('mode') ?? '';
      const match = t.getAttribute('match') ?? '';
      if (t.hasAttribute('name')) throw new Unsupported(`named template "${t.getAttribute('name')}"`);
      const pattern = byMode.get(mode);
      if (pattern) this.patternTemplate(t, pattern);
      else if (HELPER_MODES.has(mode)) continue;
      else if (mode === '' && match === 'text()' && significantChildren(t).length === 0) continue;
      else {
        throw new Unsupported(
          `template match="${match}"${mode ? ` mode="${mode}"` : ''} is outside the skeleton's patterns and helpers`,
        );
      }
    }
    for (const p of patterns) {
      if (p.rules.length === 0 && !p.defaultApply) {
        throw new Unsupported(`pattern mode ${p.mode} has no templates`);
      }
      // Rules are tried by priority, highest first. Between equal priorities (a conflict the skeleton never writes)
      // XSLT 3.0 processors such as SaxonJS take the last in document order, so that one comes first here.
      const order = new Map(p.rules.map((r, k) => [r, k]));
      p.rules.sort((a, b) => b.priority - a.priority || (order.get(b) ?? 0) - (order.get(a) ?? 0));
    }
    return patterns;
  }

  /**
   * The root template writes the SVRL header and, per pattern, an svrl:active-pattern and
   * `<xsl:apply-templates select="/" mode="M…"/>`: the patterns in order. Any conditional or other logic there
   * (phases, includes) is not modelled.
   */
  private rootTemplate(t: Element): Pattern[] {
    const patterns: Pattern[] = [];
    let activeId: string | undefined;
    const visit = (el: Element): void => {
      for (const node of significantChildren(el)) {
        if (node.nodeType !== ELEMENT_NODE) continue; // Literal text of the SVRL output.
        if (isSvrl(node, 'active-pattern')) {
          activeId = node.getAttribute('id') ?? undefined;
          visit(node);
          continue;
        }
        const c = node as Element;
        if (!isXsl(node)) {
          visit(c); // A literal result element of the SVRL header.
          continue;
        }
        switch (c.localName) {
          case 'apply-templates': {
            const mode = c.getAttribute('mode');
            if (mode === null) {
              // The default mode only meets the empty text() template: it writes nothing.
              if (c.hasAttribute('select') || childElements(c).length > 0) {
                throw new Unsupported('the root template applies the default mode with a select or parameters');
              }
              break;
            }
            if ((c.getAttribute('select') ?? '').trim() !== '/' || childElements(c).length > 0) {
              throw new Unsupported(`the root template applies mode ${mode} other than to "/"`);
            }
            if (patterns.some((p) => p.mode === mode)) {
              throw new Unsupported(`the root template applies mode ${mode} twice`);
            }
            patterns.push({ mode, id: activeId, rules: [] });
            activeId = undefined;
            break;
          }
          case 'attribute':
            if (c.getAttribute('name') === 'id' && c.parentNode && isSvrl(c.parentNode, 'active-pattern')) {
              activeId = this.literalContent(c, 'the active-pattern id');
            }
            break;
          case 'comment':
          case 'value-of':
          case 'text':
            break; // SVRL output only.
          default:
            throw new Unsupported(`xsl:${c.localName} in the root template`);
        }
      }
    };
    visit(t);
    if (patterns.length === 0) throw new Unsupported('the root template applies no pattern mode');
    return patterns;
  }

  /** A template in a pattern's mode: a rule, or one of the mode's two default templates. */
  private patternTemplate(t: Element, pattern: Pattern): void {
    const match = t.getAttribute('match') ?? '';
    const priorityText = t.getAttribute('priority') ?? '';
    const priority = Number(priorityText);
    const where = `template match="${match}" mode="${pattern.mode}" priority="${priorityText}"`;
    if (priorityText === '' || !Number.isFinite(priority)) throw new Unsupported(`${where}: no numeric priority`);
    const body = significantChildren(t);
    if (priority === -1 && match.replace(/\s/g, '') === 'text()') {
      if (body.length > 0) throw new Unsupported(`${where}: the text() template is not empty`);
      return;
    }
    if (priority === -2 && match.replace(/\s/g, '') === '@*|node()') {
      const [apply, ...rest] = body;
      if (!apply || rest.length > 0 || !isXsl(apply, 'apply-templates')) {
        throw new Unsupported(`${where}: the default template does more than apply the mode`);
      }
      if (pattern.defaultApply) throw new Unsupported(`${where}: a second default template`);
      pattern.defaultApply = this.applyTemplates(apply, pattern.mode, where);
      return;
    }
    if (priority < 0) throw new Unsupported(`${where}: a negative priority that is not a skeleton default template`);
    pattern.rules.push(this.rule(t, pattern.mode, match, priority, where));
  }

  private rule(t: Element, mode: string, matchText: string, priority: number, where: string): Rule {
    const ns = resolverOf(t);
    const match = parsePattern(matchText, ns);
    const variables: VariableDecl[] = [];
    const checks: Check[] = [];
    let context: string | undefined;
    let applyTo: Expr | undefined;
    for (const node of significantChildren(t)) {
      if (applyTo) throw new Unsupported(`${where}: content after the trailing xsl:apply-templates`);
      if (node.nodeType !== ELEMENT_NODE) {
        throw new Unsupported(`${where}: literal text "${(node.nodeValue ?? '').trim()}" in the rule`);
      }
      const el = node as Element;
      if (isSvrl(el, 'fired-rule')) {
        if (context !== undefined) throw new Unsupported(`${where}: two svrl:fired-rule`);
        if (childElements(el).length > 0) throw new Unsupported(`${where}: svrl:fired-rule with content`);
        context = el.getAttribute('context') ?? '';
      } else if (context === undefined) {
        throw new Unsupported(`${where}: no svrl:fired-rule at the start of the template (found <${nameOf(el)}>)`);
      } else if (isXsl(el, 'variable')) {
        variables.push(this.variable(el, where));
      } else if (isXsl(el, 'choose')) {
        checks.push(this.assert(el, where));
      } else if (isXsl(el, 'if')) {
        checks.push(this.report(el, where));
      } else if (isXsl(el, 'apply-templates')) {
        applyTo = this.applyTemplates(el, mode, where);
      } else {
        throw new Unsupported(`${where}: <${nameOf(el)}> in a rule is not supported`);
      }
    }
    if (context === undefined) throw new Unsupported(`${where}: no svrl:fired-rule`);
    if (!applyTo) throw new Unsupported(`${where}: no trailing xsl:apply-templates`);
    return { match, matchText, priority, mode, variables, checks, applyTo, context };
  }

  /** `<xsl:apply-templates select=".." mode="M"/>` continuing the same mode. */
  private applyTemplates(el: Element, mode: string, where: string): Expr {
    if (el.getAttribute('mode') !== mode) {
      throw new Unsupported(`${where}: xsl:apply-templates to mode ${el.getAttribute('mode') ?? '(default)'}`);
    }
    if (childElements(el).length > 0) throw new Unsupported(`${where}: xsl:apply-templates with sort or parameters`);
    const select = el.getAttribute('select');
    if (select === null) throw new Unsupported(`${where}: xsl:apply-templates without select`);
    return parseXPath(select, resolverOf(el));
  }

  // --- checks ---

  /** `<xsl:choose><xsl:when test="T"/><xsl:otherwise><svrl:failed-assert …/></xsl:otherwise></xsl:choose>` */
  private assert(choose: Element, where: string): Check {
    const parts = significantChildren(choose);
    const [when, otherwise] = parts;
    if (
      parts.length !== 2 ||
      !when ||
      !otherwise ||
      !isXsl(when, 'when') ||
      !isXsl(otherwise, 'otherwise') ||
      significantChildren(when).length > 0
    ) {
      throw new Unsupported(`${where}: an xsl:choose that is not a skeleton assert`);
    }
    const testText = when.getAttribute('test') ?? '';
    const inner = significantChildren(otherwise);
    const [failed] = inner;
    if (inner.length !== 1 || !failed || !isSvrl(failed, 'failed-assert')) {
      throw new Unsupported(`${where}: assert "${testText}": the otherwise is not one svrl:failed-assert`);
    }
    return this.check('assert', testText, resolverOf(when), failed, `${where}, assert "${testText}"`);
  }

  /** `<xsl:if test="T"><svrl:successful-report …/></xsl:if>` */
  private report(xif: Element, where: string): Check {
    const testText = xif.getAttribute('test') ?? '';
    const inner = significantChildren(xif);
    const [report] = inner;
    if (inner.length !== 1 || !report || !isSvrl(report, 'successful-report')) {
      throw new Unsupported(`${where}: an xsl:if that is not a skeleton report ("${testText}")`);
    }
    return this.check('report', testText, resolverOf(xif), report, `${where}, report "${testText}"`);
  }

  private check(
    kind: 'assert' | 'report',
    testText: string,
    testNs: NamespaceResolver,
    out: Element,
    where: string,
  ): Check {
    const fields: { id?: string; flag?: string; role?: string } = {};
    for (const name of ['id', 'flag', 'role'] as const) {
      const v = out.getAttribute(name);
      if (v === null) continue;
      if (v.includes('{')) throw new Unsupported(`${where}: an attribute value template in ${name}`);
      fields[name] = v;
    }
    if (out.hasAttribute('location')) throw new Unsupported(`${where}: a literal location attribute`);
    let location: Check['location'] | undefined;
    let text: MessagePart[] | undefined;
    const diagnostics: Check['diagnostics'] = [];
    for (const node of significantChildren(out)) {
      if (node.nodeType !== ELEMENT_NODE) {
        throw new Unsupported(`${where}: literal text "${(node.nodeValue ?? '').trim()}" outside svrl:text`);
      }
      const el = node as Element;
      if (isXsl(node, 'attribute')) {
        const name = el.getAttribute('name') ?? '';
        if (el.hasAttribute('select') || el.hasAttribute('namespace') || name.includes('{')) {
          throw new Unsupported(`${where}: xsl:attribute name="${name}" with a select, namespace or computed name`);
        }
        if (name === 'id' || name === 'flag' || name === 'role') {
          fields[name] = this.literalContent(el, `${where}: the ${name}`);
        } else if (name === 'location') {
          location = this.location(el, where);
        } else if (!['see', 'icon', 'fpi', 'subject'].includes(name)) {
          throw new Unsupported(`${where}: xsl:attribute name="${name}" on the assertion`);
        }
      } else if (isSvrl(node, 'text')) {
        if (text) throw new Unsupported(`${where}: two svrl:text`);
        text = this.message(el, where);
      } else if (isSvrl(node, 'diagnostic-reference')) {
        diagnostics.push({ diagnostic: el.getAttribute('diagnostic') ?? '', text: this.message(el, where) });
      } else {
        throw new Unsupported(`${where}: <${nameOf(el)}> in the assertion is not supported`);
      }
    }
    if (!location) throw new Unsupported(`${where}: no location attribute`);
    return {
      kind,
      test: parseXPath(testText, testNs),
      testText,
      ...fields,
      location,
      text: text ?? [],
      diagnostics,
    };
  }

  /** `<xsl:attribute name="location"><xsl:apply-templates select="." mode="schematron-select-full-path"/>` */
  private location(attr: Element, where: string): Check['location'] {
    const parts = significantChildren(attr);
    const [apply] = parts;
    if (parts.length !== 1 || !apply || !isXsl(apply, 'apply-templates') || childElements(apply).length > 0) {
      throw new Unsupported(`${where}: a location that is not one xsl:apply-templates`);
    }
    const mode = apply.getAttribute('mode') ?? '';
    // The one location mode whose templates locationStyle() checks against the skeleton's.
    if (mode !== LOCATION_MODE) throw new Unsupported(`${where}: location mode "${mode}" is not ${LOCATION_MODE}`);
    return { mode, select: parseXPath(apply.getAttribute('select') ?? '.', resolverOf(apply)) };
  }

  /** svrl:text (or a diagnostic): literal text, xsl:text and xsl:value-of, in order. */
  private message(el: Element, where: string): MessagePart[] {
    const parts: MessagePart[] = [];
    for (const node of significantChildren(el)) {
      if (node.nodeType !== ELEMENT_NODE) {
        parts.push({ k: 'text', v: node.nodeValue ?? '' });
        continue;
      }
      const c = node as Element;
      if (isXsl(c, 'text')) {
        const v = this.literalContent(c, `${where}: xsl:text`);
        if (v !== '') parts.push({ k: 'text', v });
      } else if (isXsl(c, 'value-of')) {
        const v = this.valueOf(c, where);
        parts.push(v.separator === undefined ? { k: 'valueOf', select: v.select } : v);
      } else {
        throw new Unsupported(`${where}: <${nameOf(c)}> in the message is not supported`);
      }
    }
    return parts;
  }

  /** The text content of an element that must hold text only (xsl:text, an xsl:attribute with a literal value). */
  private literalContent(el: Element, where: string): string {
    let v = '';
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (isText(c)) v += c.nodeValue ?? '';
      else if (isXsl(c, 'text')) v += this.literalContent(c, where);
      else if (c.nodeType === ELEMENT_NODE)
        throw new Unsupported(`${where}: computed content <${nameOf(c as Element)}>`);
    }
    if (!isXsl(el, 'text') && /^[ \t\r\n]*$/.test(v)) {
      // Whitespace-only text in an xsl:attribute is stripped like any stylesheet whitespace.
      return '';
    }
    return v;
  }

  // --- variables, functions, instructions ---

  private key(el: Element): KeyDecl {
    const ns = resolverOf(el);
    const where = `xsl:key ${el.getAttribute('name') ?? ''}`;
    for (const a of Array.from(el.attributes)) {
      if (!['name', 'match', 'use'].includes(a.name)) throw new Unsupported(`${where}: attribute ${a.name}`);
    }
    const use = el.getAttribute('use');
    if (use === null || significantChildren(el).length > 0) throw new Unsupported(`${where}: a key without @use`);
    return {
      name: this.qname(el.getAttribute('name') ?? '', ns, '', `${where}: name`),
      match: parsePattern(el.getAttribute('match') ?? '', ns),
      use: parseXPath(use, ns),
    };
  }

  private variable(el: Element, where: string): VariableDecl {
    const ns = resolverOf(el);
    const name = this.qname(el.getAttribute('name') ?? '', ns, '', `${where}: xsl:${el.localName} name`);
    const label = `${where}, xsl:${el.localName} $${el.getAttribute('name')}`;
    const decl: VariableDecl = { name };
    if (el.localName === 'param') {
      decl.param = true;
      if (el.hasAttribute('required') || el.hasAttribute('tunnel')) {
        throw new Unsupported(`${label}: required or tunnel parameters`);
      }
    }
    const as = el.getAttribute('as');
    if (as !== null) decl.as = parseSequenceType(as, ns);
    const select = el.getAttribute('select');
    const content = significantChildren(el);
    if (select !== null) {
      if (content.length > 0) throw new Unsupported(`${label}: both a select and content`);
      decl.select = parseXPath(select, ns);
    } else {
      decl.body = this.instructions(el, label);
    }
    return decl;
  }

  private func(el: Element): SchematronFunction {
    const ns = resolverOf(el);
    const rawName = el.getAttribute('name') ?? '';
    const where = `function ${rawName}`;
    const name = this.qname(rawName, ns, '', `${where}: name`);
    if (!name.ns) throw new Unsupported(`${where}: a stylesheet function must be in a namespace`);
    const params: SchematronFunction['params'] = [];
    const bodyNodes: Node[] = [];
    for (const node of significantChildren(el)) {
      if (isXsl(node, 'param') && bodyNodes.length === 0) {
        if (node.hasAttribute('select') || significantChildren(node).length > 0) {
          throw new Unsupported(`${where}: a function parameter with a default value`);
        }
        const pns = resolverOf(node);
        const as = node.getAttribute('as');
        params.push({
          name: this.qname(node.getAttribute('name') ?? '', pns, '', `${where}: parameter name`),
          ...(as !== null ? { as: parseSequenceType(as, pns) } : {}),
        });
      } else bodyNodes.push(node);
    }
    const as = el.getAttribute('as');
    return {
      name,
      params,
      ...(as !== null ? { as: parseSequenceType(as, ns) } : {}),
      body: this.instructionList(bodyNodes, where),
    };
  }

  private instructions(el: Element, where: string): Instr[] {
    return this.instructionList(significantChildren(el), where);
  }

  private instructionList(nodes: Node[], where: string): Instr[] {
    const out: Instr[] = [];
    for (const node of nodes) {
      if (node.nodeType !== ELEMENT_NODE) {
        out.push({ k: 'text', v: node.nodeValue ?? '' });
        continue;
      }
      const el = node as Element;
      if (!isXsl(el)) throw new Unsupported(`${where}: literal result element <${nameOf(el)}> is not supported`);
      switch (el.localName) {
        case 'variable': {
          const v = this.variable(el, where);
          out.push({ k: 'variable', ...v });
          break;
        }
        case 'sequence': {
          if (significantChildren(el).length > 0) throw new Unsupported(`${where}: xsl:sequence with content`);
          out.push({ k: 'sequence', select: this.select(el, where) });
          break;
        }
        case 'text': {
          const v = this.literalContent(el, `${where}: xsl:text`);
          if (v !== '') out.push({ k: 'text', v });
          break;
        }
        case 'value-of':
          out.push(this.valueOf(el, where));
          break;
        case 'if':
          out.push({ k: 'if', test: this.test(el, where), body: this.instructions(el, where) });
          break;
        case 'choose': {
          const whens: Array<{ test: Expr; body: Instr[] }> = [];
          let otherwise: Instr[] | undefined;
          for (const c of significantChildren(el)) {
            if (isXsl(c, 'when') && otherwise === undefined) {
              whens.push({ test: this.test(c, where), body: this.instructions(c, where) });
            } else if (isXsl(c, 'otherwise') && otherwise === undefined && whens.length > 0) {
              otherwise = this.instructions(c, where);
            } else throw new Unsupported(`${where}: a malformed xsl:choose`);
          }
          out.push(otherwise ? { k: 'choose', whens, otherwise } : { k: 'choose', whens });
          break;
        }
        default:
          throw new Unsupported(`${where}: xsl:${el.localName} is not supported`);
      }
    }
    return out;
  }

  private valueOf(el: Element, where: string): Extract<Instr, { k: 'valueOf' }> {
    if (significantChildren(el).length > 0) throw new Unsupported(`${where}: xsl:value-of with content`);
    if (el.hasAttribute('disable-output-escaping')) {
      throw new Unsupported(`${where}: xsl:value-of disable-output-escaping`);
    }
    const separator = el.getAttribute('separator');
    if (separator !== null && separator.includes('{')) {
      throw new Unsupported(`${where}: an attribute value template in an xsl:value-of separator`);
    }
    const select = this.select(el, where);
    return separator === null ? { k: 'valueOf', select } : { k: 'valueOf', select, separator };
  }

  private select(el: Element, where: string): Expr {
    const select = el.getAttribute('select');
    if (select === null) throw new Unsupported(`${where}: xsl:${el.localName} without select`);
    return parseXPath(select, resolverOf(el));
  }

  private test(el: Element, where: string): Expr {
    const test = el.getAttribute('test');
    if (test === null) throw new Unsupported(`${where}: xsl:${el.localName} without test`);
    return parseXPath(test, resolverOf(el));
  }

  /** A QName attribute value (a variable, parameter or function name); unprefixed takes `defaultNs`. */
  private qname(text: string, ns: NamespaceResolver, defaultNs: string, where: string): QName {
    const v = text.trim();
    if (!/^[^:\s{}]+(?::[^:\s{}]+)?$/.test(v)) throw new Unsupported(`${where}: "${text}" is not a QName`);
    const colon = v.indexOf(':');
    if (colon < 0) return { ns: defaultNs, local: v };
    const uri = ns(v.slice(0, colon));
    if (uri === undefined) throw new Unsupported(`${where}: undeclared prefix in "${text}"`);
    return { ns: uri, local: v.slice(colon + 1) };
  }

  // --- location helpers ---

  /**
   * The schematron-select-full-path / schematron-get-full-path templates must be one of the skeleton's two known
   * versions: the engine writes locations itself, as they do.
   */
  private locationStyle(templates: Element[]): LocationStyle {
    const select = canonicalTemplates(templates, 'schematron-select-full-path');
    const get = canonicalTemplates(templates, 'schematron-get-full-path');
    if (select !== SELECT_FULL_PATH) {
      throw new Unsupported('the schematron-select-full-path template is not the skeleton one');
    }
    if (get === GET_FULL_PATH_NAMESPACED) return 'namespaced';
    if (get === GET_FULL_PATH_LOCAL_NAME) return 'local-name';
    throw new Unsupported('the schematron-get-full-path templates are not a known skeleton version');
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Canonical form of the skeleton's location templates

/** A template as canonical text: elements with sorted attributes, whitespace-only text stripped, comments dropped. */
function canonical(node: Node): string {
  if (isText(node)) return isStrippable(node) ? '' : (node.nodeValue ?? '').replace(/\s+/g, ' ');
  if (node.nodeType !== ELEMENT_NODE) return '';
  const el = node as Element;
  const attrs: string[] = [];
  for (let k = 0; k < el.attributes.length; k++) {
    const a = el.attributes.item(k);
    if (!a || a.prefix === 'xmlns' || a.name === 'xmlns') continue;
    attrs.push(`${a.name}="${a.value.replace(/\s+/g, ' ')}"`);
  }
  attrs.sort();
  let inner = '';
  for (let c = el.firstChild; c; c = c.nextSibling) inner += canonical(c);
  return `<${el.nodeName}${attrs.map((a) => ' ' + a).join('')}>${inner}</${el.nodeName}>`;
}

function canonicalTemplates(templates: Element[], mode: string): string {
  return templates
    .filter((t) => t.getAttribute('mode') === mode)
    .map(canonical)
    .join('');
}

const SELECT_FULL_PATH =
  '<xsl:template match="*" mode="schematron-select-full-path">' +
  '<xsl:apply-templates mode="schematron-get-full-path" select="."></xsl:apply-templates></xsl:template>';

const GET_FULL_PATH_NAMESPACED =
  '<xsl:template match="*" mode="schematron-get-full-path">' +
  '<xsl:apply-templates mode="schematron-get-full-path" select="parent::*"></xsl:apply-templates>' +
  '<xsl:text>/</xsl:text><xsl:choose><xsl:when test="namespace-uri()=\'\'">' +
  '<xsl:value-of select="name()"></xsl:value-of></xsl:when><xsl:otherwise><xsl:text>*:</xsl:text>' +
  '<xsl:value-of select="local-name()"></xsl:value-of><xsl:text>[namespace-uri()=\'</xsl:text>' +
  '<xsl:value-of select="namespace-uri()"></xsl:value-of><xsl:text>\']</xsl:text></xsl:otherwise></xsl:choose>' +
  '<xsl:variable name="preceding" select="count(preceding-sibling::*[local-name()=local-name(current()) and ' +
  'namespace-uri() = namespace-uri(current())])"></xsl:variable><xsl:text>[</xsl:text>' +
  '<xsl:value-of select="1+ $preceding"></xsl:value-of><xsl:text>]</xsl:text></xsl:template>' +
  '<xsl:template match="@*" mode="schematron-get-full-path">' +
  '<xsl:apply-templates mode="schematron-get-full-path" select="parent::*"></xsl:apply-templates>' +
  '<xsl:text>/</xsl:text><xsl:choose><xsl:when test="namespace-uri()=\'\'">@' +
  '<xsl:value-of select="name()"></xsl:value-of></xsl:when><xsl:otherwise>' +
  '<xsl:text>@*[local-name()=\'</xsl:text><xsl:value-of select="local-name()"></xsl:value-of>' +
  '<xsl:text>\' and namespace-uri()=\'</xsl:text><xsl:value-of select="namespace-uri()"></xsl:value-of>' +
  "<xsl:text>']</xsl:text></xsl:otherwise></xsl:choose></xsl:template>";

const GET_FULL_PATH_LOCAL_NAME =
  '<xsl:template match="*" mode="schematron-get-full-path">' +
  '<xsl:apply-templates mode="schematron-get-full-path" select="parent::*"></xsl:apply-templates>' +
  '<xsl:text>/</xsl:text><xsl:choose><xsl:when test="namespace-uri()=\'\'">' +
  '<xsl:value-of select="name()"></xsl:value-of>' +
  '<xsl:variable name="p_1" select="1+ count(preceding-sibling::*[name()=name(current())])"></xsl:variable>' +
  '<xsl:if test="$p_1>1 or following-sibling::*[name()=name(current())]">[' +
  '<xsl:value-of select="$p_1"></xsl:value-of>]</xsl:if></xsl:when><xsl:otherwise>' +
  '<xsl:text>*[local-name()=\'</xsl:text><xsl:value-of select="local-name()"></xsl:value-of>' +
  "<xsl:text>']</xsl:text>" +
  '<xsl:variable name="p_2" select="1+ count(preceding-sibling::*[local-name()=local-name(current())])">' +
  '</xsl:variable><xsl:if test="$p_2>1 or following-sibling::*[local-name()=local-name(current())]">[' +
  '<xsl:value-of select="$p_2"></xsl:value-of>]</xsl:if></xsl:otherwise></xsl:choose></xsl:template>' +
  '<xsl:template match="@*" mode="schematron-get-full-path"><xsl:text>/</xsl:text><xsl:choose>' +
  '<xsl:when test="namespace-uri()=\'\'">@<xsl:value-of select="name()"></xsl:value-of></xsl:when>' +
  '<xsl:otherwise><xsl:text>@*[local-name()=\'</xsl:text><xsl:value-of select="local-name()"></xsl:value-of>' +
  '<xsl:text>\' and namespace-uri()=\'</xsl:text><xsl:value-of select="namespace-uri()"></xsl:value-of>' +
  "<xsl:text>']</xsl:text></xsl:otherwise></xsl:choose></xsl:template>";
