import { XMLSerializer, type Element } from '@xmldom/xmldom';
import { GatewayError } from '../core/gateway-error';
import { parseXml, UBL_NS } from '../formats';
import type { TransformRunner } from '../transform';
import type { PeppolIdentifier } from '../../workflows/contracts/send-invoice';

/** The plain EN 16931 UBL the addresses are written into when the source format has no place for them. */
const INTERMEDIATE = 'en16931-ubl';

const PARTIES = [
  { party: 'AccountingSupplierParty', address: 'sender' },
  { party: 'AccountingCustomerParty', address: 'receiver' },
] as const;

/**
 * What the conversion for a recipient starts from. A format without a Peppol document type whose EN 16931 content
 * lacks the Peppol addresses (FatturaPA and ebInterface have no element for the seller's, ebInterface none for the
 * buyer's) is first converted to plain EN 16931 UBL and given, as `cbc:EndpointID`, the addresses it is routed with
 * (BT-49 and BT-34 as the document check read them): every Peppol format requires them, and they must be the SBDH's.
 * Otherwise the upload itself. The same bytes on every call (conversion is a pure function), so a send attempt that
 * converts again sends what the route was chosen with.
 */
export async function conversionSource(
  bytes: Buffer,
  addresses: { sender: PeppolIdentifier; receiver: PeppolIdentifier },
  transform: TransformRunner,
): Promise<Buffer> {
  let xml: string;
  try {
    xml = (await transform(bytes, { targetFormat: INTERMEDIATE })).xml;
  } catch (e) {
    // Not convertible at all: the conversion for the recipient says so for each format it tries.
    if (e instanceof GatewayError) return bytes;
    throw e;
  }
  const doc = parseXml(Buffer.from(xml, 'utf8'));
  let added = false;
  for (const { party, address } of PARTIES) {
    const holder = doc.getElementsByTagNameNS(UBL_NS.cac, party).item(0);
    const el = holder ? firstChild(holder, UBL_NS.cac, 'Party') : undefined;
    if (!el || firstChild(el, UBL_NS.cbc, 'EndpointID')) continue;
    const value = addresses[address].value;
    const i = value.indexOf(':');
    const endpoint = doc.createElementNS(UBL_NS.cbc, 'cbc:EndpointID');
    endpoint.setAttribute('schemeID', value.slice(0, i));
    endpoint.appendChild(doc.createTextNode(value.slice(i + 1)));
    el.insertBefore(endpoint, el.firstChild);
    added = true;
  }
  return added ? Buffer.from(new XMLSerializer().serializeToString(doc), 'utf8') : bytes;
}

function firstChild(parent: Element, ns: string, localName: string): Element | undefined {
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === localName)
      return n as Element;
  }
  return undefined;
}
