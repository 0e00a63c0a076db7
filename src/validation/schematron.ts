import SaxonJS from 'saxon-js';
import { GatewayError } from '../core/gateway-error';
import { truncateMessage } from '../core/truncate';
import { simplifySvrlLocation } from './locations';
import type { LoadedSchematronPack } from './pack-store';
import { flagOf, reasonCodeOf, type Assertion } from './types';

/**
 * Schematron through SaxonJS: the official XSLT, compiled to SEF by the fetch script, run on a document SaxonJS parsed
 * once; the SVRL it produces becomes assertions.
 */

export type SaxonDocument = Awaited<ReturnType<typeof SaxonJS.getResource>>;

const SVRL = 'http://purl.oclc.org/dsdl/svrl';
const SEP = '\ue000';
// One string per fired assert/report: kind, id, flag, location, text, joined with a private-use character (U+E000:
// valid
// in XML, unlike control characters, and absent from rule texts). string() keeps absent attributes as empty strings.
const SVRL_QUERY =
  `for $a in //(svrl:failed-assert | svrl:successful-report) return string-join((local-name($a), string($a/@id), ` +
  `string($a/@flag), string($a/@location), normalize-space(string-join($a/svrl:text, ' '))), ` +
  `codepoints-to-string(57344))`;

/** Parses XML text into SaxonJS's tree (once per document, shared by every pack). */
export function parseForSaxon(text: string): Promise<SaxonDocument> {
  return SaxonJS.getResource({ text, type: 'xml' });
}

/** A bracketed rule id at the start of the text, as Factur-X writes them: "[BR-S-10]-A VAT Breakdown …". */
const BRACKETED_ID = /^\[([A-Za-z0-9._-]+)\]/;

/** One fired assert or report as the SVRL holds it (attributes as strings, '' when absent; text space-normalised). */
export interface SvrlFinding {
  kind: string;
  id: string;
  flag: string;
  location: string;
  text: string;
}

/** An SVRL finding as an assertion of the validation result (whichever engine produced it). */
export function assertionOf(pack: Pick<LoadedSchematronPack, 'id'>, f: SvrlFinding): Assertion {
  const flag = flagOf(f.flag);
  return {
    artifact: 'business-rules',
    flag,
    ruleId: f.id || BRACKETED_ID.exec(f.text)?.[1] || 'unnamed-rule',
    // Rule texts may quote document values (value-of): bounded like every echo of the document.
    location: truncateMessage(simplifySvrlLocation(f.location)),
    text: truncateMessage(f.text),
    reasonCode: reasonCodeOf('business-rules', flag),
    ruleSet: pack.id,
  };
}

export function runSchematronPack(pack: LoadedSchematronPack, doc: SaxonDocument): Assertion[] {
  const out: Assertion[] = [];
  for (const sheet of pack.stylesheets) {
    let svrl;
    try {
      svrl = SaxonJS.transform({
        stylesheetInternal: sheet.sef,
        stylesheetBaseURI: sheet.baseUri,
        sourceNode: doc,
        destination: 'document',
      }).principalResult;
    } catch (e) {
      const err = e as { code?: string; message?: string };
      // The rules themselves failed on this document (a dynamic XPath error): the document cannot be judged.
      throw new GatewayError(
        'UNPROCESSABLE',
        truncateMessage(
          `Rule pack ${pack.id} ${pack.version} could not be evaluated on this document: ${err.code ?? 'error'} ` +
            `${err.message ?? String(e)}`,
        ),
        {
          details: { reason: 'RULES_EVALUATION_FAILED', pack: pack.id, version: pack.version, errorCode: err.code },
          cause: e,
        },
      );
    }
    const rows = SaxonJS.XPath.evaluate(SVRL_QUERY, svrl, {
      resultForm: 'array',
      namespaceContext: { svrl: SVRL },
    }) as string[];
    for (const row of rows) {
      const [kind = '', id = '', flagAttr = '', location = '', text = ''] = String(row).split(SEP);
      out.push(assertionOf(pack, { kind, id, flag: flagAttr, location, text }));
    }
  }
  return out;
}
