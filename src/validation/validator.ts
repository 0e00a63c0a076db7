import type { Document } from '@xmldom/xmldom';
import { GatewayError } from '../core/gateway-error';
import {
  decodeXml,
  detectFormatFromDocument,
  isPdf,
  readHybridPdf,
  parseXml,
  parseXmlForReading,
  type ReadDocument,
  type DetectedFormat,
  type PdfLayer,
  type XmlLimits,
} from '../formats';
import { truncateMessage, truncateQuoted } from '../core/truncate';
import { explainSchemaIssue } from './explain';
import { checkFacturxPdf } from './facturx-pdf';
import { elementPath, findElement } from './locations';
import { loadManifest, type RulesManifest } from './manifest';
import { RulePackStore, type LoadedPack, type PackStatus } from './pack-store';
import { compiledPack, runCompiledPack, buildXdmTree, type XNode } from './compiled';
import { assertionOf, parseForSaxon, runSchematronPack, type SaxonDocument } from './schematron';
import type { LoadedSchematronPack } from './pack-store';
import { parseRuleSet, selectRulePacks, type PackRef } from './selection';
import { reasonCodeOf, type Assertion, type RuleSetOutcome, type RulesEngine, type ValidationResult } from './types';
import { validateWithXmllint } from './xsd';
import { validateWithLibxml2Wasm } from './xsd-wasm';

export interface ValidatorOptions {
  /** Where `npm run rules:fetch` put the packs (config: validation.rulesDir). */
  rulesDir: string;
  manifest?: RulesManifest;
  xmllintPath?: string;
  xmlLimits?: Partial<XmlLimits>;
  /** Schema errors kept per document. */
  maxSchemaIssues?: number;
  /**
   * Previous pack versions still accepted during a transition window (`id@version`, config RULES_ACCEPTED_PREVIOUS).
   * They run beside the current version; a document passes a pack when it passes either.
   */
  acceptedPrevious?: readonly string[];
  /**
   * Business rules engine (config VALIDATION_RULES_ENGINE): `compiled` runs the packs' official XSLT compiled to
   * JavaScript (src/validation/compiled), falling back to SaxonJS per pack and document where it cannot; `saxon-js`
   * runs every pack on SaxonJS.
   */
  rulesEngine?: RulesEngine;
  /**
   * XSD engine (config VALIDATION_XSD_ENGINE): `libxml2-wasm` in process (src/validation/xsd-wasm.ts), `xmllint` a
   * process per document. Both are libxml2 and give the same verdicts (test/unit/validation/xsd-engines.test.ts).
   */
  xsdEngine?: 'libxml2-wasm' | 'xmllint';
}

export interface ValidateOptions {
  /** Format id or URN that overrides detection. */
  sourceFormat?: string;
  /** Comma-separated rule pack ids (`id` or `id@version`) that replace the packs chosen from the format. */
  ruleSet?: string;
}

export interface Validator {
  /**
   * Validates an XML document or a Factur-X / ZUGFeRD PDF. Results are data; GatewayErrors only for what cannot be
   * judged.
   */
  validate(input: Buffer | string, options?: ValidateOptions): Promise<ValidationResult>;
  /** Validates an already parsed document (detection and transformation hold one). */
  validateDocument(
    doc: Document,
    xml: Buffer | string,
    format: DetectedFormat,
    options?: Pick<ValidateOptions, 'ruleSet'>,
  ): Promise<ValidationResult>;
  /** The packs `format` needs, loaded and verified: fails fast, naming the pack, before any document is read. */
  packsFor(format: DetectedFormat, ruleSet?: string): Promise<LoadedPack[]>;
  /** Readiness of every pack in the manifest. */
  status(): PackStatus[];
  readonly store: RulePackStore;
}

/** `id@version` list → pack id → accepted older versions; each must be in the manifest and not the current version. */
function previousVersions(manifest: RulesManifest, accepted: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const item of accepted) {
    const [id, version] = item.split('@') as [string, string | undefined];
    const versions = manifest.packs.filter((p) => p.id === id);
    if (!version || versions.length === 0 || !versions.some((p) => p.version === version)) {
      throw new Error(`RULES_ACCEPTED_PREVIOUS: ${item} is not a pack version in the rules manifest (use id@version)`);
    }
    if (versions[0]!.version === version)
      throw new Error(`RULES_ACCEPTED_PREVIOUS: ${item} is the current version, not a previous one`);
    if (versions[0]!.kind !== 'schematron')
      throw new Error(
        `RULES_ACCEPTED_PREVIOUS: ${item} is a schema pack; only business rules have a transition window`,
      );
    out.set(id, [...(out.get(id) ?? []), version]);
  }
  return out;
}

interface Prepared {
  /** The DOM, for mapping schema errors to elements (line numbers): given by the caller, or parsed when needed. */
  doc?: Document;
  /** The read tree (scanner-built), for detection and the compiled rules' XDM tree. */
  read?: ReadDocument;
  xml: Buffer;
  text: string;
  format: DetectedFormat;
  /** The PDF layer, when the XML came out of a hybrid PDF: checked as the `facturx-pdf` rule set. */
  pdf?: { layer: PdfLayer; attachmentFilename: string };
}

/** A format's scenario sets the flag of some of a pack's rules (PackRef.levels); the reason code follows the flag. */
function relevel<T extends { found: Assertion[] }>(r: T, levels: PackRef['levels']): T {
  if (!levels) return r;
  const found = r.found.map((a) => {
    const flag = Object.hasOwn(levels, a.ruleId) ? levels[a.ruleId] : undefined;
    return flag === undefined || flag === a.flag ? a : { ...a, flag, reasonCode: reasonCodeOf(a.artifact, flag) };
  });
  return { ...r, found };
}

export function createValidator(options: ValidatorOptions): Validator {
  const manifest = options.manifest ?? loadManifest();
  const store = new RulePackStore(options.rulesDir, manifest);
  const previous = previousVersions(manifest, options.acceptedPrevious ?? []);
  const engine: RulesEngine = options.rulesEngine ?? 'compiled';

  function selection(format: DetectedFormat, ruleSet: string | undefined): PackRef[] {
    if (ruleSet === undefined || ruleSet.trim() === '') return selectRulePacks(format).packs;
    return parseRuleSet(ruleSet, format, (id) =>
      manifest.packs
        .filter((p) => p.id === id)
        .map((def) =>
          def.kind === 'xsd'
            ? { version: def.version, kind: def.kind, entries: Object.keys(def.entries) }
            : { version: def.version, kind: def.kind },
        ),
    ).packs;
  }

  async function load(refs: PackRef[]): Promise<Array<{ ref: PackRef; pack: LoadedPack }>> {
    // Every pack is checked before any runs, so a missing one is reported before work is spent.
    const packs = await Promise.all(refs.map((r) => store.get(r.id, r.version)));
    return refs.map((ref, k) => ({ ref, pack: packs[k] as LoadedPack }));
  }

  function prepare(input: Buffer | string, opts: ValidateOptions): Prepared {
    let xmlInput: Buffer | string = input;
    let container: 'pdf' | undefined;
    let pdf: Prepared['pdf'];
    if (typeof input !== 'string' && isPdf(input)) {
      const hybrid = readHybridPdf(input);
      xmlInput = hybrid.attachment.xml;
      container = 'pdf';
      pdf = { layer: hybrid.layer, attachmentFilename: hybrid.attachment.filename };
    }
    const decoded = decodeXml(xmlInput, options.xmlLimits?.maxBytes);
    // The scanner's read tree, not xmldom's DOM (several times cheaper on large invoices); the DOM is built only if a
    // schema error needs its line numbers.
    const read = parseXmlForReading(decoded.text, options.xmlLimits);
    const format = detectFormatFromDocument(read, {
      ...(opts.sourceFormat ? { sourceFormat: opts.sourceFormat } : {}),
      ...(container ? { container } : {}),
    });
    const xml = typeof xmlInput === 'string' ? Buffer.from(xmlInput, 'utf8') : Buffer.from(xmlInput);
    return { read, xml, text: decoded.text, format, ...(pdf ? { pdf } : {}) };
  }

  async function run(p: Prepared, refs: PackRef[]): Promise<ValidationResult> {
    const packs = await load(refs);
    // Accepted previous versions (transition window) are loaded and checked up front too; not for an explicit version.
    const olderOf = new Map(
      await Promise.all(
        packs
          .filter((x) => x.pack.kind === 'schematron' && x.ref.version === undefined)
          .map(
            async (x) =>
              [
                x.pack.id,
                await Promise.all((previous.get(x.pack.id) ?? []).map((v) => store.get(x.pack.id, v))),
              ] as const,
          ),
      ),
    );
    const assertions: Assertion[] = [];
    const outcomes: RuleSetOutcome[] = [];
    let schemaFailed = false;
    let truncated = false;

    for (const { ref, pack } of packs) {
      if (pack.kind !== 'xsd') continue;
      const driver = ref.entry ? pack.drivers[ref.entry] : undefined;
      if (!driver) throw new GatewayError('INTERNAL', `schema pack ${pack.id} has no entry ${ref.entry ?? '(none)'}`);
      const maxIssues = options.maxSchemaIssues ? { maxIssues: options.maxSchemaIssues } : {};
      const r =
        (options.xsdEngine ?? 'libxml2-wasm') === 'libxml2-wasm'
          ? await validateWithLibxml2Wasm(driver, p.xml, maxIssues)
          : await validateWithXmllint(driver, p.xml, {
              ...(options.xmllintPath ? { xmllintPath: options.xmllintPath } : {}),
              ...maxIssues,
            });
      truncated ||= r.truncated;
      for (const issue of r.issues) {
        p.doc ??= parseXml(p.text, options.xmlLimits);
        const el = findElement(p.doc, issue.line, issue.element);
        const { ruleId, text } = explainSchemaIssue(issue, el);
        assertions.push({
          artifact: 'schema',
          flag: 'error',
          ruleId,
          location: truncateMessage(el ? elementPath(el) : issue.line !== undefined ? `line ${issue.line}` : '/'),
          text: truncateQuoted(text),
          reasonCode: reasonCodeOf('schema', 'error'),
          ruleSet: pack.id,
        });
      }
      schemaFailed ||= r.issues.length > 0;
      outcomes.push({ id: pack.id, version: pack.version, outcome: r.issues.length > 0 ? 'failed' : 'passed' });
    }

    // Business rules assume a schema-valid document (they cast amounts with xs:decimal and would fail on '1E2').
    let saxonDoc: SaxonDocument | undefined;
    let xdm: XNode | undefined;
    const runPack = async (q: LoadedSchematronPack): Promise<{ found: Assertion[]; engine: RulesEngine }> => {
      if (engine === 'compiled') {
        const c = compiledPack(q);
        if (c.ok) {
          xdm ??= buildXdmTree(p.read ?? parseXmlForReading(p.text, options.xmlLimits));
          try {
            return { found: runCompiledPack(c, xdm).map((f) => assertionOf(q, f)), engine: 'compiled' };
          } catch {
            // A dynamic error (or a construct met only now): SaxonJS judges this document, with its own error if any.
          }
        }
      }
      saxonDoc ??= await parseForSaxon(p.text);
      return { found: runSchematronPack(q, saxonDoc), engine: 'saxon-js' };
    };
    let rulesFailed = false;
    for (const { ref, pack } of packs) {
      if (pack.kind !== 'schematron') continue;
      const older = ref.version === undefined ? (olderOf.get(pack.id) ?? []) : [];
      if (schemaFailed) {
        for (const q of [pack, ...older]) outcomes.push({ id: q.id, version: q.version, outcome: 'not-run' });
        continue;
      }
      const current = relevel(await runPack(pack), ref.levels);
      // The current version's findings are what the sender sees, also when an older accepted version passes.
      assertions.push(...current.found);
      let passed = !current.found.some((a) => a.flag === 'error');
      outcomes.push({
        id: pack.id,
        version: pack.version,
        outcome: passed ? 'passed' : 'failed',
        engine: current.engine,
      });
      for (const q of older) {
        if (q.kind !== 'schematron') continue;
        const r = relevel(await runPack(q), ref.levels);
        const ok = !r.found.some((a) => a.flag === 'error');
        outcomes.push({ id: q.id, version: q.version, outcome: ok ? 'passed' : 'failed', engine: r.engine });
        passed ||= ok;
      }
      rulesFailed ||= !passed;
    }

    // The PDF layer of a hybrid invoice is judged whatever its XML says: a rule set of its own, after the XML's.
    let pdfFailed = false;
    if (p.pdf) {
      const r = checkFacturxPdf(p.pdf.layer, { attachmentFilename: p.pdf.attachmentFilename, formatId: p.format.id });
      outcomes.push(r.outcome);
      assertions.push(...r.assertions);
      pdfFailed = r.outcome.outcome === 'failed';
    }

    const f = p.format;
    return {
      isValid: !schemaFailed && !rulesFailed && !pdfFailed,
      format: {
        id: f.id,
        name: f.name,
        ...(f.customizationId !== undefined ? { customizationId: f.customizationId } : {}),
        ...(f.profileId !== undefined ? { profileId: f.profileId } : {}),
      },
      ruleSets: outcomes,
      assertions,
      ...(truncated ? { truncated: true } : {}),
    };
  }

  return {
    store,
    status: () => store.status(),
    async packsFor(format, ruleSet) {
      return (await load(selection(format, ruleSet))).map((x) => x.pack);
    },
    async validate(input, opts = {}) {
      const p = prepare(input, opts);
      return run(p, selection(p.format, opts.ruleSet));
    },
    async validateDocument(doc, xml, format, opts = {}) {
      const buf = typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml;
      const text = typeof xml === 'string' ? xml : decodeXml(xml, options.xmlLimits?.maxBytes).text;
      return run({ doc, xml: buf, text, format }, selection(format, opts.ruleSet));
    },
  };
}
