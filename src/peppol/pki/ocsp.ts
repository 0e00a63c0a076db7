/**
 * OCSP (RFC 6960) for the revocation checker: the request for one certificate, and reading the responder's answer.
 *
 * An answer counts only when it is a successful basic response, signed by the issuing CA itself or by a responder
 * certificate that CA issued for OCSP signing (id-kp-OCSPSigning) and that is valid now, and when it holds a
 * SingleResponse for exactly the certificate asked about (issuer name hash, issuer key hash, serial) whose
 * thisUpdate / nextUpdate enclose now. ASN.1 through @peculiar/asn1-ocsp; signatures through node:crypto.
 */
import { createHash, verify as verifySignature, X509Certificate } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate } from '@peculiar/asn1-x509';
import {
  BasicOCSPResponse,
  CertID,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
} from '@peculiar/asn1-ocsp';

export class OcspProblem extends Error {}

const SHA1 = '1.3.14.3.2.26';
const HASH_OIDS: Record<string, string> = {
  [SHA1]: 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
/** Signature algorithms a responder may use, by OID → the digest node:crypto verifies with. */
const SIGNATURE_HASHES: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};

export type OcspAnswer =
  | { status: 'good'; thisUpdate: Date; nextUpdate: Date | undefined }
  | { status: 'revoked'; revokedAt: Date; reason: number | undefined; thisUpdate: Date; nextUpdate: Date | undefined }
  | { status: 'unknown'; thisUpdate: Date; nextUpdate: Date | undefined };

function issuerHashes(issuer: X509Certificate, hash: string): { name: Buffer; key: Buffer } {
  const cert = AsnConvert.parse(issuer.raw, Certificate);
  const name = Buffer.from(AsnConvert.serialize(cert.tbsCertificate.subject));
  const key = Buffer.from(cert.tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
  return { name: createHash(hash).update(name).digest(), key: createHash(hash).update(key).digest() };
}

/** The CertID of `cert` (issued by `issuer`) with SHA-1, as RFC 5019 responders expect. */
export function certIdOf(cert: X509Certificate, issuer: X509Certificate, hashOid: string = SHA1): CertID {
  const hash = HASH_OIDS[hashOid];
  if (!hash) throw new OcspProblem(`unsupported CertID hash algorithm ${hashOid}`);
  const h = issuerHashes(issuer, hash);
  const serial = AsnConvert.parse(cert.raw, Certificate).tbsCertificate.serialNumber;
  return new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: hashOid, parameters: null }),
    issuerNameHash: new OctetString(h.name),
    issuerKeyHash: new OctetString(h.key),
    serialNumber: serial,
  });
}

/** DER OCSPRequest for one certificate (no nonce: Peppol's CA responders answer from pre-signed responses). */
export function buildOcspRequest(cert: X509Certificate, issuer: X509Certificate): Buffer {
  const request = new OCSPRequest({
    tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert: certIdOf(cert, issuer) })] }),
  });
  return Buffer.from(AsnConvert.serialize(request));
}

const same = (a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean => {
  const x = Buffer.from(a instanceof ArrayBuffer ? a : a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));
  const y = Buffer.from(b instanceof ArrayBuffer ? b : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  return x.equals(y);
};

function authorizedResponder(candidate: X509Certificate, issuer: X509Certificate, now: Date): boolean {
  if (!candidate.checkIssued(issuer) || !candidate.verify(issuer.publicKey)) return false;
  if (now < new Date(candidate.validFrom) || now > new Date(candidate.validTo)) return false;
  const eku = (candidate.keyUsage as string[] | undefined) ?? [];
  return eku.includes(id_kp_OCSPSigning);
}

/** Reads and checks an OCSP response for `cert` issued by `issuer`. Throws OcspProblem when it cannot be used. */
export function readOcspResponse(
  der: Buffer,
  cert: X509Certificate,
  issuer: X509Certificate,
  now: Date,
  skewMs: number,
): OcspAnswer {
  let basic: BasicOCSPResponse;
  try {
    const response = AsnConvert.parse(der, OCSPResponse);
    if (response.responseStatus !== OCSPResponseStatus.successful)
      throw new OcspProblem(
        `the responder answered ${OCSPResponseStatus[response.responseStatus] ?? response.responseStatus}`,
      );
    if (!response.responseBytes || response.responseBytes.responseType !== id_pkix_ocsp_basic)
      throw new OcspProblem('the answer is not a basic OCSP response');
    basic = AsnConvert.parse(response.responseBytes.response, BasicOCSPResponse);
  } catch (e) {
    if (e instanceof OcspProblem) throw e;
    throw new OcspProblem(`not a readable OCSP response (${(e as Error).message})`);
  }

  const hash = SIGNATURE_HASHES[basic.signatureAlgorithm.algorithm];
  if (!hash) throw new OcspProblem(`unsupported OCSP signature algorithm ${basic.signatureAlgorithm.algorithm}`);
  const tbs = Buffer.from(basic.tbsResponseDataRaw ?? AsnConvert.serialize(basic.tbsResponseData));
  const signature = Buffer.from(basic.signature);
  const responders = [
    issuer,
    ...(basic.certs ?? [])
      .map((c) => new X509Certificate(Buffer.from(AsnConvert.serialize(c))))
      .filter((c) => authorizedResponder(c, issuer, now)),
  ];
  if (!responders.some((r) => verifySignature(hash, tbs, r.publicKey, signature))) {
    throw new OcspProblem(
      `the OCSP response is not signed by "${issuer.subject.split('\n').join(', ')}" or a responder it authorised`,
    );
  }

  const serial = AsnConvert.parse(cert.raw, Certificate).tbsCertificate.serialNumber;
  const single = basic.tbsResponseData.responses.find((r) => {
    if (!same(r.certID.serialNumber, serial)) return false;
    let expected: CertID;
    try {
      expected = certIdOf(cert, issuer, r.certID.hashAlgorithm.algorithm);
    } catch {
      return false;
    }
    return (
      same(r.certID.issuerNameHash, expected.issuerNameHash) && same(r.certID.issuerKeyHash, expected.issuerKeyHash)
    );
  });
  if (!single) throw new OcspProblem('the OCSP response does not answer for this certificate');
  if (single.thisUpdate.getTime() - skewMs > now.getTime())
    throw new OcspProblem(`the OCSP response is not valid before ${single.thisUpdate.toISOString()}`);
  if (single.nextUpdate && single.nextUpdate.getTime() + skewMs < now.getTime())
    throw new OcspProblem(`the OCSP response expired on ${single.nextUpdate.toISOString()} (nextUpdate)`);
  const times = { thisUpdate: single.thisUpdate, nextUpdate: single.nextUpdate };
  if (single.certStatus.revoked) {
    const reason = single.certStatus.revoked.revocationReason?.reason as number | undefined;
    return { status: 'revoked', revokedAt: single.certStatus.revoked.revocationTime, reason, ...times };
  }
  if (single.certStatus.good !== undefined) return { status: 'good', ...times };
  return { status: 'unknown', ...times };
}
