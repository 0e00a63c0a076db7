import { GatewayError } from '../core/gateway-error';
import { parseXmlForReading, type PdfLayer, type ReadDocument, type ReadElement, type ReadNode } from '../formats';
import { reasonCodeOf, type Assertion, type AssertionFlag, type RuleSetOutcome } from './types';

/**
 * The PDF layer of a Factur-X / ZUGFeRD 2.x hybrid invoice, checked in process against the Factur-X 1.0 specification
 * (and the ZUGFeRD 2.x technical appendix, which says the same): the XMP metadata that identifies the file as PDF/A-3
 * and as Factur-X, the extension schema PDF/A requires for the Factur-X properties, and the associated-file structure
 * (`/AFRelationship`, the catalog's `/AF`). The facts come from the bounded PDF reader (src/formats/facturx); this
 * module only judges them. A full PDF/A-3 check (fonts, colour spaces, ...) is not done here (docs/decisions.md).
 */

export const FACTURX_PDF_RULE_SET = { id: 'facturx-pdf', version: '1.0' } as const;

/** Namespaces of the Factur-X XMP properties: Factur-X 1.0 / ZUGFeRD ≥ 2.1, and ZUGFeRD 2.0. */
export const FACTURX_XMP_NAMESPACES: readonly string[] = [
  'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#',
  'urn:zugferd:pdfa:CrossIndustryDocument:invoice:2p0#',
];

const NS = {
  pdfaid: 'http://www.aiim.org/pdfa/ns/id/',
  pdfaSchema: 'http://www.aiim.org/pdfa/ns/schema#',
  pdfaProperty: 'http://www.aiim.org/pdfa/ns/property#',
};

const FX_PROPERTIES = ['DocumentType', 'DocumentFileName', 'Version', 'ConformanceLevel'] as const;

/** fx:ConformanceLevel per detected profile; ZUGFeRD 2.0 called the EN 16931 profile COMFORT. */
const CONFORMANCE_LEVELS: Readonly<Record<string, readonly string[]>> = {
  'facturx-minimum': ['MINIMUM'],
  'facturx-basicwl': ['BASIC WL'],
  'facturx-basic': ['BASIC'],
  'facturx-en16931': ['EN 16931', 'COMFORT'],
  'facturx-extended': ['EXTENDED'],
  'facturx-extended-ctc-fr': ['EXTENDED'],
  'facturx-xrechnung': ['XRECHNUNG'],
};

/**
 * /AFRelationship of the invoice XML: Data, Source or Alternative; for MINIMUM and BASIC WL, which are not complete
 * invoices (the PDF stays the invoice), only Data.
 */
const AF_RELATIONSHIPS = ['Data', 'Source', 'Alternative'];
const DATA_ONLY_PROFILES = new Set(['facturx-minimum', 'facturx-basicwl']);

/** The XMP packet is parsed with the secure parser under limits fit for metadata (a few kilobytes in real files). */
const XMP_XML_LIMITS = { maxBytes: 1024 * 1024, maxNodes: 20_000, maxDepth: 64 };

export interface FacturxPdfContext {
  /** Name of the embedded invoice file the XML was read from. */
  attachmentFilename: string;
  /** Detected format id of the embedded XML (e.g. `facturx-en16931`). */
  formatId: string;
}

export interface FacturxPdfResult {
  outcome: RuleSetOutcome;
  assertions: Assertion[];
}

const ELEMENT = 1;

/** Every element of the tree, depth first (the packet is capped, so the walk is too). */
function elementsOf(doc: ReadDocument): ReadElement[] {
  const out: ReadElement[] = [];
  const pending: ReadNode[] = doc.documentElement ? [doc.documentElement] : [];
  while (pending.length > 0) {
    const node = pending.pop() as ReadNode;
    if (node.nodeType !== ELEMENT) continue;
    out.push(node as ReadElement);
    const children: ReadNode[] = [];
    for (let c = node.firstChild; c; c = c.nextSibling) children.push(c);
    pending.push(...children.reverse());
  }
  return out;
}

function localOf(qname: string): string {
  const k = qname.indexOf(':');
  return k === -1 ? qname : qname.slice(k + 1);
}

/**
 * The values of an XMP property among `elements`: written as an element (`<fx:Version>1.0</fx:Version>`) or as an
 * attribute of its rdf:Description (`fx:Version="1.0"`), both allowed by RDF/XML.
 */
function propertyValues(elements: readonly ReadElement[], ns: string, local: string): string[] {
  const values: string[] = [];
  for (const el of elements) {
    if (el.namespaceURI === ns && el.localName === local) values.push((el.textContent ?? '').trim());
    const attrs = el.attributes;
    for (let k = 0; k < attrs.length; k++) {
      const a = attrs.item(k);
      if (a && a.namespaceURI === ns && localOf(a.name) === local) values.push(a.value.trim());
    }
  }
  return values;
}

/** The elements below (and including) `root`. */
function subtree(root: ReadElement): ReadElement[] {
  return elementsOf({ documentElement: root, getElementsByTagNameNS: () => ({ length: 0, item: () => null }) });
}

export function checkFacturxPdf(layer: PdfLayer, ctx: FacturxPdfContext): FacturxPdfResult {
  const assertions: Assertion[] = [];
  const add = (ruleId: string, location: string, text: string, flag: AssertionFlag = 'error'): void => {
    assertions.push({
      artifact: 'business-rules',
      flag,
      ruleId,
      location,
      text,
      reasonCode: reasonCodeOf('business-rules', flag),
      ruleSet: FACTURX_PDF_RULE_SET.id,
    });
  };

  // FX-PDF-09: PDF/A forbids encryption (ISO 19005-3, 6.1.3).
  if (layer.encrypted)
    add('FX-PDF-09', '/Trailer/Encrypt', 'The PDF is encrypted; PDF/A-3 (and so Factur-X) forbids encryption.');

  // FX-PDF-07 / FX-PDF-08: the invoice is an associated file of the document.
  const relationship = layer.afRelationship;
  const allowed = DATA_ONLY_PROFILES.has(ctx.formatId) ? ['Data'] : AF_RELATIONSHIPS;
  if (relationship === undefined) {
    add(
      'FX-PDF-07',
      '/Catalog/Names/EmbeddedFiles/AFRelationship',
      `The file specification of "${ctx.attachmentFilename}" has no /AFRelationship (expected ${allowed.join(', ')}).`,
    );
  } else if (!allowed.includes(relationship)) {
    add(
      'FX-PDF-07',
      '/Catalog/Names/EmbeddedFiles/AFRelationship',
      `The /AFRelationship of "${ctx.attachmentFilename}" is /${relationship}; ` +
        (allowed.length === 1
          ? `the ${ctx.formatId.replace('facturx-', '').toUpperCase()} profile requires /Data.`
          : `Factur-X allows ${allowed.map((r) => `/${r}`).join(', ')}.`),
    );
  }
  if (!layer.catalog) {
    add('FX-PDF-01', '/Catalog', 'The document catalog (/Root) was not found.');
  } else if (!layer.inCatalogAf) {
    add(
      'FX-PDF-08',
      '/Catalog/AF',
      `The catalog's /AF array does not reference the file specification of "${ctx.attachmentFilename}".`,
    );
  }

  const xmp = layer.catalog ? readXmp(layer, (text) => add('FX-PDF-01', '/Catalog/Metadata', text)) : undefined;
  if (xmp) checkXmp(xmp, ctx, add);

  const failed = assertions.some((a) => a.flag === 'error');
  return {
    outcome: { ...FACTURX_PDF_RULE_SET, outcome: failed ? 'failed' : 'passed' },
    assertions,
  };
}

function readXmp(layer: PdfLayer, fail: (text: string) => void): ReadElement[] | undefined {
  if (layer.xmpError !== undefined) {
    fail(`The XMP metadata stream cannot be read: ${layer.xmpError}.`);
    return undefined;
  }
  if (layer.xmp === undefined) {
    fail('The document catalog has no XMP metadata stream (/Metadata); PDF/A-3 and Factur-X require one.');
    return undefined;
  }
  try {
    return elementsOf(parseXmlForReading(layer.xmp, XMP_XML_LIMITS));
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    fail(`The XMP metadata is not well-formed, safe XML: ${e.message}`);
    return undefined;
  }
}

type Add = (ruleId: string, location: string, text: string, flag?: AssertionFlag) => void;

function checkXmp(elements: ReadElement[], ctx: FacturxPdfContext, add: Add): void {
  // FX-PDF-02: PDF/A-3 identification (ISO 19005-3, 6.6.4: pdfaid:conformance A, B or U, in capitals).
  const part = propertyValues(elements, NS.pdfaid, 'part');
  const conformance = propertyValues(elements, NS.pdfaid, 'conformance');
  const where = '/Catalog/Metadata/pdfaid';
  if (part.length === 0 || conformance.length === 0) {
    add('FX-PDF-02', where, 'The XMP metadata has no PDF/A identification (pdfaid:part and pdfaid:conformance).');
  } else if (part[0] === '4' && conformance[0] === 'F') {
    // PDF/A-4f also allows associated files of any type; the Factur-X 1.0 specification names PDF/A-3.
    add(
      'FX-PDF-02',
      where,
      'The PDF declares PDF/A-4f; the Factur-X 1.0 specification requires PDF/A-3 (A, B or U).',
      'warning',
    );
  } else if (part[0] !== '3' || !['A', 'B', 'U'].includes(conformance[0] as string)) {
    add(
      'FX-PDF-02',
      where,
      `The XMP metadata declares pdfaid:part "${part[0]}" and pdfaid:conformance "${conformance[0]}"; ` +
        'Factur-X requires PDF/A-3 with conformance A, B or U.',
    );
  }

  // FX-PDF-03: the Factur-X properties, in the namespace of Factur-X 1.0 / ZUGFeRD 2.x.
  const ns = FACTURX_XMP_NAMESPACES.find((n) => FX_PROPERTIES.some((p) => propertyValues(elements, n, p).length > 0));
  if (ns === undefined) {
    add(
      'FX-PDF-03',
      '/Catalog/Metadata/fx:DocumentType',
      `The XMP metadata has no Factur-X properties (namespace ${FACTURX_XMP_NAMESPACES[0]}).`,
    );
    return;
  }
  const value = (local: string): string | undefined => propertyValues(elements, ns, local)[0];
  const missing = FX_PROPERTIES.filter((p) => !value(p));
  if (missing.length > 0) {
    add(
      'FX-PDF-03',
      `/Catalog/Metadata/fx:${missing[0]}`,
      `The XMP metadata lacks the Factur-X ${missing.map((p) => `fx:${p}`).join(', ')}.`,
    );
  }
  const documentType = value('DocumentType');
  if (documentType && documentType !== 'INVOICE') {
    add(
      'FX-PDF-03',
      '/Catalog/Metadata/fx:DocumentType',
      `fx:DocumentType is "${documentType}"; a Factur-X invoice has INVOICE.`,
    );
  }

  // FX-PDF-04: PDF/A allows custom XMP properties only with an extension schema describing them (ISO 19005-3, 6.6.2.3).
  checkExtensionSchema(elements, ns, add);

  // FX-PDF-05: the metadata names the embedded file.
  const fileName = value('DocumentFileName');
  if (fileName && fileName !== ctx.attachmentFilename) {
    add(
      'FX-PDF-05',
      '/Catalog/Metadata/fx:DocumentFileName',
      `fx:DocumentFileName is "${fileName}", but the embedded invoice is "${ctx.attachmentFilename}".`,
    );
  }

  // FX-PDF-06: the conformance level is the profile of the embedded XML.
  const level = value('ConformanceLevel');
  const expected = CONFORMANCE_LEVELS[ctx.formatId];
  if (level && expected && !expected.includes(level)) {
    add(
      'FX-PDF-06',
      '/Catalog/Metadata/fx:ConformanceLevel',
      `fx:ConformanceLevel is "${level}", but the embedded XML is of the ${expected[0]} profile.`,
    );
  }
}

function checkExtensionSchema(elements: ReadElement[], ns: string, add: Add): void {
  // A schema entry is the element holding pdfaSchema:namespaceURI (a parseType="Resource" rdf:li or an
  // rdf:Description); its pdfaProperty:name values are the properties it describes.
  const entries: ReadElement[] = [];
  for (const el of elements) {
    if (el.namespaceURI === NS.pdfaSchema && el.localName === 'namespaceURI' && (el.textContent ?? '').trim() === ns) {
      const parent = el.parentNode;
      if (parent && parent.nodeType === ELEMENT) entries.push(parent as ReadElement);
    } else if (propertyValues([el], NS.pdfaSchema, 'namespaceURI').includes(ns)) {
      entries.push(el);
    }
  }
  const location = '/Catalog/Metadata/pdfaExtension:schemas';
  if (entries.length === 0) {
    add(
      'FX-PDF-04',
      location,
      `No PDF/A extension schema describes the Factur-X namespace ${ns}; PDF/A requires one for its properties.`,
    );
    return;
  }
  const described = new Set(entries.flatMap((e) => propertyValues(subtree(e), NS.pdfaProperty, 'name')));
  const undescribed = FX_PROPERTIES.filter((p) => !described.has(p));
  if (undescribed.length > 0) {
    add(
      'FX-PDF-04',
      location,
      `The PDF/A extension schema of ${ns} does not describe ${undescribed.map((p) => `fx:${p}`).join(', ')}.`,
    );
  }
}
