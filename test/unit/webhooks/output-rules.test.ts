import {
  expandOutputTopic,
  normalizeWhen,
  selectOutputTopic,
  validateOutputRule,
  whenMatches,
} from '../../../src/core/output-rules';

describe('output rules (spec 6.7)', () => {
  it('reads status codes, classes, timeout and error; nothing else', () => {
    expect([400, '404', ' 5XX ', '2xx', 'timeout', 'ERROR'].map(normalizeWhen)).toEqual([
      '400',
      '404',
      '5xx',
      '2xx',
      'timeout',
      'error',
    ]);
    for (const bad of ['600', '40', '4x', 'x4xx', 'always', '', 4.5, null, {}]) expect(normalizeWhen(bad)).toBeNull();
    expect(validateOutputRule({ when: '500', topic: 'Send*Fallback' })).toBeNull();
    expect(validateOutputRule({ when: '500', topic: 'Send.Fallback' })).toMatch(/only letters/);
    expect(validateOutputRule({ when: 'later', topic: 'X' })).toMatch(/HTTP status/);
    expect(validateOutputRule({ when: '500', topic: 'HookSentError' })).toMatch(/gateway itself/);
  });

  it('matches a result', () => {
    expect(whenMatches('404', { httpStatus: 404 })).toBe(true);
    expect(whenMatches('404', { httpStatus: 400 })).toBe(false);
    expect(whenMatches('4xx', { httpStatus: 418 })).toBe(true);
    expect(whenMatches('5xx', { httpStatus: 418 })).toBe(false);
    expect(whenMatches('timeout', { timedOut: true })).toBe(true);
    expect(whenMatches('timeout', { timedOut: false })).toBe(false);
    expect(whenMatches('error', { timedOut: false })).toBe(true);
    expect(whenMatches('error', { httpStatus: 500 })).toBe(false);
    expect(whenMatches('5xx', { timedOut: true })).toBe(false);
  });

  it('takes the first matching rule and expands * to the original topic', () => {
    const rules = [
      { when: '404', topic: 'NotThere*' },
      { when: '4xx', topic: 'Send*Fallback' },
      { when: '400', topic: 'Never' },
    ];
    expect(selectOutputTopic(rules, { httpStatus: 400 }, 'Invoice')).toBe('SendInvoiceFallback');
    expect(selectOutputTopic(rules, { httpStatus: 404 }, 'Invoice')).toBe('NotThereInvoice');
    expect(selectOutputTopic(rules, { httpStatus: 500 }, 'Invoice')).toBeUndefined();
    expect(selectOutputTopic([], { httpStatus: 500 }, 'Invoice')).toBeUndefined();
    expect(expandOutputTopic('*-*', 'A')).toBe('A-A');
  });

  it('publishes nothing when expansion would exceed the topic length limit (a rule feeding itself cannot grow forever)', () => {
    const long = 'X'.repeat(120);
    expect(selectOutputTopic([{ when: '500', topic: 'Send*Fallback' }], { httpStatus: 500 }, long)).toBeUndefined();
  });
});
