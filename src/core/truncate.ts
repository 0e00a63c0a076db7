/**
 * Bounds for text taken from a document (or a request) and repeated back in an error message, a status record or an
 * event. A hostile document can carry a megabyte-long element name or value; echoed verbatim it would grow every
 * record and event that quotes it. Pure and workflow-safe.
 */

/** Longest single value quoted from a document: an element name, a namespace, an identifier, a field value. */
export const ECHO_MAX_CHARS = 200;

/** Longest whole message that may contain echoed values (rule texts and hints around them stay readable). */
export const ECHO_MESSAGE_MAX_CHARS = 2000;

const ELLIPSIS = '…';

/**
 * `value` itself when it has at most `max` characters (UTF-16 code units), else its start and an ellipsis, `max`
 * characters in all. Never splits a surrogate pair.
 */
export function truncateForEcho(value: string, max: number = ECHO_MAX_CHARS): string {
  if (value.length <= max) return value;
  if (max <= ELLIPSIS.length) return ELLIPSIS.slice(0, Math.max(0, max));
  let end = max - ELLIPSIS.length;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${value.slice(0, end)}${ELLIPSIS}`;
}

/** A message bounded as a whole, for texts that may quote document content somewhere inside. */
export function truncateMessage(message: string): string {
  return truncateForEcho(message, ECHO_MESSAGE_MAX_CHARS);
}

/**
 * Every single-quoted segment (`'…'`) of a message bounded to `max` characters, then the message as a whole: for
 * messages of XML tools (libxml2 quotes element names and values that way), where the quoted part is the echo.
 */
export function truncateQuoted(message: string, max: number = ECHO_MAX_CHARS): string {
  return truncateMessage(message.replace(/'([^']*)'/g, (_whole, inner: string) => `'${truncateForEcho(inner, max)}'`));
}
