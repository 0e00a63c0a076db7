import {
  CLIENT_SECRET_SCRYPT_PARAMS,
  DEFAULT_SCRYPT_PARAMS,
  generateClientSecret,
  hashSecret,
  validateIntegrationPassword,
  verifyAgainstDecoy,
  verifySecret,
} from '../../../src/auth/secret-hash';

const FAST = { ln: 10, r: 8, p: 1 };

describe('hashSecret / verifySecret', () => {
  it('produces a self-describing PHC string with the default parameters', async () => {
    const h = await hashSecret('correct horse');
    expect(h).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(DEFAULT_SCRYPT_PARAMS).toEqual({ ln: 15, r: 8, p: 1 });
    await expect(verifySecret('correct horse', h)).resolves.toBe(true);
  });

  it('salts: two hashes of one secret differ and both verify', async () => {
    const [a, b] = await Promise.all([hashSecret('s3cret', FAST), hashSecret('s3cret', FAST)]);
    expect(a).not.toBe(b);
    await expect(verifySecret('s3cret', a)).resolves.toBe(true);
    await expect(verifySecret('s3cret', b)).resolves.toBe(true);
  });

  it('rejects a wrong secret, including near misses', async () => {
    const h = await hashSecret('s3cret', FAST);
    for (const wrong of ['s3cre', 's3cret ', 'S3cret', '']) await expect(verifySecret(wrong, h)).resolves.toBe(false);
  });

  it('reads the parameters back from the hash', async () => {
    const h = await hashSecret('x', { ln: 11, r: 4, p: 2 });
    expect(h.startsWith('$scrypt$ln=11,r=4,p=2$')).toBe(true);
    await expect(verifySecret('x', h)).resolves.toBe(true);
    // Same salt and hash under other parameters is a different derivation.
    await expect(verifySecret('x', h.replace('ln=11', 'ln=12'))).resolves.toBe(false);
  });

  it('treats tampered or foreign formats as a mismatch, never as an error', async () => {
    const h = await hashSecret('s3cret', FAST);
    const [, , params, salt, hash] = h.split('$');
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    const tampered = [
      '',
      'plain-text',
      h.replace('$scrypt$', '$argon2id$'),
      `$scrypt$${params}$${salt}`,
      `$scrypt$${params}$${flip(salt!)}$${hash}`,
      `$scrypt$${params}$${salt}$${flip(hash!)}`,
      `$scrypt$${params}$${salt}$${hash}=`,
      `$scrypt$ln=30,r=8,p=1$${salt}$${hash}`, // would need 128 GiB
      `$scrypt$ln=10,r=8,p=0$${salt}$${hash}`,
      `$scrypt$ln=20,r=32,p=1$${salt}$${hash}`, // over the memory bound
      `$scrypt$${params}$${salt}$${hash!.slice(0, -1)}x`, // non-canonical trailing bits
    ];
    for (const t of tampered) await expect(verifySecret('s3cret', t)).resolves.toBe(false);
  });

  it('refuses to hash with parameters out of bounds', async () => {
    await expect(hashSecret('x', { ln: 8, r: 8, p: 1 })).rejects.toThrow(RangeError);
    await expect(hashSecret('x', { ln: 22, r: 8, p: 1 })).rejects.toThrow(RangeError);
  });

  it('normalises Unicode so composed and decomposed input match', async () => {
    const h = await hashSecret('caf\u00e9', FAST);
    await expect(verifySecret('cafe\u0301', h)).resolves.toBe(true);
  });

  it('the decoy always answers false, also at the client-secret cost', async () => {
    await expect(verifyAgainstDecoy('anything')).resolves.toBe(false);
    await expect(verifyAgainstDecoy('anything', CLIENT_SECRET_SCRYPT_PARAMS)).resolves.toBe(false);
  });
});

describe('generateClientSecret', () => {
  it('is 256 bits of URL-safe randomness', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const s = generateClientSecret();
      expect(s).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(s, 'base64url')).toHaveLength(32);
      seen.add(s);
    }
    expect(seen.size).toBe(50);
  });
});

describe('validateIntegrationPassword (spec 5.10)', () => {
  const codes = (pw: string, username?: string) =>
    validateIntegrationPassword(pw, username === undefined ? {} : { username }).map((p) => p.code);

  it('accepts letters, digits and the exclamation mark', () => {
    expect(validateIntegrationPassword('Abcdefgh1234!')).toEqual([]);
    expect(validateIntegrationPassword('!!!!aaaa2222ZZ')).toEqual([]);
  });

  it('rejects every other special character and names it', () => {
    for (const ch of ['@', '#', '$', '%', '&', '*', '-', '_', '.', '?', ' ', '\u00e9', '"', '\t']) {
      const problems = validateIntegrationPassword(`Abcdefgh1234${ch}`);
      expect(problems.map((p) => p.code)).toEqual(['forbidden_character']);
    }
    const [problem] = validateIntegrationPassword('Abcdefgh12#4@');
    expect(problem?.message).toContain('#');
    expect(problem?.message).toContain('@');
    expect(validateIntegrationPassword('Abcdefgh12 34')[0]?.message).toContain('" "');
  });

  it('enforces the length bounds', () => {
    expect(codes('Abcdefgh12!')).toEqual(['too_short']);
    expect(codes('Abcdefgh123!')).toEqual([]);
    expect(codes('a'.repeat(128))).toEqual([]);
    expect(codes('a'.repeat(129))).toEqual(['too_long']);
    expect(codes('')).toEqual(['too_short']);
  });

  it('reports every problem at once', () => {
    expect(codes('ab#')).toEqual(['too_short', 'forbidden_character']);
  });

  it('refuses a password containing the username', () => {
    expect(codes('xxAcmeBooks2024!', 'acmebooks')).toEqual(['contains_username']);
    expect(codes('xxAcmeBooks2024!', 'other')).toEqual([]);
  });
});
