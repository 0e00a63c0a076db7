import type { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import {
  DocumentIdAttribute,
  NextAttemptOnAttribute,
  TenantIdAttribute,
} from '../../workflows/contracts/search-attributes';
import { DELIVERY_SEARCH_ATTRIBUTES } from '../../workflows/contracts/deliver-webhook';

/** The custom search attributes a namespace must have for the gateway's runs (registered by name). */
export function requiredSearchAttributes(deliveries: boolean): Array<SearchAttributeKey<SearchAttributeType>> {
  const all = [
    TenantIdAttribute,
    DocumentIdAttribute,
    NextAttemptOnAttribute,
    ...(deliveries ? Object.values(DELIVERY_SEARCH_ATTRIBUTES) : []),
  ];
  return all.filter((k, i) => all.findIndex((x) => x.name === k.name) === i);
}

/** What listing a namespace's search attributes needs (a worker's NativeConnection or a client's Connection). */
export interface SearchAttributeLister {
  operatorService: {
    listSearchAttributes(request: {
      namespace: string;
    }): Promise<{ customAttributes?: Record<string, unknown> | null }>;
  };
}

/**
 * The attributes of `required` the namespace lacks. A run that sets an unregistered attribute fails its workflow
 * task over and over (an invoice waiting between attempts would never go on), so processes check before they work.
 */
export async function missingSearchAttributes(
  connection: SearchAttributeLister,
  namespace: string,
  required: ReadonlyArray<SearchAttributeKey<SearchAttributeType>>,
): Promise<string[]> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(listed.customAttributes ?? {}));
  return required.filter((k) => !have.has(k.name)).map((k) => `${k.name} (${k.type})`);
}
