import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { validator } from '../validation/support';

/** Shared by the transformation tests: golden files, refusals, official validation of an output. */

export const GOLDEN_DIR = path.join(__dirname, 'golden');
export const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === '1';

/** Compares with the committed file in golden/ (regenerate with UPDATE_GOLDEN=1 after a deliberate change). */
export function golden(name: string, content: string): void {
  const file = path.join(GOLDEN_DIR, name);
  if (UPDATE_GOLDEN || !existsSync(file)) {
    if (!UPDATE_GOLDEN) throw new Error(`golden file ${name} is missing; run with UPDATE_GOLDEN=1 to create it`);
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(file, content);
  }
  expect(content).toBe(readFileSync(file, 'utf8'));
}

/** The GatewayError `fn` throws; fails the test when it throws nothing (or something else). */
export function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

/** The format the validator saw and its error assertions (rule id and the start of the text). */
export async function errorsOf(xml: string, ruleSet?: string): Promise<{ format: string; errors: string[] }> {
  const r = await validator().validate(Buffer.from(xml, 'utf8'), ruleSet ? { ruleSet } : {});
  return {
    format: r.format.id,
    errors: r.assertions.filter((a) => a.flag === 'error').map((a) => `${a.ruleId}: ${a.text.slice(0, 160)}`),
  };
}
