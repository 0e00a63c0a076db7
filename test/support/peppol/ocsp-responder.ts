/**
 * The answers of a test OCSP responder: built with the ASN.1 module the checker reads them with, signed with
 * node:crypto by whichever key a test chooses.
 */
import { sign } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate, CRLReason } from '@peculiar/asn1-x509';
import {
  BasicOCSPResponse,
  CertStatus,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
  id_pkix_ocsp_basic,
} from '@peculiar/asn1-ocsp';
import type { KeyMaterial } from '../../../src/peppol/pki/key-material';

export interface OcspBehaviour {
  /** Signs the answers (the CA, or another key for negative tests). */
  signer: KeyMaterial;
  /** Serial numbers (hex, any case) that are revoked, with the date. */
  revoked?: Map<string, Date>;
  /** Serial numbers the responder does not know. */
  unknown?: Set<string>;
  thisUpdate?: Date;
  nextUpdate?: Date;
  /** Answer with this status instead of a successful response. */
  status?: OCSPResponseStatus;
}

const hex = (b: ArrayBuffer): string =>
  Buffer.from(b)
    .toString('hex')
    .replace(/^(00)+/, '')
    .toLowerCase();

/** A signed OCSP response for every CertID of `requestDer`, as a CA's responder would answer. */
export function answerOcsp(requestDer: Buffer, b: OcspBehaviour): Buffer {
  if (b.status !== undefined) return Buffer.from(AsnConvert.serialize(new OCSPResponse({ responseStatus: b.status })));
  const request = AsnConvert.parse(requestDer, OCSPRequest);
  const thisUpdate = b.thisUpdate ?? new Date(Date.now() - 60_000);
  const responses = request.tbsRequest.requestList.map((r) => {
    const serial = hex(r.reqCert.serialNumber);
    const revokedAt = [...(b.revoked ?? new Map<string, Date>())].find(
      ([s]) => s.toLowerCase().replace(/^(00)+/, '') === serial,
    )?.[1];
    const certStatus = revokedAt
      ? new CertStatus({ revoked: new RevokedInfo({ revocationTime: revokedAt, revocationReason: new CRLReason(1) }) })
      : b.unknown?.has(serial)
        ? new CertStatus({ unknown: null })
        : new CertStatus({ good: null });
    return new SingleResponse({
      certID: r.reqCert,
      certStatus,
      thisUpdate,
      ...(b.nextUpdate !== undefined
        ? { nextUpdate: b.nextUpdate }
        : { nextUpdate: new Date(thisUpdate.getTime() + 86_400_000) }),
    });
  });
  const signerCert = AsnConvert.parse(b.signer.certificate.raw, Certificate);
  const data = new ResponseData({
    responderID: new ResponderID({ byName: signerCert.tbsCertificate.subject }),
    producedAt: new Date(),
    responses,
  });
  const tbs = Buffer.from(AsnConvert.serialize(data));
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: '1.2.840.113549.1.1.11', parameters: null }),
    signature: new Uint8Array(sign('sha256', tbs, b.signer.privateKey)).buffer,
    certs: [signerCert],
  });
  return Buffer.from(
    AsnConvert.serialize(
      new OCSPResponse({
        responseStatus: OCSPResponseStatus.successful,
        responseBytes: new ResponseBytes({
          responseType: id_pkix_ocsp_basic,
          response: new OctetString(AsnConvert.serialize(basic)),
        }),
      }),
    ),
  );
}
