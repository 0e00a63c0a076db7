import {
  chooseChannel,
  FALLBACK_RULES,
  isFallbackListener,
  nextSendTopic,
  sendTopicOf,
  type ChannelHook,
} from '../../../src/core/channels';

const hook = (id: string, action: string, topics: string[], extra: Partial<ChannelHook> = {}): ChannelHook => ({
  id,
  action,
  topics,
  isActive: true,
  partyId: null,
  ...extra,
});

describe('channel selection (channels are hooks)', () => {
  const mailBoth = hook('m-both', 'mailto', ['Send*', 'Send*Fallback']);
  const mailFirst = hook('m-first', 'mailto', ['Send*']);
  const peppol = hook('p', 'peppol', ['Send*'], {
    output: [{ when: '404', topic: 'Send*Fallback' }],
    mlsType: 'FAILURE_ONLY',
  });

  it('with no channel hook, Peppol is the implicit channel, with no output rules', () => {
    const c = chooseChannel('SendInvoice', 'Invoice', [hook('h', 'https', ['Send*'])]);
    expect(c).toEqual({ ok: true, channel: { kind: 'peppol', hookId: null, output: [], mlsType: null }, hook: null });
  });

  it('a mail hook on Send* and Send*Fallback is the fallback of implicit Peppol (peppol-fallback), not a first channel', () => {
    expect(isFallbackListener(mailBoth, 'Invoice')).toBe(true);
    // On the fallback topic alone it is no fallback of the implicit channel (only of output rules naming it).
    const onlyFallback = hook('m-fb', 'mailto', ['Send*Fallback']);
    expect(isFallbackListener(onlyFallback, 'Invoice')).toBe(false);
    expect(chooseChannel('SendInvoice', 'Invoice', [onlyFallback])).toMatchObject({ channel: { output: [] } });
    const first = chooseChannel('SendInvoice', 'Invoice', [mailBoth]);
    expect(first).toMatchObject({ ok: true, channel: { kind: 'peppol', hookId: null, output: FALLBACK_RULES } });
    const next = nextSendTopic(first.ok ? first.channel : (undefined as never), 404, 'Invoice');
    expect(next).toBe('SendInvoiceFallback');
    const fallback = chooseChannel(next!, 'Invoice', [mailBoth], { tried: ['peppol'] });
    expect(fallback).toMatchObject({ ok: true, channel: { kind: 'mailto', hookId: 'm-both' } });
    // Delivered: no output topic.
    expect(nextSendTopic(first.ok ? first.channel : (undefined as never), 200, 'Invoice')).toBeUndefined();
  });

  it('a mail hook on Send* only is the first channel: the document goes by e-mail', () => {
    expect(chooseChannel('SendInvoice', 'Invoice', [mailFirst])).toMatchObject({
      ok: true,
      channel: { kind: 'mailto', hookId: 'm-first' },
    });
  });

  it('an explicit Peppol hook carries its own rules and mlsType; a fallback topic nobody takes has no channel', () => {
    const c = chooseChannel('SendCreditNote', 'CreditNote', [peppol]);
    expect(c).toMatchObject({ ok: true, channel: { kind: 'peppol', hookId: 'p', mlsType: 'FAILURE_ONLY' } });
    expect(nextSendTopic(c.ok ? c.channel : (undefined as never), 404, 'CreditNote')).toBe('SendCreditNoteFallback');
    expect(nextSendTopic(c.ok ? c.channel : (undefined as never), 500, 'CreditNote')).toBeUndefined();
    expect(chooseChannel('SendCreditNoteFallback', 'CreditNote', [peppol], { tried: ['p'] })).toEqual({
      ok: false,
      reason: 'no channel hook takes SendCreditNoteFallback',
    });
  });

  it('spec 6.6 priority across channels: party level, then exact topic, then hook id', () => {
    const env = hook('a', 'mailto', ['SendInvoice']);
    const party = hook('z', 'peppol', ['Send*'], { partyId: '0106:1' });
    expect(chooseChannel('SendInvoice', 'Invoice', [env, party])).toMatchObject({ channel: { hookId: 'z' } });
    const exact = hook('y', 'drop', ['SendInvoice']);
    const wild = hook('b', 'mailto', ['Send*']);
    expect(chooseChannel('SendInvoice', 'Invoice', [wild, exact])).toMatchObject({
      channel: { kind: 'drop', hookId: 'y' },
    });
  });

  it('a hook already tried, switched off or filtered out is not chosen again', () => {
    const off = hook('off', 'mailto', ['Send*'], { isActive: false });
    expect(chooseChannel('SendInvoice', 'Invoice', [off])).toMatchObject({ channel: { kind: 'peppol', hookId: null } });
    expect(chooseChannel('SendInvoice', 'Invoice', [mailFirst], { tried: ['m-first', 'peppol'] })).toEqual({
      ok: false,
      reason: 'no channel hook takes SendInvoice',
    });
    const filtered = hook('f', 'mailto', ['Send*'], { filter: 'recipient == "0106:1"' });
    const c = chooseChannel('SendInvoice', 'Invoice', [filtered], {
      details: { recipient: '0106:2' },
      passesFilter: (_h, e) => e.details?.['recipient'] === '0106:1',
    });
    expect(c).toMatchObject({ channel: { kind: 'peppol', hookId: null } });
  });

  it('?channel= forces a hook whatever its topics, or peppol-fallback only when a fallback mail hook exists', () => {
    const other = hook('other', 'mailto', ['SomethingElse']);
    expect(chooseChannel('SendInvoice', 'Invoice', [other], { forced: 'other' })).toMatchObject({
      channel: { kind: 'mailto', hookId: 'other' },
    });
    expect(chooseChannel('SendInvoice', 'Invoice', [other], { forced: 'nope' })).toEqual({
      ok: false,
      reason: 'the channel hook nope does not exist or is switched off',
    });
    // An httpsin hook is a pull inbox, not a channel: it cannot be forced.
    expect(chooseChannel('SendInvoice', 'Invoice', [hook('h', 'httpsin', ['Send*'])], { forced: 'h' }).ok).toBe(false);
    expect(chooseChannel('SendInvoice', 'Invoice', [mailFirst], { forced: 'peppol-fallback' })).toEqual({
      ok: false,
      reason: 'channel peppol-fallback needs a mail hook listening on SendInvoiceFallback',
    });
    expect(chooseChannel('SendInvoice', 'Invoice', [mailBoth, peppol], { forced: 'peppol-fallback' })).toMatchObject({
      ok: true,
      channel: { kind: 'peppol', hookId: 'p', output: FALLBACK_RULES },
    });
  });

  it('an https hook is a channel only when forced or on an output topic it names; a catch-all https hook never is', () => {
    const notify = hook('h-all', 'https', ['*']);
    const notifySend = hook('h-send', 'https', ['Send*']);
    const external = hook('h-ext', 'https', ['Send*Fallback']);
    const exact = hook('h-exact', 'https', ['SendInvoice']);
    // The first topic: https hooks are notified, Peppol stays the channel (whatever their patterns).
    for (const h of [notify, notifySend, external, exact]) {
      expect(chooseChannel('SendInvoice', 'Invoice', [h])).toMatchObject({ ok: true, channel: { kind: 'peppol' } });
    }
    // An output topic: only a pattern naming more than every sending topic makes it the channel.
    expect(chooseChannel('SendInvoiceFallback', 'Invoice', [notify, notifySend], { tried: ['peppol'] })).toEqual({
      ok: false,
      reason: 'no channel hook takes SendInvoiceFallback',
    });
    expect(
      chooseChannel('SendInvoiceFallback', 'Invoice', [notify, notifySend, external], { tried: ['peppol'] }),
    ).toMatchObject({ ok: true, channel: { kind: 'https', hookId: 'h-ext', output: [] } });
    // ?channel= names it: it is the first channel whatever its topics.
    expect(chooseChannel('SendInvoice', 'Invoice', [notify], { forced: 'h-all' })).toMatchObject({
      ok: true,
      channel: { kind: 'https', hookId: 'h-all' },
    });
    // Its output rules go on to the next topic like any channel's.
    const chained = hook('h-chain', 'https', ['Send*Fallback'], { output: [{ when: '404', topic: 'Send*Other' }] });
    const c = chooseChannel('SendInvoiceFallback', 'Invoice', [chained], { tried: ['peppol'] });
    expect(nextSendTopic(c.ok ? c.channel : (undefined as never), 404, 'Invoice')).toBe('SendInvoiceOther');
    // Against a mail hook on the same fallback topic, spec 6.6 decides (party level first).
    const mail = hook('m-both', 'mailto', ['Send*', 'Send*Fallback']);
    const partyHttps = hook('z-party', 'https', ['Send*Fallback'], { partyId: '0106:1' });
    expect(chooseChannel('SendInvoiceFallback', 'Invoice', [mail, partyHttps], { tried: ['peppol'] })).toMatchObject({
      channel: { kind: 'https', hookId: 'z-party' },
    });
  });

  it('sending topics follow the document kind', () => {
    expect(sendTopicOf('Invoice')).toBe('SendInvoice');
    expect(sendTopicOf('CreditNote')).toBe('SendCreditNote');
  });
});
