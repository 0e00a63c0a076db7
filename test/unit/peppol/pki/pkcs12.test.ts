import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DerError,
  childrenOf,
  ctx,
  octets,
  oid,
  parseDer,
  readOctets,
  readOid,
  seq,
} from '../../../../src/peppol/pki/der';
import { Pkcs12Error, readPkcs12, writePkcs12 } from '../../../../src/peppol/pki/pkcs12';
import type { TestPki } from '../../../support/peppol/test-pki';
import { testPki } from '../../../support/peppol/pki-fixture';

function has(tool: string, args: string[]): boolean {
  return spawnSync(tool, args, { stdio: 'ignore' }).status === 0;
}
const haveOpenssl = has('openssl', ['version']);
const haveKeytool = has('keytool', ['-help']);

let pki: TestPki;
let tmp: string;
beforeAll(async () => {
  pki = await testPki();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'p12-'));
}, 60_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('DER reader and writer', () => {
  it('round-trips OIDs with large arcs', () => {
    for (const o of [
      '1.2.840.113549.1.12.10.1.2',
      '2.16.840.1.113894.746875.1.1',
      '2.5.29.37.0',
      '1.3.6.1.4.1.311.60.2.1.3',
    ]) {
      expect(readOid(parseDer(oid(o)), 'oid')).toBe(o);
    }
    expect(oid('1.2.840.113549').toString('hex')).toBe('06062a864886f70d');
  });

  it('reads BER indefinite lengths and constructed OCTET STRINGs (as some Windows exports use)', () => {
    // SEQUENCE (indefinite) { OCTET STRING constructed (indefinite) { "ab", "cd" } }
    const ber = Buffer.from('3080' + '2480' + '04026162' + '04026364' + '0000' + '0000', 'hex');
    const [os1] = childrenOf(parseDer(ber));
    expect(readOctets(os1, 'x').toString()).toBe('abcd');
  });

  it('refuses truncated and overlong input', () => {
    expect(() => parseDer(Buffer.from('3005020101', 'hex'))).toThrow(DerError);
    expect(() => parseDer(Buffer.from('020101ff', 'hex'))).toThrow(/unexpected bytes/);
    expect(() => parseDer(Buffer.from('30800201', 'hex'))).toThrow(DerError);
  });
});

describe('PKCS#12', () => {
  it('round-trips a key entry with its chain', () => {
    const p12 = writePkcs12({ password: 'pa55 wörd', key: { ...pki.apSender, alias: 'sender' } });
    const read = readPkcs12(p12, 'pa55 wörd');
    expect(read.keys).toHaveLength(1);
    expect(read.keys[0]?.friendlyName).toBe('sender');
    expect(read.certificates.map((c) => c.certificate.fingerprint256)).toEqual(
      [pki.apSender.certificate, ...pki.apSender.chain].map((c) => c.fingerprint256),
    );
    expect(read.certificates[0]?.localKeyId?.equals(read.keys[0]?.localKeyId as Buffer)).toBe(true);
    const data = Buffer.from('proof of possession');
    const sig = sign('sha256', data, read.keys[0]?.key as KeyObject);
    expect(verify('sha256', data, pki.apSender.certificate.publicKey, sig)).toBe(true);
  });

  it('marks trust store entries the way Java expects', () => {
    const p12 = writePkcs12({ password: 'x', trusted: [{ certificate: pki.apCa.certificate, alias: 'ap-ca' }] });
    const read = readPkcs12(p12, 'x');
    expect(read.keys).toEqual([]);
    expect(read.certificates).toEqual([expect.objectContaining({ friendlyName: 'ap-ca', trusted: true })]);
  });

  it('refuses a wrong password, a modified file and garbage', () => {
    const p12 = writePkcs12({ password: 'right', key: { ...pki.apReceiver, alias: 'r' } });
    expect(() => readPkcs12(p12, 'wrong')).toThrow(/integrity check failed: wrong password or damaged file/);
    const tampered = Buffer.from(p12);
    tampered[200] = (tampered[200] as number) ^ 0x01;
    expect(() => readPkcs12(tampered, 'right')).toThrow(Pkcs12Error);
    expect(() => readPkcs12(Buffer.from('not a pkcs12 file'), 'right')).toThrow(/not a valid PKCS#12 file/);
  });

  it('refuses a file without MAC', () => {
    const noMac = seq(Buffer.from('020103', 'hex'), seq(oid('1.2.840.113549.1.7.1'), ctx(0, octets(seq()))));
    expect(() => readPkcs12(noMac, '')).toThrow(/no MAC/);
  });

  (haveOpenssl ? describe : describe.skip)('interoperability with OpenSSL', () => {
    const pem = (name: string, text: string): string => {
      const f = path.join(tmp, name);
      writeFileSync(f, text);
      return f;
    };

    it('OpenSSL reads the files we write', () => {
      const file = path.join(tmp, 'ours.p12');
      writeFileSync(file, writePkcs12({ password: 'secret', key: { ...pki.apSender, alias: 'sender' } }));
      const out = execFileSync('openssl', ['pkcs12', '-in', file, '-passin', 'pass:secret', '-nodes'], {
        encoding: 'utf8',
      });
      expect(out).toContain('friendlyName: sender');
      expect(out).toContain('-----BEGIN PRIVATE KEY-----');
      expect(out).toContain(pki.apSender.certificate.toString().trim().split('\n')[1]);
    });

    it.each([
      ['default (PBES2/AES-256, HMAC-SHA256)', [] as string[]],
      ['3DES with a SHA-1 MAC', ['-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-3DES', '-macalg', 'sha1']],
      ['AES-128 with a SHA-512 MAC', ['-keypbe', 'AES-128-CBC', '-certpbe', 'AES-128-CBC', '-macalg', 'sha512']],
      ['unencrypted certificates', ['-certpbe', 'NONE']],
    ])('we read what OpenSSL writes: %s', (_label, extra) => {
      const cert = pem('leaf.pem', pki.apReceiver.certificate.toString());
      const key = pem('leaf.key', pki.apReceiver.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
      const chain = pem('chain.pem', pki.apCa.certificate.toString());
      const out = path.join(tmp, 'openssl.p12');
      execFileSync(
        'openssl',
        [
          'pkcs12',
          '-export',
          '-in',
          cert,
          '-inkey',
          key,
          '-certfile',
          chain,
          '-name',
          'receiver',
          '-passout',
          'pass:s3cret',
          '-out',
          out,
          ...extra,
        ],
        {
          stdio: 'ignore',
        },
      );
      const read = readPkcs12(readFileSync(out), 's3cret');
      expect(read.keys.map((k) => k.friendlyName)).toEqual(['receiver']);
      const fps = read.certificates.map((c) => c.certificate.fingerprint256).sort();
      expect(fps).toEqual([pki.apReceiver.certificate.fingerprint256, pki.apCa.certificate.fingerprint256].sort());
      expect(() => readPkcs12(readFileSync(out), 'other')).toThrow(Pkcs12Error);
    });
  });

  (haveKeytool ? describe : describe.skip)('interoperability with Java keytool', () => {
    it('keytool lists our key store and trust store, and we read what keytool writes', () => {
      const ours = path.join(tmp, 'java-in.p12');
      writeFileSync(
        ours,
        writePkcs12({
          password: 'changeit',
          key: { ...pki.apSender, alias: 'sender' },
          trusted: [{ certificate: pki.rootCa.certificate, alias: 'root' }],
        }),
      );
      const list = execFileSync(
        'keytool',
        ['-list', '-storetype', 'PKCS12', '-keystore', ours, '-storepass', 'changeit'],
        { encoding: 'utf8' },
      );
      expect(list).toMatch(/sender, .*PrivateKeyEntry/);
      expect(list).toMatch(/root, .*trustedCertEntry/);

      const javas = path.join(tmp, 'java-out.p12');
      rmSync(javas, { force: true });
      execFileSync(
        'keytool',
        [
          '-importkeystore',
          '-srckeystore',
          ours,
          '-srcstoretype',
          'PKCS12',
          '-srcstorepass',
          'changeit',
          '-destkeystore',
          javas,
          '-deststoretype',
          'PKCS12',
          '-deststorepass',
          'javapass',
          '-noprompt',
        ],
        { stdio: 'ignore' },
      );
      const read = readPkcs12(readFileSync(javas), 'javapass');
      expect(read.keys.map((k) => k.friendlyName)).toEqual(['sender']);
      expect(read.certificates.find((c) => c.friendlyName === 'root')?.trusted).toBe(true);
    }, 60_000);
  });

  it('reads a key store holding an EC key (other key types pass through)', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    // Pair the EC key with an unrelated certificate: the container does not care, key-material checks the match.
    const p12 = writePkcs12({ password: 'x', key: { privateKey, certificate: pki.smp.certificate, alias: 'ec' } });
    expect(readPkcs12(p12, 'x').keys[0]?.key.asymmetricKeyType).toBe('ec');
  });
});
