import type { Response } from 'express';
import { findPrincipal, principalOf, type Principal } from '../../../src/auth/authenticate';
import { GatewayError } from '../../../src/core/gateway-error';

const res = (locals: Record<string, unknown>) => ({ locals }) as unknown as Response;

describe('principalOf', () => {
  it('returns the principal set by the token check', () => {
    const p: Principal = {
      clientId: 'c',
      secretId: 's',
      grantType: 'client_credentials',
      scope: ['ap'],
      tenantIds: ['t'],
      tokenId: 'j',
      expiresAt: new Date(0),
    };
    expect(principalOf(res({ principal: p }))).toBe(p);
    expect(findPrincipal(res({ principal: p }))).toBe(p);
  });

  it('fails closed with 401 when the token check did not run', () => {
    expect(findPrincipal(res({}))).toBeUndefined();
    expect(() => principalOf(res({}))).toThrow(GatewayError);
    try {
      principalOf(res({}));
    } catch (err) {
      expect((err as GatewayError).code).toBe('UNAUTHORIZED');
    }
  });
});
