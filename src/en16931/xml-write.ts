import { escapeAttr, escapeText } from '../formats/xml/helpers';

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

function attributeList(attrs: Record<string, string | undefined> | undefined): Array<[string, string]> {
  const a: Array<[string, string]> = [];
  for (const k in attrs) {
    const v = attrs[k];
    if (v !== undefined) a.push([k, v]);
  }
  return a;
}

export function el(
  name: string,
  attrs?: Record<string, string | undefined>,
  ...children: Array<Child | Child[]>
): XmlElement {
  const a = attributeList(attrs);
  // Plain loops rather than flat(): the writers build every element through here.
  const kids: XmlElement[] = [];
  for (const c of children) {
    if (Array.isArray(c)) {
      for (const d of c) if (d) kids.push(d);
    } else if (c) kids.push(c);
  }
  return { name, attrs: a, children: kids };
}

/** A leaf with text; undefined value → nothing written. */
export function leaf(
  name: string,
  value: string | undefined,
  attrs?: Record<string, string | undefined>,
): XmlElement | undefined {
  if (value === undefined) return undefined;
  // Built directly: writers make one leaf per value, and el()'s child handling has nothing to do here.
  return { name, attrs: attributeList(attrs), children: [value] };
}

/** A container that is only written when it has children. */
export function group(
  name: string,
  attrs: Record<string, string | undefined>,
  ...children: Array<Child | Child[]>
): XmlElement | undefined {
  const e = el(name, attrs, ...children);
  return e.children.length > 0 ? e : undefined;
}

const PADS: string[] = [];
function padFor(depth: number): string {
  let p = PADS[depth];
  if (p === undefined) PADS[depth] = p = '  '.repeat(depth);
  return p;
}

function onlyText(children: Array<XmlElement | string>): boolean {
  for (const c of children) if (typeof c !== 'string') return false;
  return true;
}

export function serialize(root: XmlElement): string {
  // One string grown by appending: V8 keeps it as a rope and flattens it once, cheaper than an array of pieces.
  let out = '<?xml version="1.0" encoding="UTF-8"?>\n';
  const write = (e: XmlElement, depth: number): void => {
    const pad = padFor(depth);
    out += pad + '<' + e.name;
    const attrs = e.attrs;
    for (let k = 0; k < attrs.length; k++) {
      const [name, value] = attrs[k] as [string, string];
      out += ' ' + name + '="' + escapeAttr(value) + '"';
    }
    const children = e.children;
    if (children.length === 0) {
      out += '/>\n';
      return;
    }
    if (onlyText(children)) {
      out += '>';
      for (const c of children) out += escapeText(c as string);
      out += '</' + e.name + '>\n';
      return;
    }
    out += '>\n';
    for (const c of children) {
      if (typeof c === 'string') out += pad + '  ' + escapeText(c) + '\n';
      else write(c, depth + 1);
    }
    out += pad + '</' + e.name + '>\n';
  };
  write(root, 0);
  return out;
}

/** ISO date → CII format 102. */
export function to102(d: string): string {
  return d.replace(/-/g, '');
}
