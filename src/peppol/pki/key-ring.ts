/**
 * Certificate rollover for one access point: several key pairs of the same Seat ID may be configured at once. Around
 * a renewal both the old and the new certificate are valid; the SMP switches to the new one at some moment and
 * senders that looked it up earlier still encrypt for the old one. So:
 *
 * - outgoing messages are signed with the newest certificate that is valid now;
 * - incoming messages are decrypted with whichever configured key the sender encrypted for (found by certificate);
 * - both certificates are "ours" when a peer or our SMP shows one of them.
 */
import type { X509Certificate } from 'node:crypto';
import { PeppolError } from '../peppol-error';
import { commonNameOf, fingerprintSha256 } from './certificates';
import type { KeyMaterial } from './key-material';

function invalid(message: string): PeppolError {
  return new PeppolError('INTERNAL', 'key-material-invalid', message, { retryable: false });
}

function validAt(m: KeyMaterial, at: Date): boolean {
  return new Date(m.certificate.validFrom) <= at && at <= new Date(m.certificate.validTo);
}

export class ApKeyRing {
  readonly seatId: string;
  private readonly entries: readonly KeyMaterial[];
  private readonly byFingerprint: ReadonlyMap<string, KeyMaterial>;

  constructor(entries: readonly KeyMaterial[]) {
    if (entries.length === 0) throw invalid('no access point key configured');
    const names = new Set(entries.map((e) => commonNameOf(e.certificate) ?? ''));
    if (names.size !== 1 || names.has('')) {
      throw invalid(
        `rollover keys must all belong to one Seat ID (certificate CN); found: ${[...names].join(', ') || '(no CN)'}`,
      );
    }
    this.seatId = [...names][0] as string;
    this.entries = [...entries];
    const map = new Map<string, KeyMaterial>();
    for (const e of entries) {
      const fp = fingerprintSha256(e.certificate);
      if (map.has(fp)) throw invalid(`the certificate ${fp} is configured twice`);
      map.set(fp, e);
    }
    this.byFingerprint = map;
  }

  /** The key to sign with: of the certificates valid at `at`, the one issued last (latest notBefore). */
  signing(at: Date = new Date()): KeyMaterial {
    const valid = this.entries.filter((e) => validAt(e, at));
    if (valid.length === 0) {
      const until = this.entries.map((e) => e.certificate.validTo).join(', ');
      throw new PeppolError(
        'INTERNAL',
        'certificate-invalid',
        `no access point certificate of ${this.seatId} is valid at ${at.toISOString()} (valid to: ${until})`,
        {
          retryable: false,
        },
      );
    }
    return valid.reduce((best, e) =>
      new Date(e.certificate.validFrom) > new Date(best.certificate.validFrom) ? e : best,
    );
  }

  /**
   * The key pair of one of our certificates (e.g. the one a sender encrypted for), or undefined when it is not ours.
   */
  forCertificate(cert: X509Certificate): KeyMaterial | undefined {
    return this.byFingerprint.get(fingerprintSha256(cert));
  }

  /** Every configured certificate (what our SMP may publish; it picks the newest valid one). */
  certificates(): X509Certificate[] {
    return this.entries.map((e) => e.certificate);
  }

  /** All configured key pairs whose certificate is valid at `at`, newest first. */
  validAt(at: Date = new Date()): KeyMaterial[] {
    return this.entries
      .filter((e) => validAt(e, at))
      .sort((a, b) => new Date(b.certificate.validFrom).getTime() - new Date(a.certificate.validFrom).getTime());
  }
}
