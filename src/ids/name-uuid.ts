import { createHash } from 'node:crypto';

/**
 * A name-based UUID (RFC 9562 version 5: SHA-1 of namespace + name). The name is the JSON array of the parts, which
 * cannot be confused for another list the way a joined string could ("a:b" + "c" vs "a" + "b:c"). Same parts, same id:
 * a retried step finds what an earlier try wrote instead of writing it twice.
 */
export function nameBasedUuid(namespace: string, parts: readonly string[]): string {
  return uuidV5(namespace, JSON.stringify(parts.map(String)));
}

/**
 * RFC 9562 version 5 UUID of `name` (UTF-8) in `namespace`, for identifiers whose name string a specification fixes
 * (the Peppol TDD Invoice UUID); our own ids use nameBasedUuid.
 */
export function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (ns.length !== 16) throw new Error(`namespace ${namespace} is not a UUID`);
  const b = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest().subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x50;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
