/** A search attribute as a namespace registers it: its name and type. */
export interface SearchAttributeName {
  readonly name: string;
  readonly type: string;
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
  required: readonly SearchAttributeName[],
): Promise<string[]> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(listed.customAttributes ?? {}));
  return required.filter((k) => !have.has(k.name)).map((k) => `${k.name} (${k.type})`);
}
