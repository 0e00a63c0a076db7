import { readFileSync } from 'node:fs';
import path from 'node:path';
import { addDecimal, compareDecimal, isDecimal, subtractDecimal } from '../../../src/en16931';

describe('the EN 16931 model', () => {
  const source = readFileSync(path.join(__dirname, '../../../src/en16931/model.ts'), 'utf8');
  const named = (kind: 'BT' | 'BG', n: number): boolean => new RegExp(`\\b${kind}-${n}\\b(?!-)`).test(source);

  // EN 16931-1:2017 numbers its terms BT-1..BT-165 (BT-4 was withdrawn before publication) and groups BG-1..BG-32.
  it('names every business term BT-1..BT-165 (except the withdrawn BT-4) in the model', () => {
    const missing = Array.from({ length: 165 }, (_, k) => k + 1).filter((n) => n !== 4 && !named('BT', n));
    expect(missing).toEqual([]);
  });

  it('names every business group BG-1..BG-32 in the model', () => {
    expect(Array.from({ length: 32 }, (_, k) => k + 1).filter((n) => !named('BG', n))).toEqual([]);
  });

  it('names the scheme and attribute sub-terms', () => {
    for (const t of [
      'BT-18-1',
      'BT-29-1',
      'BT-30-1',
      'BT-34-1',
      'BT-46-1',
      'BT-47-1',
      'BT-49-1',
      'BT-60-1',
      'BT-61-1',
      'BT-71-1',
      'BT-125-1',
      'BT-125-2',
      'BT-128-1',
      'BT-157-1',
      'BT-158-1',
      'BT-158-2',
    ]) {
      expect(source).toContain(t);
    }
  });
});

describe('decimal strings', () => {
  it('adds and subtracts exactly, keeping the larger scale', () => {
    expect(addDecimal('0.1', '0.2')).toBe('0.3');
    expect(subtractDecimal('12.00', '10')).toBe('2.00');
    expect(subtractDecimal('1', '1.0005')).toBe('-0.0005');
    expect(addDecimal('99999999999999999999.99', '0.01')).toBe('100000000000000000000.00');
    expect(addDecimal('-.5', '+2')).toBe('1.5');
  });

  it('compares by value, not by spelling', () => {
    expect(compareDecimal('1.0', '1.00')).toBe(0);
    expect(compareDecimal('-0.01', '0')).toBe(-1);
    expect(compareDecimal('10', '9.999')).toBe(1);
  });

  it('refuses what is not xs:decimal', () => {
    expect(isDecimal('1.2E3')).toBe(false);
    expect(isDecimal('')).toBe(false);
    expect(isDecimal('.')).toBe(false);
    expect(() => addDecimal('1e2', '1')).toThrow(RangeError);
  });
});
