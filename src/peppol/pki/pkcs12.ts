/**
 * PKCS#12 (RFC 7292) reading and writing. Node's crypto has no PKCS#12 API, so the container is parsed here and the
 * cryptography is done with node:crypto:
 *
 * - integrity: the password MAC (HMAC-SHA1/-SHA256/-SHA384/-SHA512 with the PKCS#12 key derivation);
 * - privacy: PBES2 (PBKDF2 + AES-CBC or 3DES-CBC), which OpenSSL 3 and Java 17+ write by default, and the legacy
 *   pbeWithSHAAnd3-KeyTripleDES-CBC. RC2 (legacy Java 8 / OpenSSL 1.x certificate encryption) is only available when
 *   the OpenSSL build offers it; otherwise the error says how to re-export the file.
 *
 * Written files use PBES2 with PBKDF2-HMAC-SHA256 / AES-256-CBC and an HMAC-SHA256 MAC, readable by OpenSSL 3 and
 * Java (keytool, WSS4J Merlin). Trusted certificate entries carry Java's trust attribute so Java truststores see them.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  getCiphers,
  pbkdf2Sync,
  randomBytes,
  timingSafeEqual,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import {
  DerError,
  TAG,
  bmpString,
  childrenOf,
  ctx,
  expectTag,
  explicit,
  int,
  nul,
  octets,
  oid,
  parseDer,
  readBmpString,
  readOctets,
  readOid,
  readSmallInt,
  seq,
  sequence,
  setOf,
  tlv,
  type Tlv,
} from './der';

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  /** Java's "trusted key usage" attribute: marks a certificate entry as a trust anchor in a PKCS#12 truststore. */
  javaTrustedKeyUsage: '2.16.840.1.113894.746875.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  pbeSha1TripleDes: '1.2.840.113549.1.12.1.3',
  pbeSha1Rc2_128: '1.2.840.113549.1.12.1.5',
  pbeSha1Rc2_40: '1.2.840.113549.1.12.1.6',
  pbmac1: '1.2.840.113549.1.5.14',
} as const;

const HASH_BY_OID: Record<string, { name: string; u: number; v: number }> = {
  '1.3.14.3.2.26': { name: 'sha1', u: 20, v: 64 },
  '2.16.840.1.101.3.4.2.1': { name: 'sha256', u: 32, v: 64 },
  '2.16.840.1.101.3.4.2.2': { name: 'sha384', u: 48, v: 128 },
  '2.16.840.1.101.3.4.2.3': { name: 'sha512', u: 64, v: 128 },
};
const HMAC_PRF_BY_OID: Record<string, string> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};
const CIPHER_BY_OID: Record<string, { name: string; keyLength: number; ivLength: number }> = {
  '2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyLength: 16, ivLength: 16 },
  '2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyLength: 24, ivLength: 16 },
  '2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyLength: 32, ivLength: 16 },
  '1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyLength: 24, ivLength: 8 },
};
/** Hard caps so a hostile file cannot make us spin (real files use 1–600 000). */
const MAX_ITERATIONS = 10_000_000;

export class Pkcs12Error extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'Pkcs12Error';
  }
}

export interface Pkcs12Key {
  key: KeyObject;
  localKeyId?: Buffer;
  friendlyName?: string;
}
export interface Pkcs12Certificate {
  certificate: X509Certificate;
  localKeyId?: Buffer;
  friendlyName?: string;
  /** True when the entry carries Java's trust-anchor attribute. */
  trusted: boolean;
}
export interface Pkcs12Contents {
  keys: Pkcs12Key[];
  certificates: Pkcs12Certificate[];
}

// ---------------------------------------------------------------------------------------------------------------------
// Key derivation

/** Password as PKCS#12 BMPString: UTF-16BE plus a terminating NUL character. */
function bmpPassword(password: string): Buffer {
  const b = Buffer.from(`${password}\u0000`, 'utf16le');
  b.swap16();
  return b;
}

/** RFC 7292 appendix B.2. `id` 1 = key, 2 = IV, 3 = MAC key. */
export function pkcs12Kdf(
  hash: { name: string; u: number; v: number },
  password: string,
  salt: Buffer,
  id: 1 | 2 | 3,
  iterations: number,
  n: number,
): Buffer {
  const { name, u, v } = hash;
  const fill = (src: Buffer): Buffer => {
    if (src.length === 0) return Buffer.alloc(0);
    const len = v * Math.ceil(src.length / v);
    const out = Buffer.alloc(len);
    for (let i = 0; i < len; i++) out[i] = src[i % src.length] as number;
    return out;
  };
  const D = Buffer.alloc(v, id);
  const I = Buffer.concat([fill(salt), fill(bmpPassword(password))]);
  const out: Buffer[] = [];
  for (let produced = 0; produced < n; produced += u) {
    let A = createHash(name).update(D).update(I).digest();
    for (let r = 1; r < iterations; r++) A = createHash(name).update(A).digest();
    out.push(A);
    if (produced + u >= n) break;
    const B = fill(A);
    // I_j = (I_j + B + 1) mod 2^(8v) for every v-byte block of I
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = (I[j + k] as number) + (B[k] as number) + carry;
        I[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(out).subarray(0, n);
}

// ---------------------------------------------------------------------------------------------------------------------
// Decryption by algorithm identifier

function iterationsOf(tlvValue: Tlv | undefined, what: string): number {
  const n = tlvValue === undefined ? 1 : readSmallInt(tlvValue, what);
  if (n < 1 || n > MAX_ITERATIONS) throw new Pkcs12Error(`${what} ${n} is out of range`);
  return n;
}

function decipher(name: string, key: Buffer, iv: Buffer, data: Buffer, what: string): Buffer {
  try {
    const d = createDecipheriv(name, key, iv);
    return Buffer.concat([d.update(data), d.final()]);
  } catch (e) {
    throw new Pkcs12Error(`${what} could not be decrypted: wrong password or damaged file`, { cause: e });
  }
}

function decrypt(algorithm: Tlv, data: Buffer, password: string, what: string): Buffer {
  const [algOid, params] = sequence(algorithm, `${what} algorithm`);
  const alg = readOid(algOid, `${what} algorithm`);
  if (alg === OID.pbes2) {
    const [kdf, scheme] = sequence(params, 'PBES2 parameters');
    const [kdfOid, kdfParams] = sequence(kdf, 'PBES2 key derivation');
    if (readOid(kdfOid, 'key derivation') !== OID.pbkdf2)
      throw new Pkcs12Error(`${what}: only PBKDF2 is supported as PBES2 key derivation`);
    const kp = sequence(kdfParams, 'PBKDF2 parameters');
    const salt = readOctets(kp[0], 'PBKDF2 salt');
    const iterations = iterationsOf(kp[1], 'PBKDF2 iteration count');
    let prf = 'sha1';
    let keyLength: number | undefined;
    for (const extra of kp.slice(2)) {
      if (extra.tag === TAG.INTEGER) keyLength = readSmallInt(extra, 'PBKDF2 key length');
      else {
        const prfOid = readOid(sequence(extra, 'PBKDF2 PRF')[0], 'PBKDF2 PRF');
        const p = HMAC_PRF_BY_OID[prfOid];
        if (!p) throw new Pkcs12Error(`${what}: unsupported PBKDF2 PRF ${prfOid}`);
        prf = p;
      }
    }
    const [encOid, ivTlv] = sequence(scheme, 'PBES2 encryption scheme');
    const encName = readOid(encOid, 'PBES2 encryption scheme');
    const cipher = CIPHER_BY_OID[encName];
    if (!cipher) throw new Pkcs12Error(`${what}: unsupported PBES2 cipher ${encName}`);
    const iv = readOctets(ivTlv, 'PBES2 IV');
    if (iv.length !== cipher.ivLength) throw new Pkcs12Error(`${what}: IV of ${iv.length} bytes for ${cipher.name}`);
    // PBES2 inside PKCS#12 takes the password as UTF-8 bytes (OpenSSL and Java agree), not as BMPString.
    const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, keyLength ?? cipher.keyLength, prf);
    return decipher(cipher.name, key, iv, data, what);
  }
  if (alg === OID.pbeSha1TripleDes || alg === OID.pbeSha1Rc2_40 || alg === OID.pbeSha1Rc2_128) {
    const p = sequence(params, 'PKCS#12 PBE parameters');
    const salt = readOctets(p[0], 'PBE salt');
    const iterations = iterationsOf(p[1], 'PBE iteration count');
    const sha1 = HASH_BY_OID['1.3.14.3.2.26'] as { name: string; u: number; v: number };
    if (alg === OID.pbeSha1TripleDes) {
      return decipher(
        'des-ede3-cbc',
        pkcs12Kdf(sha1, password, salt, 1, iterations, 24),
        pkcs12Kdf(sha1, password, salt, 2, iterations, 8),
        data,
        what,
      );
    }
    const rc2 = alg === OID.pbeSha1Rc2_40 ? { name: 'rc2-40-cbc', len: 5 } : { name: 'rc2-cbc', len: 16 };
    if (!getCiphers().includes(rc2.name)) {
      throw new Pkcs12Error(
        `${what} uses ${rc2.name.toUpperCase()}, which this Node/OpenSSL build does not provide; re-export the file ` +
          `with AES ` +
          '(e.g. openssl pkcs12 -export -certpbe AES-256-CBC -keypbe AES-256-CBC -macalg sha256)',
      );
    }
    return decipher(
      rc2.name,
      pkcs12Kdf(sha1, password, salt, 1, iterations, rc2.len),
      pkcs12Kdf(sha1, password, salt, 2, iterations, 8),
      data,
      what,
    );
  }
  throw new Pkcs12Error(`${what}: unsupported encryption algorithm ${alg}`);
}

// ---------------------------------------------------------------------------------------------------------------------
// Reading

function contentInfo(t: Tlv, what: string): { type: string; content: Tlv | undefined } {
  const [typeOid, content] = sequence(t, what);
  return {
    type: readOid(typeOid, `${what} type`),
    content: content === undefined ? undefined : explicit(content, 0, `${what} content`),
  };
}

function verifyMac(macData: Tlv, authSafe: Buffer, password: string): void {
  const [digestInfo, saltTlv, iterTlv] = sequence(macData, 'MacData');
  const [digestAlg, digest] = sequence(digestInfo, 'MAC DigestInfo');
  const hashOid = readOid(sequence(digestAlg, 'MAC digest algorithm')[0], 'MAC digest algorithm');
  if (hashOid === OID.pbmac1)
    throw new Pkcs12Error('PBMAC1-protected PKCS#12 files are not supported; re-export with -macalg sha256');
  const hash = HASH_BY_OID[hashOid];
  if (!hash) throw new Pkcs12Error(`unsupported PKCS#12 MAC digest ${hashOid}`);
  const salt = readOctets(saltTlv, 'MAC salt');
  const iterations = iterationsOf(iterTlv, 'MAC iteration count');
  const expected = readOctets(digest, 'MAC value');
  const key = pkcs12Kdf(hash, password, salt, 3, iterations, hash.u);
  const actual = createHmac(hash.name, key).update(authSafe).digest();
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new Pkcs12Error('PKCS#12 integrity check failed: wrong password or damaged file');
  }
}

function readAttributes(set: Tlv | undefined): { localKeyId?: Buffer; friendlyName?: string; trusted: boolean } {
  const out: { localKeyId?: Buffer; friendlyName?: string; trusted: boolean } = { trusted: false };
  if (!set) return out;
  for (const attr of childrenOf(expectTag(set, TAG.SET, 'bag attributes'))) {
    const [idTlv, values] = sequence(attr, 'bag attribute');
    const id = readOid(idTlv, 'bag attribute id');
    const first = childrenOf(expectTag(values, TAG.SET, 'bag attribute values'))[0];
    if (id === OID.localKeyId) out.localKeyId = readOctets(first, 'localKeyId');
    else if (id === OID.friendlyName) out.friendlyName = readBmpString(first, 'friendlyName');
    else if (id === OID.javaTrustedKeyUsage) out.trusted = true;
  }
  return out;
}

function readSafeContents(der: Buffer, password: string, into: Pkcs12Contents): void {
  for (const bag of childrenOf(expectTag(parseDer(der), TAG.SEQUENCE, 'SafeContents'))) {
    const [idTlv, valueWrapper, attrs] = sequence(bag, 'SafeBag');
    const bagId = readOid(idTlv, 'SafeBag id');
    const value = explicit(valueWrapper, 0, 'SafeBag value');
    const a = readAttributes(attrs);
    const meta = {
      ...(a.localKeyId ? { localKeyId: a.localKeyId } : {}),
      ...(a.friendlyName !== undefined ? { friendlyName: a.friendlyName } : {}),
    };
    if (bagId === OID.shroudedKeyBag) {
      const [alg, enc] = sequence(value, 'EncryptedPrivateKeyInfo');
      const pkcs8 = decrypt(alg as Tlv, readOctets(enc, 'encrypted key'), password, 'the private key');
      into.keys.push({ key: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }), ...meta });
    } else if (bagId === OID.keyBag) {
      into.keys.push({ key: createPrivateKey({ key: Buffer.from(value.raw), format: 'der', type: 'pkcs8' }), ...meta });
    } else if (bagId === OID.certBag) {
      const [certType, certValue] = sequence(value, 'CertBag');
      if (readOid(certType, 'CertBag type') !== OID.x509Certificate) continue;
      const der = readOctets(explicit(certValue, 0, 'CertBag value'), 'certificate');
      into.certificates.push({ certificate: new X509Certificate(der), ...meta, trusted: a.trusted });
    }
    // CRL bags, secret bags and nested safe contents are not needed for AP keys and trust stores.
  }
}

/** Reads keys and certificates; throws Pkcs12Error for a wrong password, a damaged file or unsupported algorithms. */
export function readPkcs12(data: Buffer, password: string): Pkcs12Contents {
  try {
    const [version, authSafeInfo, macData] = sequence(parseDer(data), 'PFX');
    if (readSmallInt(version, 'PFX version') !== 3) throw new Pkcs12Error('unsupported PKCS#12 version');
    const auth = contentInfo(authSafeInfo as Tlv, 'authSafe');
    if (auth.type !== OID.data)
      throw new Pkcs12Error('only password-integrity PKCS#12 files are supported (no public-key integrity)');
    const authSafe = readOctets(auth.content, 'authSafe data');
    if (!macData) throw new Pkcs12Error('the PKCS#12 file has no MAC; refusing unauthenticated key material');
    verifyMac(macData, authSafe, password);

    const out: Pkcs12Contents = { keys: [], certificates: [] };
    for (const ci of childrenOf(expectTag(parseDer(authSafe), TAG.SEQUENCE, 'AuthenticatedSafe'))) {
      const { type, content } = contentInfo(ci, 'AuthenticatedSafe entry');
      if (type === OID.data) readSafeContents(readOctets(content, 'SafeContents data'), password, out);
      else if (type === OID.encryptedData) {
        const [, eci] = sequence(content, 'EncryptedData');
        const [, alg, encrypted] = sequence(eci, 'EncryptedContentInfo');
        const plain = decrypt(
          alg as Tlv,
          readOctets(encrypted, 'encrypted content', 0x80),
          password,
          'the certificate safe',
        );
        readSafeContents(plain, password, out);
      } else
        throw new Pkcs12Error(
          `unsupported AuthenticatedSafe content type ${type} (public-key privacy is not supported)`,
        );
    }
    return out;
  } catch (e) {
    if (e instanceof Pkcs12Error) throw e;
    if (e instanceof DerError) throw new Pkcs12Error(`not a valid PKCS#12 file: ${e.message}`, { cause: e });
    throw new Pkcs12Error(`the PKCS#12 file could not be read: ${(e as Error).message}`, { cause: e });
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Writing

const WRITE_ITERATIONS = 2048;

/** PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC): the AlgorithmIdentifier and the ciphertext. */
function pbes2Encrypt(plain: Buffer, password: string, iterations: number): { algorithm: Buffer; ciphertext: Buffer } {
  const salt = randomBytes(16);
  const iv = randomBytes(16);
  const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
  const c = createCipheriv('aes-256-cbc', key, iv);
  const encrypted = Buffer.concat([c.update(plain), c.final()]);
  const algorithm = seq(
    oid(OID.pbes2),
    seq(
      seq(oid(OID.pbkdf2), seq(octets(salt), int(iterations), seq(oid('1.2.840.113549.2.9'), nul()))),
      seq(oid('2.16.840.1.101.3.4.1.42'), octets(iv)),
    ),
  );
  return { algorithm, ciphertext: encrypted };
}

function attributes(meta: { localKeyId?: Buffer; friendlyName?: string; trusted?: boolean }): Buffer[] {
  const attrs: Buffer[] = [];
  if (meta.friendlyName !== undefined) attrs.push(seq(oid(OID.friendlyName), setOf(bmpString(meta.friendlyName))));
  if (meta.localKeyId) attrs.push(seq(oid(OID.localKeyId), setOf(octets(meta.localKeyId))));
  if (meta.trusted) attrs.push(seq(oid(OID.javaTrustedKeyUsage), setOf(oid(OID.anyExtendedKeyUsage))));
  return attrs.length ? [setOf(...attrs)] : [];
}

function certBag(
  cert: X509Certificate,
  meta: { localKeyId?: Buffer; friendlyName?: string; trusted?: boolean },
): Buffer {
  return seq(oid(OID.certBag), ctx(0, seq(oid(OID.x509Certificate), ctx(0, octets(cert.raw)))), ...attributes(meta));
}

export interface Pkcs12WriteInput {
  password: string;
  /** A private key with its certificate and (optionally) the chain above it: a key store entry. */
  key?: { privateKey: KeyObject; certificate: X509Certificate; chain?: X509Certificate[]; alias: string };
  /** Trust anchors (Java sees them as trusted certificate entries). */
  trusted?: Array<{ certificate: X509Certificate; alias: string }>;
  iterations?: number;
}

export function writePkcs12(input: Pkcs12WriteInput): Buffer {
  const iterations = input.iterations ?? WRITE_ITERATIONS;
  const authSafe: Buffer[] = [];
  const certs: Buffer[] = [];
  if (input.key) {
    const { privateKey, certificate, chain = [], alias } = input.key;
    const localKeyId = createHash('sha1').update(certificate.raw).digest();
    const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
    const shrouded = pbes2Encrypt(pkcs8, input.password, iterations);
    const keyBag = seq(
      oid(OID.shroudedKeyBag),
      ctx(0, seq(shrouded.algorithm, octets(shrouded.ciphertext))),
      ...attributes({ localKeyId, friendlyName: alias }),
    );
    authSafe.push(seq(oid(OID.data), ctx(0, octets(seq(keyBag)))));
    certs.push(certBag(certificate, { localKeyId, friendlyName: alias }));
    for (const c of chain) certs.push(certBag(c, {}));
  }
  for (const t of input.trusted ?? []) certs.push(certBag(t.certificate, { friendlyName: t.alias, trusted: true }));
  if (certs.length) {
    const { algorithm, ciphertext } = pbes2Encrypt(seq(...certs), input.password, iterations);
    // encryptedContent is [0] IMPLICIT OCTET STRING
    authSafe.push(
      seq(oid(OID.encryptedData), ctx(0, seq(int(0), seq(oid(OID.data), algorithm, tlv(0x80, ciphertext))))),
    );
  }
  const authSafeDer = seq(...authSafe);
  const macSalt = randomBytes(16);
  const sha256 = HASH_BY_OID['2.16.840.1.101.3.4.2.1'] as { name: string; u: number; v: number };
  const macKey = pkcs12Kdf(sha256, input.password, macSalt, 3, iterations, 32);
  const mac = createHmac('sha256', macKey).update(authSafeDer).digest();
  return seq(
    int(3),
    seq(oid(OID.data), ctx(0, octets(authSafeDer))),
    seq(seq(seq(oid('2.16.840.1.101.3.4.2.1'), nul()), octets(mac)), octets(macSalt), int(iterations)),
  );
}
