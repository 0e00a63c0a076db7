/**
 * Registering our participants in the SML, so that senders' lookups (sml.ts) find our SMP.
 *
 * Implementations: the SML's own management interface (sml-soap-registrar.ts, experimental), one that writes the
 * U-NAPTR record into a DNS zone we control (a local zone in tests, or a private network's own zone), and a "manual"
 * one for operators who register through other means.
 */
import { GatewayError } from '../core/gateway-error';
import { formatId, type ParticipantId } from './identifiers';
import { naptrName, type NaptrRecord } from './sml';

export interface SmlRegistrar {
  /** `dns-zone`, `manual`, `off`: shown in the API so an operator sees what a registration did. */
  readonly kind: string;
  /** Points the SML entry of `participant` at the SMP base URL `smpUrl`. Idempotent. */
  register(participant: ParticipantId, smpUrl: string): Promise<void>;
  /** Removes the SML entry of `participant`. Idempotent. */
  unregister(participant: ParticipantId): Promise<void>;
  /** Moving participants between SMPs with migration keys; absent where the registrar cannot (501 on the API). */
  readonly migration?: SmlMigration;
}

/** The SML side of a participant migration between service providers (the SML's PrepareToMigrate / Migrate). */
export interface SmlMigration {
  /** As the current owner: the SML will hand `participant` to whichever SMP presents `key`. */
  prepareToMigrate(participant: ParticipantId, key: string): Promise<void>;
  /** As the new owner: moves the SML entry of `participant` to our SMP, with the previous owner's `key`. */
  migrate(participant: ParticipantId, key: string): Promise<void>;
  /** Whether the SML entry of `participant` is ours (false once another SMP migrated it away). */
  isOurs(participant: ParticipantId): Promise<boolean>;
}

/** The DNS zone the registrar writes to (an authoritative server's record store). */
export interface DnsZoneWriter {
  setRecords(name: string, records: NaptrRecord[]): Promise<void> | void;
  removeRecords(name: string): Promise<void> | void;
}

/** The U-NAPTR record that sends lookups of a participant to `smpUrl` (flag U, service Meta:SMP, `!^.*$!<url>!`). */
export function smpNaptrRecord(smpUrl: string): NaptrRecord {
  const url = smpUrl.replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GatewayError('BAD_REQUEST', `the SMP URL "${smpUrl}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new GatewayError('BAD_REQUEST', `the SMP URL "${smpUrl}" is not http(s)`);
  // "!" delimits the regexp field; a URL containing it would need escaping no resolver is known to undo.
  if (url.includes('!')) throw new GatewayError('BAD_REQUEST', `the SMP URL "${smpUrl}" contains "!"`);
  return { flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${url}!`, replacement: '', order: 100, preference: 10 };
}

/** Writes NAPTR records into a zone of ours under the configured SML zone name. */
export class DnsZoneSmlRegistrar implements SmlRegistrar {
  readonly kind = 'dns-zone';

  constructor(
    private readonly zone: string,
    private readonly writer: DnsZoneWriter,
  ) {}

  async register(participant: ParticipantId, smpUrl: string): Promise<void> {
    await this.writer.setRecords(naptrName(participant, this.zone), [smpNaptrRecord(smpUrl)]);
  }

  async unregister(participant: ParticipantId): Promise<void> {
    await this.writer.removeRecords(naptrName(participant, this.zone));
  }
}

/** The operator registers participants with the SML by other means; calls succeed and change nothing. */
export class ManualSmlRegistrar implements SmlRegistrar {
  readonly kind = 'manual';
  async register(): Promise<void> {}
  async unregister(): Promise<void> {}
}

/** No SML registration configured: registering is refused with a message that says what to configure. */
export class UnconfiguredSmlRegistrar implements SmlRegistrar {
  readonly kind = 'off';
  async register(participant: ParticipantId): Promise<void> {
    throw new GatewayError(
      'NOT_IMPLEMENTED',
      `${formatId(participant)} cannot be registered in the SML: no SML registration is configured ` +
        `(PEPPOL_SML_REGISTRAR=manual publishes in our SMP and leaves the SML to the operator; ` +
        `PEPPOL_SML_REGISTRAR=sml registers through the SML's management interface)`,
    );
  }
  async unregister(): Promise<void> {}
}
