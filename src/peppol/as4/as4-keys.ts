/**
 * The access point's AS4 keys and trusted AP CAs, loaded from the files the configuration names (PKCS#12 with a
 * password, or PEM). Called once at start; any problem stops the process with a message naming the file.
 */
import type { X509Certificate } from 'node:crypto';
import type { Config } from '../../config/load-config';
import { loadKeyMaterial, loadTrustedCertificates, type KeyMaterial } from '../pki/key-material';
import { ApKeyRing } from '../pki/key-ring';
import { networkTrustAnchors } from '../network-rules/trust-stores';

export interface As4Keys {
  keys: ApKeyRing;
  apCertificateAuthorities: X509Certificate[];
}

export function loadAs4Keys(cfg: Config['as4']): As4Keys {
  const entries: KeyMaterial[] = cfg.keystores.map((k) =>
    loadKeyMaterial({
      kind: 'pkcs12',
      path: k.path,
      password: cfg.keystorePassword ?? '',
      ...(k.alias ? { alias: k.alias } : {}),
    }),
  );
  if (cfg.certificatePath && cfg.privateKeyPath) {
    entries.push(
      loadKeyMaterial({
        kind: 'pem',
        certificatePath: cfg.certificatePath,
        privateKeyPath: cfg.privateKeyPath,
        ...(cfg.privateKeyPassword ? { privateKeyPassphrase: cfg.privateKeyPassword } : {}),
      }),
    );
  }
  return { keys: new ApKeyRing(entries), apCertificateAuthorities: loadApCertificateAuthorities(cfg) };
}

/**
 * The trusted Peppol AP CAs: PEPPOL_AP_CA (PEM bundles or PKCS#12 trust stores), else the G3 AP trust store of the
 * network PEPPOL_NETWORK_TRUST names (checked against its pinned checksum), else none.
 */
export function loadApCertificateAuthorities(
  cfg: Pick<Config['as4'], 'apCaFiles' | 'apCaPassword'> & Partial<Pick<Config['as4'], 'networkTrust'>>,
): X509Certificate[] {
  if (cfg.apCaFiles.length === 0 && cfg.networkTrust)
    return networkTrustAnchors(cfg.networkTrust.rulesDir, cfg.networkTrust.network, 'ap');
  return cfg.apCaFiles.flatMap((path) =>
    loadTrustedCertificates(
      /\.(p12|pfx)$/i.test(path) ? { kind: 'pkcs12', path, password: cfg.apCaPassword ?? '' } : { kind: 'pem', path },
    ),
  );
}
