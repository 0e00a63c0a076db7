/**
 * Loading an access point's (or SMP's) private key and certificate from PEM files or a PKCS#12 key store with a
 * password, and the trusted CA certificates from PEM bundles or PKCS#12 trust stores. The key must match the
 * certificate; anything else is refused with PeppolError(key-material-invalid) naming the file.
 */
import { createPrivateKey, type KeyObject, type X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PeppolError } from '../peppol-error';
import { keyMatchesCertificate, parseCertificates } from './certificates';
import { Pkcs12Error, readPkcs12, type Pkcs12Contents } from './pkcs12';

export interface KeyMaterial {
  privateKey: KeyObject;
  certificate: X509Certificate;
  /** CA certificates above the leaf, nearest first, as far as the source provided them. */
  chain: X509Certificate[];
}

export type KeySource =
  | { kind: 'pkcs12'; path: string; password: string; alias?: string }
  | { kind: 'pem'; certificatePath: string; privateKeyPath: string; privateKeyPassphrase?: string; chainPath?: string };

function invalid(message: string, cause?: unknown): PeppolError {
  return new PeppolError('INTERNAL', 'key-material-invalid', message, {
    retryable: false,
    ...(cause ? { cause } : {}),
  });
}

function readFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw invalid(`cannot read the ${what} file ${path}: ${(e as Error).message}`, e);
  }
}

/** Orders `certs` from the one that issued `leaf` upwards, dropping unrelated ones. */
function chainFor(leaf: X509Certificate, certs: readonly X509Certificate[]): X509Certificate[] {
  const chain: X509Certificate[] = [];
  let current = leaf;
  for (let i = 0; i < certs.length; i++) {
    const issuer = certs.find(
      (c) => c !== current && !chain.includes(c) && current.checkIssued(c) && current.verify(c.publicKey),
    );
    if (!issuer) break;
    chain.push(issuer);
    if (issuer.checkIssued(issuer)) break;
    current = issuer;
  }
  return chain;
}

/** Picks the key entry (by alias, or the only one) and its certificate out of PKCS#12 contents. */
export function keyMaterialFromPkcs12(
  data: Buffer,
  password: string,
  alias?: string,
  label = 'PKCS#12 key store',
): KeyMaterial {
  let contents: Pkcs12Contents;
  try {
    contents = readPkcs12(data, password);
  } catch (e) {
    throw invalid(`${label}: ${e instanceof Pkcs12Error ? e.message : (e as Error).message}`, e);
  }
  const keys =
    alias === undefined
      ? contents.keys
      : contents.keys.filter((k) => k.friendlyName?.toLowerCase() === alias.toLowerCase());
  if (keys.length === 0) {
    const aliases = contents.keys.map((k) => k.friendlyName ?? '(no alias)').join(', ') || 'none';
    throw invalid(
      `${label}: ${alias === undefined ? 'no private key' : `no private key with alias "${alias}"`} (key ` +
        `aliases: ${aliases})`,
    );
  }
  if (keys.length > 1) {
    throw invalid(
      `${label} holds ${keys.length} private keys; configure the alias of the one to use ` +
        `(${keys.map((k) => k.friendlyName ?? '?').join(', ')})`,
    );
  }
  const key = keys[0] as (typeof keys)[number];
  const byId = key.localKeyId
    ? contents.certificates.find((c) => c.localKeyId?.equals(key.localKeyId as Buffer))
    : undefined;
  const entry = byId ?? contents.certificates.find((c) => keyMatchesCertificate(key.key, c.certificate));
  if (!entry || !keyMatchesCertificate(key.key, entry.certificate))
    throw invalid(`${label}: no certificate matches the private key`);
  const others = contents.certificates.filter((c) => c !== entry).map((c) => c.certificate);
  return { privateKey: key.key, certificate: entry.certificate, chain: chainFor(entry.certificate, others) };
}

/**
 * Builds key material from PEM text: the first certificate of `certificatePem` is the leaf, the rest may be its chain.
 */
export function keyMaterialFromPem(
  certificatePem: Buffer | string,
  privateKeyPem: Buffer | string,
  passphrase?: string,
  chainPem?: Buffer | string,
  label = 'PEM',
): KeyMaterial {
  const certs = parseCertificates(certificatePem);
  const leaf = certs[0];
  if (!leaf) throw invalid(`${label}: no certificate found`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({
      key: privateKeyPem,
      format: 'pem',
      ...(passphrase !== undefined ? { passphrase } : {}),
    });
  } catch (e) {
    const hint = passphrase === undefined ? ' (is it encrypted and the passphrase missing?)' : ' (wrong passphrase?)';
    throw invalid(`${label}: the private key cannot be read${hint}: ${(e as Error).message}`, e);
  }
  if (!keyMatchesCertificate(privateKey, leaf))
    throw invalid(`${label}: the private key does not belong to the certificate ${leaf.subject.replace(/\n/g, ', ')}`);
  const extra = [...certs.slice(1), ...(chainPem ? parseCertificates(chainPem) : [])];
  return { privateKey, certificate: leaf, chain: chainFor(leaf, extra) };
}

export function loadKeyMaterial(source: KeySource): KeyMaterial {
  if (source.kind === 'pkcs12') {
    return keyMaterialFromPkcs12(
      readFile(source.path, 'PKCS#12'),
      source.password,
      source.alias,
      `PKCS#12 key store ${source.path}`,
    );
  }
  return keyMaterialFromPem(
    readFile(source.certificatePath, 'certificate'),
    readFile(source.privateKeyPath, 'private key'),
    source.privateKeyPassphrase,
    source.chainPath ? readFile(source.chainPath, 'chain') : undefined,
    `PEM ${source.certificatePath}`,
  );
}

export type TrustSource = { kind: 'pem'; path: string } | { kind: 'pkcs12'; path: string; password: string };

/** CA certificates from a PEM bundle or every certificate of a PKCS#12 trust store. */
export function loadTrustedCertificates(source: TrustSource): X509Certificate[] {
  const data = readFile(source.path, 'trust store');
  let certs: X509Certificate[];
  if (source.kind === 'pem') certs = parseCertificates(data);
  else {
    try {
      certs = readPkcs12(data, source.password).certificates.map((c) => c.certificate);
    } catch (e) {
      throw invalid(`PKCS#12 trust store ${source.path}: ${(e as Error).message}`, e);
    }
  }
  if (certs.length === 0) throw invalid(`trust store ${source.path} holds no certificates`);
  const notCa = certs.find((c) => !c.ca);
  if (notCa)
    throw invalid(
      `trust store ${source.path} holds a certificate that is not a CA: ${notCa.subject.replace(/\n/g, ', ')}`,
    );
  return certs;
}
