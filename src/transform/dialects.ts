import { readSvefaktura } from '../en16931/svefaktura-reader';
import { registerFormatReader } from './codecs';
import { PINT_BILLING_SOURCES, readPint } from './pint';
import { readSetu } from './setu';

/** Readers for dialects whose syntax (UBL 1.0) or content (PINT, SETU) needs more than the plain UBL 2.1 reader. */
registerFormatReader(['svefaktura-1.0'], (doc) => readSvefaktura(doc));
registerFormatReader(PINT_BILLING_SOURCES, readPint);
registerFormatReader(['setu-invoice-ubl'], (doc) => readSetu(doc));
