import { corpusFile } from '../corpus';
import { parseHeaderBlock } from '../../../src/peppol/as4/mime';

/** A wire dump (`.as4in` / `.as4out`): HTTP or MIME headers, a blank line, then the body, as phase4 writes them. */
export function readDump(relative: string): { headers: Record<string, string>; body: Buffer } {
  const raw = corpusFile(relative);
  let end = raw.indexOf('\r\n\r\n');
  let skip = 4;
  const lf = raw.indexOf('\n\n');
  if (end < 0 || (lf >= 0 && lf < end)) {
    end = lf;
    skip = 2;
  }
  return { headers: parseHeaderBlock(raw.subarray(0, end).toString('latin1')), body: raw.subarray(end + skip) };
}
