import { GatewayError } from '../core/gateway-error';
import { generateSubscriptionKey } from '../auth/subscription-keys';
import { PartnerRepository } from '../storage/partners/partner.repository';
import type { Core } from './compose';

/**
 * Admin commands for software partners and their Subscription-Keys (spec 2.1 layer 4): `partner create|list`,
 * `subscription-key create|list|revoke`. A key is printed once, when it is made; only its hash is stored.
 */
export async function runPartnerCommand(
  core: Core,
  command: string,
  options: {
    id?: string | undefined;
    name?: string | undefined;
    partner?: string | undefined;
    keyId?: string | undefined;
  },
): Promise<unknown> {
  const partners = new PartnerRepository(core.db.models);
  const need = (value: string | undefined, flag: string): string => {
    if (!value) throw new GatewayError('BAD_REQUEST', `--${flag} is required`);
    return value;
  };
  switch (command) {
    case 'partner create': {
      const p = await partners.createPartner({ id: need(options.id, 'id'), name: need(options.name, 'name') });
      return { partnerId: p._id, name: p.name };
    }
    case 'partner list':
      return (await partners.listPartners()).map((p) => ({ partnerId: p._id, name: p.name, createdAt: p.createdAt }));
    case 'subscription-key create': {
      const partnerId = need(options.partner, 'partner');
      const made = await generateSubscriptionKey();
      await partners.addKey({ keyId: made.keyId, partnerId, hash: made.hash });
      return { partnerId, keyId: made.keyId, subscriptionKey: made.key };
    }
    case 'subscription-key list':
      return partners.listKeys(options.partner);
    case 'subscription-key revoke':
      return partners.revokeKey(need(options.keyId, 'key-id'));
    default:
      throw new GatewayError('BAD_REQUEST', `unknown command "${command}"`);
  }
}
