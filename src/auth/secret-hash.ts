import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Hashing of client secrets and user passwords with scrypt, stored in the PHC string format
 * `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>` (unpadded base64) so the parameters can be raised later without
 * invalidating existing hashes: each hash carries what is needed to verify it.
 */

export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  ln: number;
  /** Block size. */
  r: number;
  /** Parallelisation. */
  p: number;
}

/**
 * 32 MiB and roughly 100 ms per hash on one core: affordable on every token request (a client with two active
 * secrets costs two hashes), and far beyond what an offline attack on a leaked store can brute-force for the
 * 256-bit generated client secrets. Passwords lean on the length policy as well.
 */
export const DEFAULT_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ ln: 15, r: 8, p: 1 });

/**
 * Generated client secrets carry 256 bits of entropy, so a slow KDF adds nothing against brute force; the lowest
 * scrypt cost keeps every token request (one verification per active secret) at about a millisecond.
 */
export const CLIENT_SECRET_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ ln: 10, r: 8, p: 1 });

const SALT_BYTES = 16;
const HASH_BYTES = 32;
/** Bounds for parameters read back from a stored hash, so a corrupt or hostile record cannot exhaust memory. */
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,88})\$([A-Za-z0-9+/]{22,88})$/;

function memoryOf(params: ScryptParams): number {
  return 128 * 2 ** params.ln * params.r;
}

function checkParams(params: ScryptParams): boolean {
  return (
    Number.isInteger(params.ln) &&
    Number.isInteger(params.r) &&
    Number.isInteger(params.p) &&
    params.ln >= 10 &&
    params.ln <= 20 &&
    params.r >= 1 &&
    params.r <= 32 &&
    params.p >= 1 &&
    params.p <= 16 &&
    memoryOf(params) <= MAX_MEMORY_BYTES
  );
}

function derive(secret: string, salt: Buffer, length: number, params: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // NFC so the same password typed on different platforms hashes alike.
    scrypt(
      secret.normalize('NFC'),
      salt,
      length,
      { N: 2 ** params.ln, r: params.r, p: params.p, maxmem: 2 * memoryOf(params) },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

const b64 = (buf: Buffer): string => buf.toString('base64').replace(/=+$/, '');

export async function hashSecret(secret: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  if (!checkParams(params)) throw new RangeError('scrypt parameters out of bounds');
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(secret, salt, HASH_BYTES, params);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${b64(salt)}$${b64(hash)}`;
}

/** True only when `encoded` is a well-formed hash of `secret`. A malformed or out-of-bounds record is `false`. */
export async function verifySecret(secret: string, encoded: string): Promise<boolean> {
  const m = PHC.exec(encoded);
  if (!m) return false;
  const params: ScryptParams = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (!checkParams(params)) return false;
  const salt = Buffer.from(m[4] ?? '', 'base64');
  const expected = Buffer.from(m[5] ?? '', 'base64');
  // Re-encoding must give back the stored text: rejects non-canonical base64 (a tampered trailing character).
  if (b64(salt) !== m[4] || b64(expected) !== m[5]) return false;
  if (salt.length < 8 || expected.length < 16 || expected.length > 64) return false;
  const actual = await derive(secret, salt, expected.length, params);
  return timingSafeEqual(actual, expected);
}

/** Hash for a secret made by `generateClientSecret` (never for a human-chosen password). */
export function hashClientSecret(secret: string): Promise<string> {
  return hashSecret(secret, CLIENT_SECRET_SCRYPT_PARAMS);
}

const decoyHashes = new Map<string, Promise<string>>();

/**
 * Spends the time of one verification at `params` and answers `false`. Called when there is no hash to check (an
 * unknown username or client id, a user the client may not act for), so the response time does not tell which
 * exist: user passwords at the default cost, client secrets at `CLIENT_SECRET_SCRYPT_PARAMS`.
 */
export async function verifyAgainstDecoy(secret: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<false> {
  const key = `${params.ln},${params.r},${params.p}`;
  let decoy = decoyHashes.get(key);
  if (!decoy) {
    decoy = hashSecret(randomBytes(16).toString('hex'), params);
    decoyHashes.set(key, decoy);
  }
  await verifySecret(secret, await decoy);
  return false;
}

/** 32 random bytes (256 bits), base64url: safe in a form body, a Basic header and an environment variable alike. */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

export type PasswordProblemCode = 'too_short' | 'too_long' | 'forbidden_character' | 'contains_username';

export interface PasswordProblem {
  code: PasswordProblemCode;
  message: string;
}

export const INTEGRATION_PASSWORD_MIN_LENGTH = 12;
export const INTEGRATION_PASSWORD_MAX_LENGTH = 128;

/**
 * Spec 5.10: accounts created in the caller's own tenant for a business-software integration allow no special
 * character except `!`, i.e. ASCII letters, digits and `!`. With so small an alphabet the length carries the
 * strength, hence 12 as the minimum. Returns every problem found (empty = acceptable).
 */
export function validateIntegrationPassword(pw: string, context: { username?: string } = {}): PasswordProblem[] {
  const problems: PasswordProblem[] = [];
  const length = [...pw].length;
  if (length < INTEGRATION_PASSWORD_MIN_LENGTH) {
    problems.push({
      code: 'too_short',
      message: `must be at least ${INTEGRATION_PASSWORD_MIN_LENGTH} characters long`,
    });
  }
  if (length > INTEGRATION_PASSWORD_MAX_LENGTH) {
    problems.push({ code: 'too_long', message: `must be at most ${INTEGRATION_PASSWORD_MAX_LENGTH} characters long` });
  }
  const forbidden = [...new Set([...pw].filter((ch) => !/^[A-Za-z0-9!]$/.test(ch)))];
  if (forbidden.length > 0) {
    const shown = forbidden.map((ch) => (ch.trim() === '' ? JSON.stringify(ch) : ch)).join(' ');
    problems.push({
      code: 'forbidden_character',
      message: `may contain only letters A-Z and a-z, digits and "!"; not allowed: ${shown}`,
    });
  }
  const username = context.username?.trim().toLowerCase();
  if (username && username.length >= 3 && pw.toLowerCase().includes(username)) {
    problems.push({ code: 'contains_username', message: 'must not contain the username' });
  }
  return problems;
}
