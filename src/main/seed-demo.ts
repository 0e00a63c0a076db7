import { randomUUID } from 'node:crypto';
import { generateClientSecret, hashClientSecret } from '../auth/secret-hash';
import type { Core } from './compose';

export const DEMO = {
  tenantId: 'demo',
  tenantName: 'Demo tenant',
  partyId: '0106:12345678',
  legalEntityId: 'NL:0106:12345678',
  partyName: 'Demo Supplier B.V.',
  clientId: 'demo-client',
} as const;

export interface DemoCredentials {
  tenantId: string;
  partyId: string;
  clientId: string;
  clientSecret: string;
}

/**
 * Creates the demo tenant, party and client if missing and issues a fresh client secret (earlier demo secrets are
 * revoked), so the Quick start can always print working credentials without storing a secret in clear.
 */
export async function seedDemo(core: Core): Promise<DemoCredentials> {
  const d = core.directory;
  if (!(await d.getTenant(DEMO.tenantId))) await d.createTenant({ id: DEMO.tenantId, name: DEMO.tenantName });
  if (!(await d.findParty(DEMO.partyId))) {
    await d.createParty({
      tenantId: DEMO.tenantId,
      partyId: DEMO.partyId,
      legalEntityId: DEMO.legalEntityId,
      name: DEMO.partyName,
    });
  }
  const clientSecret = generateClientSecret();
  const secret = { id: randomUUID(), hash: await hashClientSecret(clientSecret) };
  const existing = await d.getClient(DEMO.clientId);
  if (!existing) {
    await d.createClient({ clientId: DEMO.clientId, name: 'Demo integration', tenantIds: [DEMO.tenantId], secret });
  } else {
    await d.addClientSecret(DEMO.clientId, secret);
    for (const s of existing.secrets) if (!s.revokedAt) await d.revokeClientSecret(DEMO.clientId, s.id);
  }
  return { tenantId: DEMO.tenantId, partyId: DEMO.partyId, clientId: DEMO.clientId, clientSecret };
}
