/**
 * Certificate path checks for Peppol: the certificate must chain to one of the configured CA certificates (for access
 * points the Peppol AP CA, for SMPs the SMP CA — usually the intermediates themselves, as Peppol's own checkers
 * trust them directly), every certificate on the path must be within its validity period at the checked instant, and
 * the leaf must be an end-entity certificate with the key usages its role needs.
 *
 * Revocation is not checked here (it needs the network): the result says so (`revocationChecked: false`) so callers
 * cannot mistake a path check for a full one; ./revocation.ts checks the returned chain.
 */
import type { X509Certificate } from 'node:crypto';
import { PeppolError } from '../peppol-error';
import { commonNameOf, fingerprintSha256, keyUsagesOf, type KeyUsageName } from './certificates';

export type CertificateProblem =
  | 'not-yet-valid'
  | 'expired'
  | 'self-signed'
  | 'untrusted'
  | 'bad-signature'
  | 'issuer-not-ca'
  | 'issuer-not-valid'
  | 'is-ca'
  | 'key-usage'
  | 'path-too-long';

export interface TrustPolicy {
  /** The CA certificates that are trusted as the end of a path (e.g. the Peppol AP CA). */
  anchors: readonly X509Certificate[];
  /** Key usages the leaf must allow (when it carries a KeyUsage extension). */
  requiredKeyUsages?: readonly KeyUsageName[];
  /** A human label for messages: "access point", "SMP". */
  role?: string;
}

/** Access point certificates sign messages and receive encrypted keys. */
export const AP_KEY_USAGES: readonly KeyUsageName[] = ['digitalSignature', 'keyEncipherment'];
/** SMP certificates sign service metadata. */
export const SMP_KEY_USAGES: readonly KeyUsageName[] = ['digitalSignature'];

export type CertificateCheck =
  | { valid: true; chain: X509Certificate[]; anchor: X509Certificate; revocationChecked: false }
  | { valid: false; problem: CertificateProblem; message: string };

const MAX_PATH = 6;

function describe(cert: X509Certificate): string {
  return `"${commonNameOf(cert) ?? cert.subject.replace(/\n/g, ', ')}" (serial ${cert.serialNumber})`;
}

function validityProblem(
  cert: X509Certificate,
  at: Date,
): { problem: 'not-yet-valid' | 'expired'; message: string } | undefined {
  const from = new Date(cert.validFrom);
  const to = new Date(cert.validTo);
  if (at < from)
    return { problem: 'not-yet-valid', message: `${describe(cert)} is not valid before ${from.toISOString()}` };
  if (at > to) return { problem: 'expired', message: `${describe(cert)} expired on ${to.toISOString()}` };
  return undefined;
}

/** True when `issuer` issued `cert`: names (and key identifiers) link up and the signature verifies. */
function issuedBy(cert: X509Certificate, issuer: X509Certificate): 'yes' | 'name-only' | 'no' {
  if (!cert.checkIssued(issuer)) return 'no';
  return cert.verify(issuer.publicKey) ? 'yes' : 'name-only';
}

/**
 * Checks `cert` against `policy` at instant `at`. `intermediates` are extra CA certificates that may complete the path
 * (they are not trusted by themselves).
 */
export function checkCertificate(
  cert: X509Certificate,
  policy: TrustPolicy,
  at: Date = new Date(),
  intermediates: readonly X509Certificate[] = [],
): CertificateCheck {
  const role = policy.role ? `${policy.role} certificate ` : 'certificate ';
  const fail = (problem: CertificateProblem, message: string): CertificateCheck => ({
    valid: false,
    problem,
    message: `${role}${message}`,
  });

  if (cert.ca) return fail('is-ca', `${describe(cert)} is a CA certificate, not an end-entity certificate`);
  const own = validityProblem(cert, at);
  if (own) return fail(own.problem, own.message);
  const usages = keyUsagesOf(cert);
  if (usages) {
    const missing = (policy.requiredKeyUsages ?? []).filter((u) => !usages.includes(u));
    if (missing.length) return fail('key-usage', `${describe(cert)} does not allow ${missing.join(', ')}`);
  }

  const chain: X509Certificate[] = [cert];
  let current = cert;
  for (let depth = 0; depth < MAX_PATH; depth++) {
    let nameMatchOnly = false;
    for (const anchor of policy.anchors) {
      const r = issuedBy(current, anchor);
      if (r === 'name-only') nameMatchOnly = true;
      if (r !== 'yes') continue;
      const v = validityProblem(anchor, at);
      if (v)
        return fail('issuer-not-valid', `${describe(cert)}: its CA ${describe(anchor)} is not valid: ${v.message}`);
      return { valid: true, chain: [...chain, anchor], anchor, revocationChecked: false };
    }
    const next = intermediates.find((i) => !chain.includes(i) && issuedBy(current, i) === 'yes');
    if (!next) {
      if (nameMatchOnly || intermediates.some((i) => issuedBy(current, i) === 'name-only')) {
        return fail(
          'bad-signature',
          `${describe(cert)}: the signature of ${describe(current)} does not verify with its issuer's key`,
        );
      }
      if (current.checkIssued(current))
        return fail('self-signed', `${describe(current)} is self-signed and not a configured CA`);
      return fail(
        'untrusted',
        `${describe(cert)} was not issued by a configured CA (issuer: ${current.issuer.replace(/\n/g, ', ')})`,
      );
    }
    if (!next.ca) return fail('issuer-not-ca', `${describe(cert)}: ${describe(next)} is not a CA certificate`);
    const v = validityProblem(next, at);
    if (v) return fail('issuer-not-valid', `${describe(cert)}: intermediate ${v.message}`);
    chain.push(next);
    current = next;
  }
  return fail('path-too-long', `${describe(cert)}: no trusted CA within ${MAX_PATH} certificates`);
}

/** checkCertificate that throws PeppolError(certificate-invalid) with `details.problem`. */
export function assertCertificateValid(
  cert: X509Certificate,
  policy: TrustPolicy,
  at: Date = new Date(),
  intermediates: readonly X509Certificate[] = [],
): X509Certificate[] {
  const r = checkCertificate(cert, policy, at, intermediates);
  if (!r.valid) {
    throw new PeppolError('UNPROCESSABLE', 'certificate-invalid', r.message, {
      details: {
        problem: r.problem,
        subject: cert.subject,
        serialNumber: cert.serialNumber,
        sha256: fingerprintSha256(cert),
      },
    });
  }
  return r.chain;
}
