/**
 * The Peppol PKI trust anchors of a network (test or production): the G3 trust stores of the pinned peppol-commons
 * jar (`truststore/2025/{ap,smp}-{test,prod}-truststore.p12`), checked against their pinned sha256 before they are
 * read. G2 (the PKI retired on 2026-04-01) is in none of them, so it is trusted only where an operator configures it
 * explicitly (PEPPOL_AP_CA, PEPPOL_SMP_TRUSTSTORE).
 */
import type { X509Certificate } from 'node:crypto';
import { readPkcs12 } from '../pki/pkcs12';
import { networkDataLocation, readPinnedFile } from './network-data';

export type PeppolNetwork = 'test' | 'production';
export type TrustStoreKind = 'ap' | 'smp';

/** peppol-commons' password of its public trust stores. */
const TRUSTSTORE_PASSWORD = 'peppol';

export function trustStoreName(network: PeppolNetwork, kind: TrustStoreKind): string {
  return `truststore/2025/${kind}-${network === 'production' ? 'prod' : 'test'}-truststore.p12`;
}

/** The CN of each kind's intermediate; the root is `PEPPOL Root [TEST ]CA - G3`. */
const INTERMEDIATE: Record<TrustStoreKind, string> = {
  ap: 'PEPPOL ACCESS POINT',
  smp: 'PEPPOL SERVICE METADATA PUBLISHER',
};

/**
 * The G3 anchors of one trust store: its root and the intermediate of its kind. The stores of the pinned jar (made
 * before 2026-04-01) still hold the G2 certificates, the other kind's intermediate and, for SMP, public TLS roots;
 * none of those is taken.
 */
export function networkTrustAnchors(
  rulesDir: string,
  network: PeppolNetwork,
  kind: TrustStoreKind,
  manifestFile?: string,
): X509Certificate[] {
  const loc = networkDataLocation(rulesDir, manifestFile);
  const name = trustStoreName(network, kind);
  const certs = readPkcs12(readPinnedFile(loc, name), TRUSTSTORE_PASSWORD).certificates.map((c) => c.certificate);
  const test = network === 'test' ? 'TEST ' : '';
  const wanted = [`PEPPOL Root ${test}CA - G3`, `${INTERMEDIATE[kind]} ${test}CA - G3`];
  const anchors = certs.filter((c) => {
    const cn = /(?:^|\n)CN=([^\n]*)/.exec(c.subject)?.[1];
    return c.ca && /(?:^|\n)O=OpenPEPPOL AISBL(?:\n|$)/.test(c.subject) && cn !== undefined && wanted.includes(cn);
  });
  const missing = wanted.filter((w) => !anchors.some((c) => c.subject.includes(`CN=${w}`)));
  if (missing.length > 0) throw new Error(`${name} of the network data ${loc.version} lacks ${missing.join(', ')}`);
  return anchors;
}
