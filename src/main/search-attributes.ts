import { DELIVERY_SEARCH_ATTRIBUTES } from '../../workflows/contracts/deliver-webhook';
import { DOCUMENT_SEARCH_ATTRIBUTES } from '../../workflows/contracts/search-attributes';
import type { SearchAttributeName } from '../temporal/search-attributes';

/** The custom search attributes a namespace must have for the gateway's runs (the deliveries' when they are tagged). */
export function requiredSearchAttributes(deliveries: boolean): SearchAttributeName[] {
  const all = [...DOCUMENT_SEARCH_ATTRIBUTES, ...(deliveries ? Object.values(DELIVERY_SEARCH_ATTRIBUTES) : [])];
  return all.filter((k, i) => all.findIndex((x) => x.name === k.name) === i);
}
