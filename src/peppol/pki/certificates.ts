/**
 * Certificate helpers on top of node:crypto's X509Certificate; the KeyUsage extension, which Node does not expose, is
 * read with the DER reader.
 */
import { X509Certificate, createPublicKey, type KeyObject } from 'node:crypto';
import { TAG, childrenOf, expectTag, explicit, parseDer, readOctets, readOid, sequence } from './der';

export type KeyUsageName =
  | 'digitalSignature'
  | 'nonRepudiation'
  | 'keyEncipherment'
  | 'dataEncipherment'
  | 'keyAgreement'
  | 'keyCertSign'
  | 'cRLSign';

/** KeyUsage bits in BIT STRING order (RFC 5280 4.2.1.3). */
const KEY_USAGE_ORDER: readonly KeyUsageName[] = [
  'digitalSignature',
  'nonRepudiation',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
];
const KEY_USAGE_OID = '2.5.29.15';

/** Key usages of a certificate; undefined when it has no KeyUsage extension (then any usage is allowed). */
export function keyUsagesOf(cert: X509Certificate): KeyUsageName[] | undefined {
  const [tbs] = sequence(parseDer(cert.raw), 'Certificate');
  const extensions = sequence(tbs, 'TBSCertificate').find((t) => t.tag === 0xa3);
  if (!extensions) return undefined;
  for (const ext of childrenOf(expectTag(explicit(extensions, 3, 'extensions'), TAG.SEQUENCE, 'Extensions'))) {
    const parts = sequence(ext, 'Extension');
    if (readOid(parts[0], 'extension id') !== KEY_USAGE_OID) continue;
    const bits = expectTag(parseDer(readOctets(parts[parts.length - 1], 'KeyUsage')), TAG.BIT_STRING, 'KeyUsage').value;
    return KEY_USAGE_ORDER.filter((_, i) => (((bits[1 + (i >> 3)] ?? 0) >> (7 - (i & 7))) & 1) === 1);
  }
  return undefined;
}

/** One certificate from PEM or DER (base64 without armour is accepted too, as SMP responses carry it). */
export function parseCertificate(input: Buffer | string): X509Certificate {
  if (typeof input === 'string') {
    const trimmed = input.trim();
    if (trimmed.startsWith('-----BEGIN')) return new X509Certificate(trimmed);
    return new X509Certificate(Buffer.from(trimmed.replace(/\s+/g, ''), 'base64'));
  }
  return new X509Certificate(input);
}

/** All certificates of a PEM bundle, in file order. */
export function parseCertificates(pem: Buffer | string): X509Certificate[] {
  const text = typeof pem === 'string' ? pem : pem.toString('utf8');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

export function certificateToPem(cert: X509Certificate): string {
  return cert.toString();
}

/** Node formats names as `C=BE\nO=…\nCN=…`; this gives the RDN attributes in order, values unescaped. */
export function nameAttributes(name: string): Array<{ type: string; value: string }> {
  return name
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const i = l.indexOf('=');
      return { type: l.slice(0, i).trim().toUpperCase(), value: l.slice(i + 1).trim() };
    });
}

export function commonNameOf(cert: X509Certificate): string | undefined {
  return nameAttributes(cert.subject).find((a) => a.type === 'CN')?.value;
}

/**
 * Whether a distinguished name written as text (`CN=x, O=y, C=z`, RFC 4514 style, any order) names the same RDN set
 * as the certificate subject. Used for SMP redirects, whose CertificateUID names the target SMP's certificate.
 */
export function subjectMatches(cert: X509Certificate, dn: string): boolean {
  const norm = (attrs: Array<{ type: string; value: string }>): string[] =>
    attrs.map((a) => `${a.type}=${a.value.replace(/\s+/g, ' ').toLowerCase()}`).sort();
  const parsed = splitDn(dn);
  if (!parsed) return false;
  const a = norm(nameAttributes(cert.subject));
  const b = norm(parsed);
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

const SHORT_NAMES: Record<string, string> = {
  COMMONNAME: 'CN',
  COUNTRYNAME: 'C',
  ORGANIZATIONNAME: 'O',
  ORGANIZATIONALUNITNAME: 'OU',
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
};

/** Splits `CN=a\, b, O=x` at unescaped commas (or semicolons); undefined for text that is not a DN. */
function splitDn(dn: string): Array<{ type: string; value: string }> | undefined {
  const out: Array<{ type: string; value: string }> = [];
  let cur = '';
  const flush = (): boolean => {
    const i = cur.indexOf('=');
    if (i <= 0) return false;
    const type = cur.slice(0, i).trim().toUpperCase();
    out.push({
      type: SHORT_NAMES[type] ?? type,
      value: cur
        .slice(i + 1)
        .trim()
        .replace(/\\(.)/g, '$1'),
    });
    cur = '';
    return true;
  };
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i] as string;
    if (c === '\\' && i + 1 < dn.length) {
      cur += c + (dn[i + 1] as string);
      i++;
    } else if (c === ',' || c === ';' || c === '+') {
      if (!flush()) return undefined;
    } else cur += c;
  }
  if (cur.trim() !== '' && !flush()) return undefined;
  return out.length ? out : undefined;
}

/** True when the private key belongs to the certificate. */
export function keyMatchesCertificate(privateKey: KeyObject, cert: X509Certificate): boolean {
  const a = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const b = cert.publicKey.export({ format: 'der', type: 'spki' });
  return a.equals(b);
}

export function fingerprintSha256(cert: X509Certificate): string {
  return cert.fingerprint256.replace(/:/g, '').toLowerCase();
}
