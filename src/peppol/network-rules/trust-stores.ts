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

/**
 * The CA certificates of one trust store. The AP stores hold the root and both intermediates; the SMP stores add the
 * public TLS roots peppol-commons ships beside them, which are not Peppol CAs and are left out here.
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
  const peppol = certs.filter((c) => c.ca && /O=OpenPEPPOL AISBL/.test(c.subject));
  if (peppol.length === 0) throw new Error(`${name} of the network data ${loc.version} holds no Peppol CA`);
  return peppol;
}
