import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../core/gateway-error';
import { HookRepository, type HookRecord } from '../storage/hooks/hook.repository';
import type { HookDeliveryAuthDoc, HookOAuth2Doc } from '../storage/hooks/hook.schema';
import { isClientCertificateName } from '../webhooks/delivery-agents';
import { checkTargetUrl } from '../webhooks/ssrf-guard';
import type { Core } from './compose';
import { allowListOf } from './webhooks';

/**
 * `hook-auth oauth2|cert|clear|show`: how deliveries to one hook authenticate beyond the HMAC signature (spec 5
 * item 12). Operator configuration, not part of the API's hook resource (the contract defines no such fields). The
 * OAuth2 client secret is read from a file (never a command-line argument) and never printed; a client certificate is
 * a name in WEBHOOK_CLIENT_CERT_DIR, so no private key is stored in the database.
 */
export interface HookAuthOptions {
  tenant?: string | undefined;
  hook?: string | undefined;
  tokenUrl?: string | undefined;
  clientId?: string | undefined;
  clientSecretFile?: string | undefined;
  scope?: string | undefined;
  audience?: string | undefined;
  clientAuth?: string | undefined;
  name?: string | undefined;
}

const need = (value: string | undefined, flag: string): string => {
  if (!value) throw new GatewayError('BAD_REQUEST', `--${flag} is required`);
  return value;
};

export async function runHookAuthCommand(core: Core, verb: string, o: HookAuthOptions): Promise<unknown> {
  const hooks = new HookRepository(core.db.models);
  const tenantId = need(o.tenant, 'tenant');
  const hookId = need(o.hook, 'hook');
  const hook = await hooks.get({ tenantId }, hookId);
  if (!hook) throw new GatewayError('NOT_FOUND', `hook ${hookId} not found in tenant ${tenantId}`);
  const current: HookDeliveryAuthDoc = hook.deliveryAuth ?? {};
  const save = async (auth: HookDeliveryAuthDoc | null) => {
    const saved = await hooks.setDeliveryAuth(tenantId, hookId, auth);
    if (!saved) throw new GatewayError('NOT_FOUND', `hook ${hookId} not found in tenant ${tenantId}`);
    return showAuth(saved);
  };
  switch (verb) {
    case 'oauth2':
      return save({ ...current, oauth2: oauth2From(core, o) });
    case 'cert': {
      const name = need(o.name, 'name');
      checkCertificate(core.config.webhooks.clientCertDir, name);
      return save({ ...current, clientCertificate: name });
    }
    case 'clear':
      return save(null);
    case 'show':
      return showAuth(hook);
    default:
      throw new GatewayError('BAD_REQUEST', `unknown command "hook-auth ${verb}"`);
  }
}

function oauth2From(core: Core, o: HookAuthOptions): HookOAuth2Doc {
  const tokenUrl = need(o.tokenUrl, 'token-url');
  let url: URL;
  try {
    url = new URL(tokenUrl);
  } catch {
    throw new GatewayError('BAD_REQUEST', '--token-url is not a URL');
  }
  const { allowHttp } = core.config.webhooks;
  const refused = checkTargetUrl(url, allowListOf(core.config), { allowHttp });
  if (refused) throw new GatewayError('BAD_REQUEST', `--token-url refused: ${refused}`);
  const clientAuth = o.clientAuth ?? 'client_secret_basic';
  if (clientAuth !== 'client_secret_basic' && clientAuth !== 'client_secret_post')
    throw new GatewayError('BAD_REQUEST', '--client-auth must be client_secret_basic or client_secret_post');
  const file = need(o.clientSecretFile, 'client-secret-file');
  let clientSecret: string;
  try {
    clientSecret = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new GatewayError(
      'BAD_REQUEST',
      `--client-secret-file cannot be read (${String((e as { code?: unknown }).code ?? e)})`,
    );
  }
  if (clientSecret === '') throw new GatewayError('BAD_REQUEST', '--client-secret-file is empty');
  return {
    tokenUrl: url.href,
    clientId: need(o.clientId, 'client-id'),
    clientSecret,
    scope: o.scope ?? null,
    audience: o.audience ?? null,
    clientAuth,
  };
}

/** The certificate and key must be there, readable and a pair, before a hook names them. */
function checkCertificate(dir: string | undefined, name: string): void {
  if (!dir)
    throw new GatewayError('BAD_REQUEST', 'WEBHOOK_CLIENT_CERT_DIR is not set: no client certificate can be used');
  if (!isClientCertificateName(name))
    throw new GatewayError(
      'BAD_REQUEST',
      '--name is 1-64 letters, digits, ".", "_" or "-", not starting with one of those',
    );
  try {
    const cert = new X509Certificate(readFileSync(path.join(dir, `${name}.crt`)));
    const key = createPrivateKey(readFileSync(path.join(dir, `${name}.key`)));
    if (!cert.checkPrivateKey(key)) throw new Error('the key does not belong to the certificate');
    if (new Date(cert.validTo).getTime() < Date.now()) throw new Error(`the certificate expired on ${cert.validTo}`);
  } catch (e) {
    throw new GatewayError('BAD_REQUEST', `client certificate ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** What is configured, flat (the CLI prints one `key: value` per line); the client secret only as present or not. */
function showAuth(hook: HookRecord) {
  const oauth2 = hook.deliveryAuth?.oauth2;
  return {
    hookId: hook.id,
    oauth2TokenUrl: oauth2?.tokenUrl ?? null,
    oauth2ClientId: oauth2?.clientId ?? null,
    oauth2ClientSecret: oauth2 ? 'set' : null,
    oauth2Scope: oauth2?.scope ?? null,
    oauth2Audience: oauth2?.audience ?? null,
    oauth2ClientAuth: oauth2 ? (oauth2.clientAuth ?? 'client_secret_basic') : null,
    clientCertificate: hook.deliveryAuth?.clientCertificate ?? null,
  };
}
