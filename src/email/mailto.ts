/*
 * The `url` of a mail hook (action `mailto`): an RFC 6068 mailto URI whose addresses may be placeholders filled from
 * the invoice, plus two parameters of ours.
 *
 *   mailto:[receiverEmailAddress]?cc=ap@seller.example&subject=Invoice&fallback=invoices@buyer.example
 *   mailto:billing@buyer.example?attach=pdf,xml
 *
 * - Addresses (the path and `to`, `cc`, `bcc`): plain addresses or the placeholders `[receiverEmailAddress]` (the
 *   buyer's contact e-mail, BT-58, else the buyer's electronic address when its scheme is EM, BT-49) and
 *   `[senderEmailAddress]` (the seller's, BT-43 / BT-34).
 * - `subject`, `body`: the mail's subject and text; `[invoiceNumber]`, `[sellerName]`, `[buyerName]` are filled in.
 * - `fallback`: the address used for `to` when the placeholders there find no address in the invoice.
 * - `attach`: which parts travel, comma-separated from `pdf` (a readable Factur-X PDF/A-3 with the CII embedded),
 *   `xml` (the document as uploaded) and `attachments` (the invoice's embedded supporting documents); default all.
 * Anything else is refused when the hook is written, so a typo never silently changes what is sent.
 */

export const MAIL_PLACEHOLDERS = ['receiverEmailAddress', 'senderEmailAddress'] as const;
export type MailPlaceholder = (typeof MAIL_PLACEHOLDERS)[number];
export const MAIL_PARTS = ['pdf', 'xml', 'attachments'] as const;
export type MailPart = (typeof MAIL_PARTS)[number];

/** One address slot: a literal address or a placeholder filled from the invoice. */
export type AddressTemplate = { address: string } | { placeholder: MailPlaceholder };

export interface MailtoHook {
  to: AddressTemplate[];
  cc: AddressTemplate[];
  bcc: AddressTemplate[];
  subject?: string;
  body?: string;
  fallback?: string;
  attach: ReadonlySet<MailPart>;
}

/** The e-mail addresses an invoice names, as the placeholders read them. */
export type InvoiceAddresses = Partial<Record<MailPlaceholder, string>>;

export interface ResolvedRecipients {
  to: string[];
  cc: string[];
  bcc: string[];
  /** True when `to` is the hook's fallback address because the invoice named none. */
  usedFallback: boolean;
}

export class MailtoError extends Error {}

const MAX_URL_LENGTH = 2048;
const MAX_ADDRESSES = 20;
const PARAMS = new Set(['to', 'cc', 'bcc', 'subject', 'body', 'fallback', 'attach']);

// RFC 5321 dot-atom local part and a host name of two or more labels; letters beyond ASCII allowed (RFC 6531).
const LOCAL_PART = /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const DOMAIN = /^[\p{L}\p{N}]([\p{L}\p{N}-]*[\p{L}\p{N}])?(\.[\p{L}\p{N}]([\p{L}\p{N}-]*[\p{L}\p{N}])?)+$/u;

/**
 * One plain address (local@domain) as a mail server will take it in an envelope: no display name, no group, no
 * quoted local part, no address literal, no CR/LF (header injection).
 */
export function isMailAddress(s: string): boolean {
  const at = s.lastIndexOf('@');
  if (s.length > 254 || at < 1 || at > 64) return false;
  return LOCAL_PART.test(s.slice(0, at)) && DOMAIN.test(s.slice(at + 1));
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new MailtoError(`${what} is not valid percent-encoding`);
  }
}

function addressList(raw: string, what: string): AddressTemplate[] {
  const out: AddressTemplate[] = [];
  for (const item of decode(raw, what).split(',')) {
    const s = item.trim();
    if (!s) continue;
    const placeholder = /^\[([A-Za-z]+)\]$/.exec(s)?.[1];
    if (placeholder !== undefined) {
      if (!(MAIL_PLACEHOLDERS as readonly string[]).includes(placeholder)) {
        throw new MailtoError(`${what}: unknown placeholder [${placeholder}] (known: ${MAIL_PLACEHOLDERS.join(', ')})`);
      }
      out.push({ placeholder: placeholder as MailPlaceholder });
    } else if (isMailAddress(s)) {
      out.push({ address: s });
    } else {
      throw new MailtoError(`${what}: "${s}" is not an e-mail address`);
    }
  }
  return out;
}

/** Parses and checks a mail hook's URL; throws MailtoError with the reason. */
export function parseMailtoUrl(url: string): MailtoHook {
  if (url.length > MAX_URL_LENGTH) throw new MailtoError(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  if (/[\r\n\0]/.test(url)) throw new MailtoError('the URL contains a line break or NUL');
  const m = /^mailto:([^?#]*)(?:\?([^#]*))?$/i.exec(url);
  if (!m) throw new MailtoError('not a mailto: URL (mailto:<addresses>?<parameters>, no fragment)');
  const hook: MailtoHook = {
    to: addressList(m[1] ?? '', 'the address part'),
    cc: [],
    bcc: [],
    attach: new Set(MAIL_PARTS),
  };
  const seen = new Set<string>();
  for (const pair of (m[2] ?? '').split('&').filter((p) => p.length > 0)) {
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq), 'a parameter name').toLowerCase();
    const value = eq === -1 ? '' : pair.slice(eq + 1);
    if (!PARAMS.has(name)) throw new MailtoError(`unknown parameter "${name}" (known: ${[...PARAMS].join(', ')})`);
    if (seen.has(name)) throw new MailtoError(`parameter "${name}" is given twice`);
    seen.add(name);
    if (name === 'to' || name === 'cc' || name === 'bcc') {
      hook[name].push(...addressList(value, `parameter ${name}`));
    } else if (name === 'subject' || name === 'body') {
      const text = decode(value, `parameter ${name}`);
      if (name === 'subject' && /[\r\n]/.test(text)) throw new MailtoError('the subject contains a line break');
      hook[name] = text;
    } else if (name === 'fallback') {
      const address = decode(value, 'parameter fallback').trim();
      if (!isMailAddress(address)) throw new MailtoError(`parameter fallback: "${address}" is not an e-mail address`);
      hook.fallback = address;
    } else {
      const parts = decode(value, 'parameter attach')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      const unknown = parts.filter((p) => !(MAIL_PARTS as readonly string[]).includes(p));
      if (unknown.length > 0 || parts.length === 0) {
        throw new MailtoError(`parameter attach: use a list of ${MAIL_PARTS.join(', ')}`);
      }
      hook.attach = new Set(parts as MailPart[]);
    }
  }
  if (hook.to.length === 0) throw new MailtoError('no recipient: give an address or a placeholder before "?"');
  if (hook.to.length + hook.cc.length + hook.bcc.length > MAX_ADDRESSES) {
    throw new MailtoError(`more than ${MAX_ADDRESSES} addresses`);
  }
  return hook;
}

function fill(list: readonly AddressTemplate[], found: InvoiceAddresses): string[] {
  const out: string[] = [];
  for (const slot of list) {
    const address = 'address' in slot ? slot.address : found[slot.placeholder];
    if (address && isMailAddress(address) && !out.includes(address)) out.push(address);
  }
  return out;
}

/**
 * The addresses a mail for this invoice goes to, or the reason it cannot go anywhere. An address the invoice names but
 * that is not a plain e-mail address counts as none (never passed on to the mail server).
 */
export function resolveRecipients(hook: MailtoHook, found: InvoiceAddresses): ResolvedRecipients | { missing: string } {
  let to = fill(hook.to, found);
  let usedFallback = false;
  if (to.length === 0 && hook.fallback) {
    to = [hook.fallback];
    usedFallback = true;
  }
  if (to.length === 0) {
    const wanted = hook.to.map((s) => ('address' in s ? s.address : `[${s.placeholder}]`)).join(', ');
    return {
      missing: `no e-mail address to send to: the invoice names none for ${wanted} and the hook has no fallback`,
    };
  }
  return { to, cc: fill(hook.cc, found), bcc: fill(hook.bcc, found), usedFallback };
}
