import {
  credentialsMatch,
  entryToken,
  newEntrySecret,
  parseEntryToken,
  parseHttpsinUrl,
  redactHttpsinUrl,
  sameSecret,
} from '../../../src/webhooks/httpsin';

const ENTRY = '6f1c2d3e-4a5b-5c6d-8e7f-0a1b2c3d4e5f';

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
    expect(parseHttpsinUrl('httpsin://u%3Ax:p@inbound')).toMatch(/":"/);
    expect(parseHttpsinUrl('httpsin://u:p%0A@inbound')).toMatch(/control characters/);
    expect(parseHttpsinUrl('httpsin://u:p%E0%A4%A@inbound')).toMatch(/percent-encoding/);
    expect(parseHttpsinUrl('not a url')).toMatch(/valid URL/);
  });

  it('checks Basic credentials against the hook URL, both parts, and nothing without a usable URL', () => {
    const url = 'httpsin://inbox-user:s3cret%21@inbound?token=$token$';
    expect(credentialsMatch(url, 'inbox-user', 's3cret!')).toBe(true);
    expect(credentialsMatch(url, 'inbox-user', 's3cret')).toBe(false);
    expect(credentialsMatch(url, 'inbox-usr', 's3cret!')).toBe(false);
    expect(credentialsMatch(url, '', '')).toBe(false);
    expect(credentialsMatch(null, '\u0000', '\u0000')).toBe(false);
    expect(credentialsMatch('https://inbox-user:s3cret!@host', 'inbox-user', 's3cret!')).toBe(false);
    expect(sameSecret('a', 'a')).toBe(true);
    expect(sameSecret('a', 'ab')).toBe(false);
  });

  it('makes unguessable tokens that name one entry, and reads only well-formed ones', () => {
    const a = newEntrySecret();
    const b = newEntrySecret();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    const token = entryToken(ENTRY, a);
    expect(token).toBe(`${ENTRY}.${a}`);
    expect(parseEntryToken(token)).toEqual({ entryId: ENTRY, secret: a });
    for (const bad of [
      '',
      ENTRY,
      `${ENTRY}.`,
      `${ENTRY}.${a}x`,
      `${ENTRY}.${a.slice(1)}`,
      `${ENTRY.toUpperCase()}.${a}`,
      `${ENTRY}.${a.slice(0, 42)}=`,
      `../${ENTRY}.${a}`,
      `${ENTRY}.${a}\n`,
      'x'.repeat(10_000),
    ])
      expect(parseEntryToken(bad)).toBeNull();
  });

  it('masks the password for display', () => {
    expect(redactHttpsinUrl('httpsin://user:secret@inbound?token=$token$')).toBe(
      'httpsin://user:***@inbound?token=$token$',
    );
  });
});
