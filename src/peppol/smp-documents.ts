/**
 * Peppol SMP 1.x (busdox) response documents: building ServiceGroup and ServiceMetadata / Redirect XML, and signing
 * the latter as SignedServiceMetadata (enveloped XMLDSig over the whole document: RSA-SHA256, SHA-256 digest,
 * exclusive C14N, KeyInfo with X509SubjectName and X509Certificate as Peppol SMPs publish them; peppol-commons checks
 * X509SubjectName when following a redirect).
 */
import type { X509Certificate } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { escapeXml as esc } from '../formats/xml/helpers';
import { useCorrectC14n } from './c14n';
import { encodeIdForUrl, type DocumentTypeId, type ParticipantId, type ProcessId } from './identifiers';
import type { KeyMaterial } from './pki/key-material';

export const SMP_NS = 'http://busdox.org/serviceMetadata/publishing/1.0/';
export const SMP_IDS_NS = 'http://busdox.org/transport/identifiers/1.0/';
export const WSA_NS = 'http://www.w3.org/2005/08/addressing';
export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';

const id = (
  tag: 'ParticipantIdentifier' | 'DocumentIdentifier' | 'ProcessIdentifier',
  v: { scheme: string; value: string },
): string => `<ids:${tag} scheme="${esc(v.scheme)}">${esc(v.value)}</ids:${tag}>`;

/** The service group: the participant and one reference per document type it can receive. */
export function buildServiceGroupXml(
  smpBaseUrl: string,
  participant: ParticipantId,
  documentTypes: readonly DocumentTypeId[],
): string {
  const base = smpBaseUrl.replace(/\/+$/, '');
  const refs = documentTypes
    .map(
      (d) =>
        `<ServiceMetadataReference ` +
        `href="${esc(`${base}/${encodeIdForUrl(participant)}/services/${encodeIdForUrl(d)}`)}"/>`,
    )
    .join('');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<ServiceGroup xmlns="${SMP_NS}" xmlns:ids="${SMP_IDS_NS}">${id('ParticipantIdentifier', participant)}` +
    `<ServiceMetadataReferenceCollection>${refs}</ServiceMetadataReferenceCollection></ServiceGroup>`
  );
}

export interface SmpEndpointInput {
  transportProfile: string;
  url: string;
  certificate: X509Certificate;
  requireBusinessLevelSignature?: boolean;
  minimumAuthenticationLevel?: string;
  serviceActivationDate?: Date;
  serviceExpirationDate?: Date;
  serviceDescription?: string;
  technicalContactUrl?: string;
  technicalInformationUrl?: string;
}

export interface SmpProcessInput {
  process: ProcessId;
  endpoints: readonly SmpEndpointInput[];
}

/** Unsigned ServiceMetadata for one participant and document type. */
export function buildServiceMetadataXml(
  participant: ParticipantId,
  documentType: DocumentTypeId,
  processes: readonly SmpProcessInput[],
): string {
  const endpoint = (e: SmpEndpointInput): string =>
    `<Endpoint transportProfile="${esc(e.transportProfile)}">` +
    `<wsa:EndpointReference><wsa:Address>${esc(e.url)}</wsa:Address></wsa:EndpointReference>` +
    `<RequireBusinessLevelSignature>${e.requireBusinessLevelSignature ? 'true' : 'false'}` +
    `</RequireBusinessLevelSignature>` +
    (e.minimumAuthenticationLevel !== undefined
      ? `<MinimumAuthenticationLevel>${esc(e.minimumAuthenticationLevel)}</MinimumAuthenticationLevel>`
      : '') +
    (e.serviceActivationDate
      ? `<ServiceActivationDate>${e.serviceActivationDate.toISOString()}</ServiceActivationDate>`
      : '') +
    (e.serviceExpirationDate
      ? `<ServiceExpirationDate>${e.serviceExpirationDate.toISOString()}</ServiceExpirationDate>`
      : '') +
    `<Certificate>${e.certificate.raw.toString('base64')}</Certificate>` +
    `<ServiceDescription>${esc(e.serviceDescription ?? '')}</ServiceDescription>` +
    `<TechnicalContactUrl>${esc(e.technicalContactUrl ?? '')}</TechnicalContactUrl>` +
    (e.technicalInformationUrl !== undefined
      ? `<TechnicalInformationUrl>${esc(e.technicalInformationUrl)}</TechnicalInformationUrl>`
      : '') +
    `</Endpoint>`;
  const procs = processes
    .map(
      (p) =>
        `<Process>${id('ProcessIdentifier', p.process)}<ServiceEndpointList>${p.endpoints.map(endpoint).join('')}` +
        `</ServiceEndpointList></Process>`,
    )
    .join('');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<SignedServiceMetadata xmlns="${SMP_NS}" xmlns:ids="${SMP_IDS_NS}" xmlns:wsa="${WSA_NS}"><ServiceMetadata>` +
    `<ServiceInformation>` +
    `${id('ParticipantIdentifier', participant)}${id('DocumentIdentifier', documentType)}<ProcessList>${procs}` +
    `</ProcessList>` +
    `</ServiceInformation></ServiceMetadata></SignedServiceMetadata>`
  );
}

/** Unsigned redirect to the service metadata at another SMP, whose signing certificate has subject `certificateUid`. */
export function buildRedirectXml(href: string, certificateUid: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<SignedServiceMetadata xmlns="${SMP_NS}"><ServiceMetadata><Redirect href="${esc(href)}">` +
    `<CertificateUID>${esc(certificateUid)}</CertificateUID></Redirect></ServiceMetadata></SignedServiceMetadata>`
  );
}

const RFC4514_SPECIAL = /[,+"\\<>;=]/g;

/** A certificate subject in RFC 2253/4514 form (most specific RDN first), as Java prints it: `CN=x,OU=y,O=z,C=NL`. */
export function rfc2253Subject(cert: X509Certificate): string {
  return cert.subject
    .split('\n')
    .filter((l) => l.length > 0)
    .reverse()
    .map((l) => {
      const i = l.indexOf('=');
      const value = l
        .slice(i + 1)
        .replace(RFC4514_SPECIAL, (c) => `\\${c}`)
        .replace(/^([ #])/, '\\$1')
        .replace(/ $/, '\\ ');
      return `${l.slice(0, i)}=${value}`;
    })
    .join(',');
}

/**
 * Signs an unsigned SignedServiceMetadata document (as built above): appends an enveloped ds:Signature over the whole
 * document. The returned text must be served byte for byte.
 */
export function signServiceMetadata(xml: string, signer: KeyMaterial): string {
  const certB64 = signer.certificate.raw.toString('base64');
  const subject = esc(rfc2253Subject(signer.certificate));
  const sig = new SignedXml({
    privateKey: signer.privateKey.export({ format: 'pem', type: 'pkcs8' }),
    publicCert: signer.certificate.toString(),
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
    getKeyInfoContent: ({ prefix } = {}) => {
      const p = prefix ? `${prefix}:` : '';
      return (
        `<${p}X509Data><${p}X509SubjectName>${subject}</${p}X509SubjectName><${p}X509Certificate>${certB64}` +
        `</${p}X509Certificate></${p}X509Data>`
      );
    },
  });
  useCorrectC14n(sig);
  sig.addReference({ xpath: '/*', transforms: [ENVELOPED, EXC_C14N], digestAlgorithm: SHA256, isEmptyUri: true });
  sig.computeSignature(xml, { location: { reference: '/*', action: 'append' } });
  return sig.getSignedXml();
}
