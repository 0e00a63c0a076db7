/**
 * A project-owned test PKI shaped like Peppol's G3 hierarchy:
 *
 *   root CA ─┬─ AP CA ──┬─ AP certificate POP000001 (sender), plus a second one for rollover tests
 *            │          ├─ AP certificate POP000002 (receiver)
 *            │          └─ AP certificate POP000001, revoked (keyCompromise) in the AP CA's CRL
 *            └─ SMP CA ──── SMP certificate
 *
 * Each intermediate CA issues a CRL (`ap-ca.crl`, `smp-ca.crl`, DER, valid a year), and every leaf names it as its CRL
 * Distribution Point under `crlBaseUrl` (default TEST_CRL_BASE_URL, a name that never resolves: tests serve the files
 * from a local HTTP server and route that name to it).
 *
 * Leaves follow the G3 AP profile: RSA-2048, KeyUsage (critical) digitalSignature + keyEncipherment +
 * dataEncipherment, ExtendedKeyUsage (critical) clientAuth, BasicConstraints CA=false, CN = Seat ID. CAs carry
 * BasicConstraints CA=true (intermediates pathLen 0) and keyCertSign + cRLSign.
 *
 * Generated at test time, by `npm run pki:test` (default `~/.cache/invoice-gateway/pki`) and by `npm start` for its
 * demo access point (under `var/pki`), never inside git; the files are for tests and the local demo only, and no
 * Peppol network trusts them.
 */
import { X509Certificate, createPublicKey, generateKeyPair, randomBytes, webcrypto, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as X509 from '@peculiar/x509';
import { x509 } from './x509-lib';
import { keyMaterialFromPkcs12, type KeyMaterial } from './key-material';
import { writePkcs12 } from './pkcs12';

/** Password of every PKCS#12 file of the test PKI (test material only). */
export const TEST_PKI_PASSWORD = 'test';
export const TEST_SENDER_SEAT_ID = 'POP000001';
export const TEST_RECEIVER_SEAT_ID = 'POP000002';
/** Where the test PKI's certificates say their CRLs are, unless generated with another base URL. */
export const TEST_CRL_BASE_URL = 'http://crl.test-pki.invoice-gateway.invalid';

const DAY = 86_400_000;
const crypto = webcrypto as unknown as Crypto;
const SIGNING = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const ORG = 'C=NL, O=Invoice Gateway';

export interface IssueOptions {
  subject: string;
  notBefore?: Date;
  notAfter?: Date;
  /** Overrides the profile's key usages (negative tests). */
  keyUsages?: number;
  /** CRL Distribution Point URLs the certificate names. */
  crlUrls?: string[];
  /** OCSP responder URL (Authority Information Access). */
  ocspUrl?: string;
}

export interface CaOptions {
  subject: string;
  notBefore?: Date;
  notAfter?: Date;
}

export interface TestPki {
  rootCa: KeyMaterial;
  apCa: KeyMaterial;
  smpCa: KeyMaterial;
  apSender: KeyMaterial;
  /** A second, newer certificate of the sender's Seat ID, valid at the same time (rollover). */
  apSenderNext: KeyMaterial;
  apReceiver: KeyMaterial;
  /** The sender's Seat ID, listed as revoked in the AP CA's CRL. */
  apRevoked: KeyMaterial;
  smp: KeyMaterial;
  /** DER CRLs of the intermediates (the AP CA's lists apRevoked). */
  crls: { apCa: Buffer; smpCa: Buffer };
  /** The base URL the leaves' CRL Distribution Points are under (`<base>/ap-ca.crl`, `<base>/smp-ca.crl`). */
  crlBaseUrl: string;
}

export const TEST_PKI_ENTRIES = [
  'rootCa',
  'apCa',
  'smpCa',
  'apSender',
  'apSenderNext',
  'apReceiver',
  'apRevoked',
  'smp',
] as const;

/** The CRL file names, also the last path segment of the distribution point URLs. */
export const TEST_CRL_FILES = { apCa: 'ap-ca.crl', smpCa: 'smp-ca.crl' } as const;

function generateRsa(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return new Promise((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength: 2048, publicExponent: 0x10001 }, (err, publicKey, privateKey) =>
      err ? reject(err) : resolve({ publicKey, privateKey }),
    ),
  );
}

function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] as number) & 0x7f;
  return b.toString('hex');
}

async function signingKey(k: KeyObject): Promise<CryptoKey> {
  return crypto.subtle.importKey('pkcs8', k.export({ format: 'der', type: 'pkcs8' }), SIGNING, false, ['sign']);
}

function spki(k: KeyObject): X509.PublicKey {
  return new x509.PublicKey(createPublicKey(k).export({ format: 'der', type: 'spki' }));
}

async function create(
  subject: string,
  subjectKey: KeyObject,
  issuer: { name: string; key: KeyObject },
  validity: { notBefore: Date; notAfter: Date },
  extensions: X509.Extension[],
): Promise<X509Certificate> {
  const publicKey = spki(subjectKey);
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial(),
      subject,
      issuer: issuer.name,
      notBefore: validity.notBefore,
      notAfter: validity.notAfter,
      signingAlgorithm: SIGNING,
      publicKey,
      signingKey: await signingKey(issuer.key),
      extensions: [
        ...extensions,
        await x509.SubjectKeyIdentifierExtension.create(publicKey, false, crypto),
        await x509.AuthorityKeyIdentifierExtension.create(spki(issuer.key), false, crypto),
      ],
    },
    crypto,
  );
  return new X509Certificate(Buffer.from(cert.rawData));
}

function defaultValidity(years: number, o: { notBefore?: Date; notAfter?: Date }): { notBefore: Date; notAfter: Date } {
  // A day of slack before "now" so peers with a slightly slow clock accept fresh certificates.
  const notBefore = o.notBefore ?? new Date(Date.now() - DAY);
  return { notBefore, notAfter: o.notAfter ?? new Date(notBefore.getTime() + years * 365 * DAY) };
}

export async function createRootCa(options: CaOptions): Promise<KeyMaterial> {
  const { privateKey } = await generateRsa();
  const certificate = await create(
    options.subject,
    privateKey,
    { name: options.subject, key: privateKey },
    defaultValidity(10, options),
    [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  );
  return { privateKey, certificate, chain: [] };
}

export async function createIntermediateCa(issuer: KeyMaterial, options: CaOptions): Promise<KeyMaterial> {
  const { privateKey } = await generateRsa();
  const certificate = await create(
    options.subject,
    privateKey,
    { name: issuer.certificate.subject.split('\n').join(', '), key: issuer.privateKey },
    defaultValidity(10, options),
    [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  );
  return { privateKey, certificate, chain: [issuer.certificate, ...issuer.chain] };
}

/** An AP or SMP end-entity certificate with the Peppol G3 key usages (the G3 SMP certificates share the AP profile). */
export async function issueCertificate(issuer: KeyMaterial, options: IssueOptions): Promise<KeyMaterial> {
  const { privateKey } = await generateRsa();
  const certificate = await create(
    options.subject,
    privateKey,
    { name: issuer.certificate.subject.split('\n').join(', '), key: issuer.privateKey },
    defaultValidity(2, options),
    [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        options.keyUsages ??
          x509.KeyUsageFlags.digitalSignature |
            x509.KeyUsageFlags.keyEncipherment |
            x509.KeyUsageFlags.dataEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], true),
      ...(options.crlUrls?.length ? [new x509.CRLDistributionPointsExtension(options.crlUrls)] : []),
      ...(options.ocspUrl ? [new x509.AuthorityInfoAccessExtension({ ocsp: options.ocspUrl })] : []),
    ],
  );
  return { privateKey, certificate, chain: [issuer.certificate, ...issuer.chain] };
}

export interface CrlOptions {
  /** Revoked certificates; the reason defaults to keyCompromise, the date to an hour ago. */
  revoked?: Array<{ certificate: X509Certificate; revokedAt?: Date; reason?: X509.X509CrlReason }>;
  thisUpdate?: Date;
  nextUpdate?: Date;
  /** Sign with another key than the CA's (negative tests). */
  signingKey?: KeyObject;
}

/** A DER CRL issued by `ca` (valid a year from an hour ago unless told otherwise). */
export async function issueCrl(ca: KeyMaterial, options: CrlOptions = {}): Promise<Buffer> {
  const thisUpdate = options.thisUpdate ?? new Date(Date.now() - 3600_000);
  const crl = await x509.X509CrlGenerator.create(
    {
      issuer: ca.certificate.subject.split('\n').join(', '),
      thisUpdate,
      nextUpdate: options.nextUpdate ?? new Date(thisUpdate.getTime() + 365 * DAY),
      signingAlgorithm: SIGNING,
      signingKey: await signingKey(options.signingKey ?? ca.privateKey),
      entries: (options.revoked ?? []).map((r) => ({
        serialNumber: r.certificate.serialNumber.toLowerCase(),
        revocationDate: r.revokedAt ?? new Date(Date.now() - 3600_000),
        reason: r.reason ?? x509.X509CrlReason.keyCompromise,
      })),
      extensions: [await x509.AuthorityKeyIdentifierExtension.create(spki(ca.privateKey), false, crypto)],
    },
    crypto,
  );
  return Buffer.from(crl.rawData);
}

/** The distribution point URL of a CA's CRL under `base`. */
export function crlUrl(base: string, file: string): string {
  return `${base.replace(/\/+$/, '')}/${file}`;
}

export function apSubject(seatId: string): string {
  return `${ORG}, OU=PEPPOL TEST AP, CN=${seatId}`;
}

/** Generates the whole hierarchy in memory (about a second: eight RSA-2048 keys). */
export async function createTestPki(options: { crlBaseUrl?: string } = {}): Promise<TestPki> {
  const crlBaseUrl = options.crlBaseUrl ?? TEST_CRL_BASE_URL;
  const apCrl = [crlUrl(crlBaseUrl, TEST_CRL_FILES.apCa)];
  const rootCa = await createRootCa({ subject: `${ORG}, OU=FOR TEST ONLY, CN=Invoice Gateway Root TEST CA` });
  const [apCa, smpCa] = await Promise.all([
    createIntermediateCa(rootCa, { subject: `${ORG}, OU=FOR TEST ONLY, CN=Invoice Gateway ACCESS POINT TEST CA` }),
    createIntermediateCa(rootCa, {
      subject: `${ORG}, OU=FOR TEST ONLY, CN=Invoice Gateway SERVICE METADATA PUBLISHER TEST CA`,
    }),
  ]);
  const [apSender, apSenderNext, apReceiver, apRevoked, smp] = await Promise.all([
    issueCertificate(apCa, { subject: apSubject(TEST_SENDER_SEAT_ID), crlUrls: apCrl }),
    issueCertificate(apCa, {
      subject: apSubject(TEST_SENDER_SEAT_ID),
      notBefore: new Date(Date.now() - 3600_000),
      crlUrls: apCrl,
    }),
    issueCertificate(apCa, { subject: apSubject(TEST_RECEIVER_SEAT_ID), crlUrls: apCrl }),
    issueCertificate(apCa, { subject: apSubject(TEST_SENDER_SEAT_ID), crlUrls: apCrl }),
    issueCertificate(smpCa, {
      subject: `${ORG}, OU=PEPPOL TEST SMP, CN=PSM000001`,
      crlUrls: [crlUrl(crlBaseUrl, TEST_CRL_FILES.smpCa)],
    }),
  ]);
  const [apCaCrl, smpCaCrl] = await Promise.all([
    issueCrl(apCa, { revoked: [{ certificate: apRevoked.certificate }] }),
    issueCrl(smpCa),
  ]);
  return {
    rootCa,
    apCa,
    smpCa,
    apSender,
    apSenderNext,
    apReceiver,
    apRevoked,
    smp,
    crls: { apCa: apCaCrl, smpCa: smpCaCrl },
    crlBaseUrl,
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Files

type EntryName = (typeof TEST_PKI_ENTRIES)[number];

const FILE_NAMES: Record<EntryName, string> = {
  rootCa: 'root-ca',
  apCa: 'ap-ca',
  smpCa: 'smp-ca',
  apSender: 'ap-sender',
  apSenderNext: 'ap-sender-next',
  apReceiver: 'ap-receiver',
  apRevoked: 'ap-revoked',
  smp: 'smp',
};

/**
 * `version` stays 1 (the file layout, which older readers check); `revision` is bumped whenever the contents change,
 * so caches written by older code are regenerated while older code can still read newer caches.
 */
const MANIFEST_VERSION = 1;
const MANIFEST_REVISION = 2;

interface Manifest {
  version: number;
  revision?: number;
  crlBaseUrl: string;
  crls: { apCa: string; smpCa: string; nextUpdate: string };
  created: string;
  password: string;
  entries: Record<
    string,
    {
      subject: string;
      notAfter: string;
      sha256: string;
      files: { p12: string; certificate: string; privateKey: string };
    }
  >;
  truststores: { ap: string; smp: string; apCaPem: string; smpCaPem: string };
}

export function defaultTestPkiDir(): string {
  return path.join(os.homedir(), '.cache', 'invoice-gateway', 'pki');
}

/**
 * Writes every key as `<name>.p12` (password TEST_PKI_PASSWORD, alias `<name>`), `<name>.crt.pem` (leaf then chain)
 * and `<name>.key.pem` (unencrypted PKCS#8), plus Java-readable trust stores `ap-truststore.p12` / `smp-truststore.p12`
 * (root and intermediate as trusted entries) and `manifest.json`.
 */
export function writeTestPki(pki: TestPki, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const manifest: Manifest = {
    version: MANIFEST_VERSION,
    revision: MANIFEST_REVISION,
    crlBaseUrl: pki.crlBaseUrl,
    crls: {
      ...TEST_CRL_FILES,
      nextUpdate: new x509.X509Crl(new Uint8Array(pki.crls.apCa)).nextUpdate?.toISOString() ?? '',
    },
    created: new Date().toISOString(),
    password: TEST_PKI_PASSWORD,
    entries: {},
    truststores: {
      ap: 'ap-truststore.p12',
      smp: 'smp-truststore.p12',
      apCaPem: 'ap-ca.crt.pem',
      smpCaPem: 'smp-ca.crt.pem',
    },
  };
  for (const entry of TEST_PKI_ENTRIES) {
    const m = pki[entry];
    const name = FILE_NAMES[entry];
    const files = { p12: `${name}.p12`, certificate: `${name}.crt.pem`, privateKey: `${name}.key.pem` };
    writeFileSync(path.join(dir, files.p12), writePkcs12({ password: TEST_PKI_PASSWORD, key: { ...m, alias: name } }), {
      mode: 0o600,
    });
    writeFileSync(path.join(dir, files.certificate), [m.certificate, ...m.chain].map((c) => c.toString()).join(''));
    writeFileSync(path.join(dir, files.privateKey), m.privateKey.export({ format: 'pem', type: 'pkcs8' }), {
      mode: 0o600,
    });
    manifest.entries[entry] = {
      subject: m.certificate.subject.split('\n').join(', '),
      notAfter: new Date(m.certificate.validTo).toISOString(),
      sha256: m.certificate.fingerprint256,
      files,
    };
  }
  const trust = (ca: KeyMaterial, alias: string) => [
    { certificate: pki.rootCa.certificate, alias: 'root-ca' },
    { certificate: ca.certificate, alias },
  ];
  writeFileSync(
    path.join(dir, manifest.truststores.ap),
    writePkcs12({ password: TEST_PKI_PASSWORD, trusted: trust(pki.apCa, 'ap-ca') }),
  );
  writeFileSync(
    path.join(dir, manifest.truststores.smp),
    writePkcs12({ password: TEST_PKI_PASSWORD, trusted: trust(pki.smpCa, 'smp-ca') }),
  );
  writeFileSync(path.join(dir, TEST_CRL_FILES.apCa), pki.crls.apCa);
  writeFileSync(path.join(dir, TEST_CRL_FILES.smpCa), pki.crls.smpCa);
  writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Reads a test PKI written by writeTestPki (through the PKCS#12 reader, so the files are checked too). */
export function readTestPki(dir: string): TestPki {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  if (manifest.version !== MANIFEST_VERSION || manifest.revision !== MANIFEST_REVISION)
    throw new Error(`unsupported test PKI manifest version in ${dir}`);
  const keys: Partial<Record<EntryName, KeyMaterial>> = {};
  for (const entry of TEST_PKI_ENTRIES) {
    const e = manifest.entries[entry];
    if (!e) throw new Error(`test PKI in ${dir} lacks ${entry}`);
    keys[entry] = keyMaterialFromPkcs12(
      readFileSync(path.join(dir, e.files.p12)),
      manifest.password,
      FILE_NAMES[entry],
    );
  }
  return {
    ...(keys as Record<EntryName, KeyMaterial>),
    crls: {
      apCa: readFileSync(path.join(dir, manifest.crls.apCa)),
      smpCa: readFileSync(path.join(dir, manifest.crls.smpCa)),
    },
    crlBaseUrl: manifest.crlBaseUrl,
  };
}

function usable(dir: string, minRemainingMs: number): boolean {
  try {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    const horizon = Date.now() + minRemainingMs;
    if (
      manifest.version !== MANIFEST_VERSION ||
      manifest.revision !== MANIFEST_REVISION ||
      !(new Date(manifest.crls.nextUpdate).getTime() > horizon)
    )
      return false;
    return TEST_PKI_ENTRIES.every(
      (e) => manifest.entries[e] && new Date(manifest.entries[e].notAfter).getTime() > horizon,
    );
  } catch {
    return false;
  }
}

/**
 * The test PKI in `dir`, generated when missing or when a certificate expires within `minRemainingDays`. Generation
 * happens in a sibling directory that is renamed into place, so parallel test workers never see half-written files.
 */
export async function ensureTestPki(
  dir: string = defaultTestPkiDir(),
  options: { minRemainingDays?: number } = {},
): Promise<{ dir: string; pki: TestPki; created: boolean }> {
  const minRemaining = (options.minRemainingDays ?? 30) * DAY;
  if (usable(dir, minRemaining)) return { dir, pki: readTestPki(dir), created: false };
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeTestPki(await createTestPki(), tmp);
  if (existsSync(dir)) {
    if (usable(dir, minRemaining)) {
      // Another process finished first; keep its files.
      rmSync(tmp, { recursive: true, force: true });
      return { dir, pki: readTestPki(dir), created: false };
    }
    const old = `${dir}.old-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      renameSync(dir, old);
      rmSync(old, { recursive: true, force: true });
    } catch {
      // Someone else replaced it meanwhile; the rename below decides.
    }
  }
  try {
    renameSync(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    if (usable(dir, minRemaining)) return { dir, pki: readTestPki(dir), created: false };
    throw e;
  }
  return { dir, pki: readTestPki(dir), created: true };
}

/**
 * One more access point certificate of the test PKI in `dir` (e.g. the demo's reference tax authority, taxsim),
 * written beside the others as `<name>.p12` (alias `<name>`, password TEST_PKI_PASSWORD), `<name>.crt.pem` and
 * `<name>.key.pem`. Issued by the PKI's AP CA when missing, when issued by an earlier AP CA (the PKI was
 * regenerated) or when it expires within `minRemainingDays`; otherwise the files are kept. Not part of the manifest,
 * so readers of the PKI are not affected.
 */
export async function ensureExtraApCertificate(
  dir: string,
  name: string,
  seatId: string,
  options: { minRemainingDays?: number } = {},
): Promise<{ p12: string; created: boolean }> {
  if (!/^[a-z][a-z0-9-]{0,40}$/.test(name) || (FILE_NAMES as Record<string, string>)[name] !== undefined)
    throw new Error(`"${name}" is not a free certificate name of the test PKI`);
  const { pki } = await ensureTestPki(dir, options);
  const p12 = path.join(dir, `${name}.p12`);
  const horizon = Date.now() + (options.minRemainingDays ?? 30) * DAY;
  try {
    const m = keyMaterialFromPkcs12(readFileSync(p12), TEST_PKI_PASSWORD, name);
    if (
      m.certificate.checkIssued(pki.apCa.certificate) &&
      m.certificate.verify(pki.apCa.certificate.publicKey) &&
      new Date(m.certificate.validTo).getTime() > horizon &&
      m.certificate.subject.split('\n').includes(`CN=${seatId}`)
    )
      return { p12, created: false };
  } catch {
    // Missing or unreadable: issued below.
  }
  const m = await issueCertificate(pki.apCa, {
    subject: apSubject(seatId),
    crlUrls: [crlUrl(pki.crlBaseUrl, TEST_CRL_FILES.apCa)],
  });
  const write = (file: string, data: string | Buffer, mode?: number) => {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, data, mode === undefined ? undefined : { mode });
    renameSync(tmp, file);
  };
  write(path.join(dir, `${name}.key.pem`), m.privateKey.export({ format: 'pem', type: 'pkcs8' }), 0o600);
  write(path.join(dir, `${name}.crt.pem`), [m.certificate, ...m.chain].map((c) => c.toString()).join(''));
  write(p12, writePkcs12({ password: TEST_PKI_PASSWORD, key: { ...m, alias: name } }), 0o600);
  return { p12, created: true };
}
