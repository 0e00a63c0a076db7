import { createHmac } from 'node:crypto';
import { documentToken, httpsinTarget, parseHttpsinUrl, redactHttpsinUrl } from '../../../src/webhooks/httpsin';

describe('httpsin hooks (spec 6.9)', () => {
  it('parses user, password and query; refuses anything else', () => {
    expect(parseHttpsinUrl('httpsin://us%40er:p%3Ass@inbound?token=$token$')).toEqual({
      user: 'us@er',
      password: 'p:ss',
      search: '?token=$token$',
    });
    expect(parseHttpsinUrl('https://u:p@inbound')).toMatch(/httpsin:\/\//);
    expect(parseHttpsinUrl('httpsin://u:p@elsewhere.example?token=$token$')).toMatch(/"inbound"/);
    expect(parseHttpsinUrl('httpsin://inbound?token=$token$')).toMatch(/user:password/);
    expect(parseHttpsinUrl('httpsin://u:p@inbound/path')).toMatch(/no path/);
    expect(parseHttpsinUrl('not a url')).toMatch(/valid URL/);
  });

  it('targets the configured endpoint with Basic credentials and the token filled in', () => {
    const t = httpsinTarget(
      'httpsin://user:pw@inbound?token=$token$&a=1',
      'https://relay.internal:8443/in?fixed=x',
      'tok+/=',
    );
    const u = new URL(t.url);
    expect(u.origin + u.pathname).toBe('https://relay.internal:8443/in');
    expect(u.searchParams.get('fixed')).toBe('x');
    expect(u.searchParams.get('token')).toBe('tok+/=');
    expect(u.searchParams.get('a')).toBe('1');
    expect(t.authorization).toBe(`Basic ${Buffer.from('user:pw').toString('base64')}`);
  });

  it('derives the document token from the secureKey so the receiver can check it', () => {
    const expected = createHmac('sha256', 'key-of-the-hook').update('document-token.doc-1').digest('base64url');
    expect(documentToken('key-of-the-hook', 'doc-1')).toBe(expected);
    expect(documentToken('key-of-the-hook', 'doc-2')).not.toBe(expected);
  });

  it('masks the password for display', () => {
    expect(redactHttpsinUrl('httpsin://user:secret@inbound?token=$token$')).toBe(
      'httpsin://user:***@inbound?token=$token$',
    );
  });
});
