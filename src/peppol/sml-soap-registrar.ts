/**
 * SML registration through the SML's management interface (sml-client.ts; EXPERIMENTAL until tried against the
 * OpenPeppol SML test environment). Registrations are made idempotent on top of a protocol whose Create refuses an
 * existing entry: a refused Create is accepted when List shows the participant under our SMP already. When our SMP's
 * IP address is configured, our SMP's own SML record is created or updated before the first participant.
 */
import { GatewayError } from '../core/gateway-error';
import { formatId, type ParticipantId } from './identifiers';
import { SmlFaultError, type SmlClient } from './sml-client';
import type { SmlMigration, SmlRegistrar } from './sml-registrar';

export interface SoapSmlRegistrarOptions {
  client: SmlClient;
  /** Our SMP's public base URL (the SML's LogicalAddress). */
  smpUrl: string;
  /** Our SMP's IP address (the SML's PhysicalAddress); without it our SMP's record is left as the operator made it. */
  smpAddress?: string;
}

export class SoapSmlRegistrar implements SmlRegistrar, SmlMigration {
  readonly kind = 'sml';
  readonly migration: SmlMigration = this;
  private smpReady: Promise<void> | undefined;

  constructor(private readonly options: SoapSmlRegistrarOptions) {}

  /** Creates or updates our SMP's record in the SML (once per process while it succeeds). */
  ensureSmp(): Promise<void> {
    const address = this.options.smpAddress;
    if (!address) return Promise.resolve();
    this.smpReady ??= (async () => {
      const c = this.options.client;
      const url = this.options.smpUrl.replace(/\/+$/, '');
      const current = await c.readSmp();
      if (!current) await c.createSmp(url, address);
      else if (current.logicalAddress.replace(/\/+$/, '') !== url || current.physicalAddress !== address)
        await c.updateSmp(url, address);
    })().catch((e: unknown) => {
      this.smpReady = undefined;
      throw e;
    });
    return this.smpReady;
  }

  async register(participant: ParticipantId, smpUrl: string): Promise<void> {
    if (smpUrl.replace(/\/+$/, '') !== this.options.smpUrl.replace(/\/+$/, ''))
      throw new GatewayError(
        'BAD_REQUEST',
        `the SML publishes our SMP at ${this.options.smpUrl}; ${formatId(participant)} cannot point at ${smpUrl}`,
      );
    await this.ensureSmp();
    try {
      await this.options.client.createParticipant(participant);
    } catch (e) {
      // Create refuses an existing entry; when it is ours already the registration stands.
      if (e instanceof SmlFaultError && e.fault === 'BadRequest' && (await this.options.client.isOurs(participant)))
        return;
      throw e;
    }
  }

  async unregister(participant: ParticipantId): Promise<void> {
    try {
      await this.options.client.deleteParticipant(participant);
    } catch (e) {
      if (e instanceof SmlFaultError && e.fault === 'NotFound') return;
      throw e;
    }
  }

  async prepareToMigrate(participant: ParticipantId, key: string): Promise<void> {
    await this.options.client.prepareToMigrate(participant, key);
  }

  async migrate(participant: ParticipantId, key: string): Promise<void> {
    await this.ensureSmp();
    await this.options.client.migrate(participant, key);
  }

  isOurs(participant: ParticipantId): Promise<boolean> {
    return this.options.client.isOurs(participant);
  }
}
