/**
 * A minimal XML writer for the syntax writers: elements are built as a tree and serialised once. Text and attribute
 * values are escaped; elements whose value is undefined are not written, so optional terms disappear cleanly.
 */

export interface XmlElement {
  name: string;
  attrs: Array<[string, string]>;
  children: Array<XmlElement | string>;
}

export type Child = XmlElement | undefined | null | false;

export function el(name: string, attrs: Record<string, string | undefined> = {}, ...children: Array<Child | Child[]>): XmlElement {
  const a: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) a.push([k, v]);
  const kids: XmlElement[] = [];
  for (const c of children.flat()) if (c) kids.push(c);
  return { name, attrs: a, children: kids };
}

/** A leaf with text; undefined value → nothing written. */
export function leaf(name: string, value: string | undefined, attrs: Record<string, string | undefined> = {}): XmlElement | undefined {
  if (value === undefined) return undefined;
  const e = el(name, attrs);
  e.children.push(value);
  return e;
}

/** A container that is only written when it has children. */
export function group(name: string, attrs: Record<string, string | undefined>, ...children: Array<Child | Child[]>): XmlElement | undefined {
  const e = el(name, attrs, ...children);
  return e.children.length > 0 ? e : undefined;
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;');
}

function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;');
}

export function serialize(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  const write = (e: XmlElement, depth: number): void => {
    const pad = '  '.repeat(depth);
    out.push(pad, '<', e.name);
    for (const [k, v] of e.attrs) out.push(' ', k, '="', escapeAttr(v), '"');
    if (e.children.length === 0) {
      out.push('/>\n');
      return;
    }
    if (e.children.every((c) => typeof c === 'string')) {
      out.push('>', ...e.children.map((c) => escapeText(c)), '</', e.name, '>\n');
      return;
    }
    out.push('>\n');
    for (const c of e.children) {
      if (typeof c === 'string') out.push(pad, '  ', escapeText(c), '\n');
      else write(c, depth + 1);
    }
    out.push(pad, '</', e.name, '>\n');
  };
  write(root, 0);
  return out.join('');
}

/** ISO date → CII format 102. */
export function to102(d: string): string {
  return d.replace(/-/g, '');
}
