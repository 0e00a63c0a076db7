import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LoadedSchematronPack } from '../pack-store';
import { compileProgram, runProgram, type CompiledProgram, type RawAssertion } from './engine';
import { Unsupported } from './model';
import { readSchematronProgram } from './program';

/**
 * The compiled Schematron engine as the validator uses it: a pack's official XSLT read into a program and compiled to
 * closures once per process (on first use), then run on the XDM tree of each document. A pack the compiler cannot
 * handle is marked as such, with the reason, and runs on SaxonJS.
 */

export { buildXdmTree } from './tree';
export type { RawAssertion } from './engine';
export type { XNode } from './model';

export type CompiledPack =
  | { readonly ok: true; readonly programs: readonly CompiledProgram[] }
  | { readonly ok: false; readonly reason: string };

const compiled = new WeakMap<LoadedSchematronPack, CompiledPack>();

/** Compiles a pack's stylesheets (once per loaded pack); `ok: false` with the reason when it cannot. */
export function compiledPack(pack: LoadedSchematronPack): CompiledPack {
  let c = compiled.get(pack);
  if (!c) {
    c = compileStylesheets(
      pack.stylesheets.map((s) => readFileSync(fileURLToPath(s.baseUri), 'utf8')),
      pack.stylesheets.map((s) => s.baseUri),
    );
    compiled.set(pack, c);
  }
  return c;
}

/** `baseUris` (file: URLs of the stylesheets) resolve the code-list documents a pack reads with document(). */
export function compileStylesheets(xslts: readonly string[], baseUris: readonly string[] = []): CompiledPack {
  try {
    return {
      ok: true,
      programs: xslts.map((x, k) => compileProgram(readSchematronProgram(x), { baseUri: baseUris[k] })),
    };
  } catch (e) {
    if (e instanceof Unsupported || (e instanceof Error && e.name === 'XPathError')) {
      return { ok: false, reason: e.message };
    }
    throw e;
  }
}

/** Runs every stylesheet of a compiled pack on one document; throws on a dynamic error (the caller falls back). */
export function runCompiledPack(
  pack: Extract<CompiledPack, { ok: true }>,
  doc: import('./model').XNode,
): RawAssertion[] {
  const out: RawAssertion[] = [];
  for (const p of pack.programs) out.push(...runProgram(p, doc));
  return out;
}
