import {
  HookForRouting,
  KNOWN_TOPICS,
  hookTopicMatch,
  isKnownTopic,
  isSecondOrderHookFailure,
  matchesTopic,
  selectHooks,
  validateTopicPattern,
} from '../../../src/core/topics';

describe('known topics', () => {
  it('lists the spec 6.2 topics plus Ping, HookSentRetry and HookSentError', () => {
    for (const t of [
      'InvoiceReceived',
      'InvoiceReceivedError',
      'InvoiceSent',
      'InvoiceSentRetry',
      'InvoiceSentError',
      'InvoiceResponseReceived',
      'InvoiceResponseSent',
      'InvoiceResponseSentRetry',
      'InvoiceResponseSentError',
      'MessageLevelStatusReceived',
      'MessageLevelStatusSent',
      'OrderReceived',
      'OrderSent',
      'OrderSentRetry',
      'OrderSentError',
      'OrderResponseSent',
      'OrderResponseSentRetry',
      'OrderResponseSentError',
      'HookSentRetry',
      'HookSentError',
      'Ping',
    ]) {
      expect(isKnownTopic(t)).toBe(true);
    }
    expect(new Set(KNOWN_TOPICS).size).toBe(KNOWN_TOPICS.length);
  });

  it('does not treat patterns or unknown names as known (they are still accepted by hooks)', () => {
    expect(isKnownTopic('Send*Fallback')).toBe(false);
    expect(isKnownTopic('CreditNoteReceived')).toBe(false);
    expect(validateTopicPattern('CreditNoteReceived')).toBeNull();
  });
});

describe('validateTopicPattern', () => {
  it.each(['InvoiceSent', 'Send*', '*Received', 'Invoice*', 'Send*Fallback', '*', '*Sent*', 'A1'])(
    'accepts %s',
    (p) => {
      expect(validateTopicPattern(p)).toBeNull();
    },
  );

  it.each([
    ['', /non-empty/],
    ['Send**', /\*\*/],
    ['**', /\*\*/],
    ['Invoice.*', /"\."/],
    ['Invoice Sent', /" "/],
    ['Invoice?', /"\?"/],
    ['Invoice[0-9]', /"\["/],
    ['Invoice_Sent', /"_"/],
    ['Sënd*', /"ë"/],
    ['A'.repeat(129), /longer than 128/],
  ])('refuses %j', (p, message) => {
    expect(validateTopicPattern(p)).toMatch(message);
  });

  it('refuses non-strings without throwing', () => {
    expect(validateTopicPattern(undefined as unknown as string)).toMatch(/non-empty/);
    expect(validateTopicPattern(42 as unknown as string)).toMatch(/non-empty/);
  });
});

describe('matchesTopic', () => {
  it.each([
    ['Send*', 'SendInvoiceSentFallback', true],
    ['Send*', 'Send', true],
    ['Send*', 'InvoiceSent', false],
    ['*Received', 'InvoiceReceived', true],
    ['*Received', 'MessageLevelStatusReceived', true],
    ['*Received', 'InvoiceReceivedError', false],
    ['Invoice*', 'InvoiceSent', true],
    ['Invoice*', 'InvoiceResponseReceived', true],
    ['Invoice*', 'OrderSent', false],
    ['Send*Fallback', 'SendInvoiceSentErrorFallback', true],
    ['Send*Fallback', 'SendFallback', true],
    ['Send*Fallback', 'SendInvoiceSentFallbackX', false],
    ['Send*Fallback', 'SendInvoice', false],
    ['*', 'Anything', true],
    ['*', '', true],
    ['*Sent*', 'InvoiceSentRetry', true],
    ['*Sent*', 'InvoiceReceived', false],
    ['*a*b*c', 'xaybzc', true],
    ['*a*b*c', 'xaybzcd', false],
    ['InvoiceSent', 'InvoiceSent', true],
    ['InvoiceSent', 'InvoiceSentRetry', false],
    ['invoice*', 'InvoiceSent', false],
  ])('%s vs %s → %s', (pattern, topic, expected) => {
    expect(matchesTopic(pattern, topic)).toBe(expected);
  });

  it('stays fast on adversarial patterns', () => {
    const pattern = '*a'.repeat(60) + '*b';
    const topic = 'a'.repeat(128);
    const t0 = Date.now();
    expect(matchesTopic(pattern, topic)).toBe(false);
    expect(Date.now() - t0).toBeLessThan(50);
  });
});

function hook(partial: Partial<HookForRouting> & { id: string }): HookForRouting {
  return { action: 'https', isActive: true, partyId: null, ...partial };
}

const invoiceReceived = { topic: 'InvoiceReceived', details: { sender: '0106:1' } };

describe('hookTopicMatch', () => {
  it('reads topic and topics[] and prefers an exact name', () => {
    expect(hookTopicMatch(hook({ id: 'a', topic: 'Invoice*', topics: ['InvoiceReceived'] }), 'InvoiceReceived')).toBe(
      'exact',
    );
    expect(hookTopicMatch(hook({ id: 'a', topics: ['Order*', '*Received'] }), 'InvoiceReceived')).toBe('wildcard');
    expect(hookTopicMatch(hook({ id: 'a', topic: 'OrderSent', topics: null }), 'InvoiceReceived')).toBeNull();
    expect(hookTopicMatch(hook({ id: 'a' }), 'InvoiceReceived')).toBeNull();
  });
});

describe('selectHooks', () => {
  it('labels an event no hook matches as dead-letter', () => {
    const r = selectHooks(invoiceReceived, [hook({ id: 'a', topic: 'InvoiceSent' })]);
    expect(r).toEqual({ selected: [], label: 'dead-letter' });
    expect(selectHooks(invoiceReceived, []).label).toBe('dead-letter');
  });

  it('ignores inactive hooks', () => {
    const r = selectHooks(invoiceReceived, [hook({ id: 'a', topic: 'InvoiceReceived', isActive: false })]);
    expect(r.label).toBe('dead-letter');
  });

  it('party level beats environment level, even when the environment hook is exact and the party hook a wildcard', () => {
    const env = hook({ id: 'a-env', topic: 'InvoiceReceived' });
    const party = hook({ id: 'z-party', topic: '*', partyId: '0106:1' });
    expect(selectHooks(invoiceReceived, [env, party]).selected).toEqual([party]);
    expect(selectHooks(invoiceReceived, [party, env]).selected).toEqual([party]);
  });

  it('an exact topic beats a wildcard at the same level', () => {
    const wild = hook({ id: 'a', topic: 'Invoice*' });
    const exact = hook({ id: 'b', topics: ['OrderSent', 'InvoiceReceived'] });
    expect(selectHooks(invoiceReceived, [wild, exact]).selected).toEqual([exact]);
    expect(selectHooks(invoiceReceived, [exact, wild]).selected).toEqual([exact]);
  });

  it('does not rank wildcards among themselves: the hook id decides', () => {
    const broad = hook({ id: 'a', topic: '*' });
    const narrow = hook({ id: 'b', topic: 'InvoiceRec*' });
    expect(selectHooks(invoiceReceived, [narrow, broad]).selected).toEqual([broad]);
  });

  it('breaks ties by hook id in code-unit order, whatever the input order', () => {
    const hooks = [
      hook({ id: 'b', topic: 'InvoiceReceived' }),
      hook({ id: 'B', topic: 'InvoiceReceived' }),
      hook({ id: 'a', topic: 'InvoiceReceived' }),
    ];
    expect(selectHooks(invoiceReceived, hooks).selected.map((h) => h.id)).toEqual(['B']);
    expect(selectHooks(invoiceReceived, [...hooks].reverse()).selected.map((h) => h.id)).toEqual(['B']);
  });

  it('selects one hook per channel kind, and every channel gets one', () => {
    const hooks = [
      hook({ id: 'h1', action: 'https', topic: 'InvoiceReceived' }),
      hook({ id: 'h2', action: 'https', topic: 'Invoice*' }),
      hook({ id: 'm1', action: 'mailto', topic: '*Received' }),
      hook({ id: 'p1', action: 'peppol', topic: 'InvoiceReceived', partyId: '0106:1' }),
      hook({ id: 'i1', action: 'httpsin', topic: 'InvoiceReceived' }),
      hook({ id: 'i2', action: 'httpsin', topic: 'InvoiceReceived', partyId: '0106:1' }),
    ];
    const r = selectHooks(invoiceReceived, hooks);
    expect(r.label).toBe('routed');
    // Sorted best first: party-level hooks, then exact, then id.
    expect(r.selected.map((h) => h.id)).toEqual(['i2', 'p1', 'h1', 'm1']);
  });

  it('labels an event matched only by drop hooks as dropped, and returns the drop hook', () => {
    const drop = hook({ id: 'd', action: 'drop', topic: 'Invoice*' });
    expect(selectHooks(invoiceReceived, [drop])).toEqual({ selected: [drop], label: 'dropped' });
  });

  it('a drop hook does not suppress other channels', () => {
    const drop = hook({ id: 'd', action: 'drop', topic: 'InvoiceReceived', partyId: '0106:1' });
    const https = hook({ id: 'h', topic: 'InvoiceReceived' });
    const r = selectHooks(invoiceReceived, [drop, https]);
    expect(r.label).toBe('routed');
    expect(r.selected).toEqual([drop, https]);
  });

  it('never delivers an event about a failing hook to that hook; the next hook of the channel takes it', () => {
    const failing = hook({ id: 'a', topic: 'HookSent*' });
    const other = hook({ id: 'b', topic: 'HookSent*' });
    const event = { topic: 'HookSentRetry', details: { hookId: 'a', originalTopic: 'InvoiceReceived' } };
    expect(selectHooks(event, [failing, other]).selected).toEqual([other]);
    expect(selectHooks(event, [failing]).label).toBe('dead-letter');
    const errorEvent = { topic: 'HookSentError', details: { hookId: 'b', originalTopic: 'InvoiceReceived' } };
    expect(selectHooks(errorEvent, [failing, other]).selected).toEqual([failing]);
  });

  it('the self-exclusion applies only to hook failure topics', () => {
    const a = hook({ id: 'a', topic: '*' });
    expect(selectHooks({ topic: 'InvoiceReceived', details: { hookId: 'a' } }, [a]).selected).toEqual([a]);
  });

  it('does not route a failure event about the delivery of a failure event', () => {
    const event = { topic: 'HookSentRetry', details: { hookId: 'a', originalTopic: 'HookSentError' } };
    expect(isSecondOrderHookFailure(event)).toBe(true);
    expect(selectHooks(event, [hook({ id: 'b', topic: '*' })])).toEqual({ selected: [], label: 'dropped' });
    expect(isSecondOrderHookFailure({ topic: 'HookSentRetry', details: { originalTopic: 'InvoiceSent' } })).toBe(false);
    expect(isSecondOrderHookFailure({ topic: 'InvoiceSent', details: { originalTopic: 'HookSentError' } })).toBe(false);
  });

  it('applies filters before priority, so a filtered-out party hook leaves the event to the environment hook', () => {
    const party = hook({ id: 'p', topic: 'InvoiceReceived', partyId: '0106:1', filter: 'sender == "0106:2"' });
    const env = hook({ id: 'e', topic: 'InvoiceReceived' });
    const passesFilter = jest.fn(
      (h: HookForRouting, e: typeof invoiceReceived) => h.filter === `sender == "${e.details.sender}"`,
    );
    expect(selectHooks(invoiceReceived, [party, env], { passesFilter }).selected).toEqual([env]);
    expect(passesFilter).toHaveBeenCalledTimes(1);
    const other = { topic: 'InvoiceReceived', details: { sender: '0106:2' } };
    expect(selectHooks(other, [party, env], { passesFilter }).selected).toEqual([party]);
  });

  it('does not call the filter predicate for hooks without a filter, or whose topic does not match', () => {
    const passesFilter = jest.fn(() => false);
    const hooks = [
      hook({ id: 'a', topic: 'InvoiceReceived', filter: '   ' }),
      hook({ id: 'b', topic: 'OrderSent', filter: 'x == "y"' }),
    ];
    expect(selectHooks(invoiceReceived, hooks, { passesFilter }).selected.map((h) => h.id)).toEqual(['a']);
    expect(passesFilter).not.toHaveBeenCalled();
  });

  it('refuses to guess when a hook has a filter and no predicate is given', () => {
    expect(() => selectHooks(invoiceReceived, [hook({ id: 'a', topic: '*', filter: 'x == "y"' })])).toThrow(
      /passesFilter/,
    );
  });

  it('ignores party-level hooks of other parties when the event party identifiers are given', () => {
    const mine = hook({ id: 'z', topic: 'InvoiceReceived', partyId: 'NL:0106:1' });
    const theirs = hook({ id: 'a', topic: 'InvoiceReceived', partyId: 'NL:0106:2' });
    const env = hook({ id: 'e', topic: 'InvoiceReceived' });
    expect(selectHooks(invoiceReceived, [theirs, mine, env], { partyIds: ['0106:1', 'NL:0106:1'] }).selected).toEqual([
      mine,
    ]);
    expect(selectHooks(invoiceReceived, [theirs, env], { partyIds: ['NL:0106:1'] }).selected).toEqual([env]);
  });

  it('keeps the caller’s hook type', () => {
    interface Stored extends HookForRouting {
      url: string;
    }
    const stored: Stored = { id: 'a', action: 'https', isActive: true, topic: '*', url: 'https://example.test/' };
    const r = selectHooks(invoiceReceived, [stored]);
    expect(r.selected[0]?.url).toBe('https://example.test/');
  });
});
