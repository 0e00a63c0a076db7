// The part of the SaxonJS 2 API the validator uses (the package ships no type declarations).
declare module 'saxon-js' {
  /** A node of SaxonJS's own tree; read through the DOM-like accessors below or XPath.evaluate. */
  interface SaxonNode {
    nodeType: number;
    localName?: string;
    getAttribute(name: string): string | null;
  }
  interface TransformOptions {
    stylesheetInternal: unknown;
    stylesheetBaseURI?: string;
    sourceNode?: SaxonNode;
    destination: 'document' | 'raw' | 'serialized';
  }
  interface TransformResult {
    principalResult: SaxonNode;
  }
  const SaxonJS: {
    transform(options: TransformOptions): TransformResult;
    getResource(options: { text: string; type: 'xml' }): Promise<SaxonNode>;
    XPath: {
      evaluate(
        expression: string,
        context: SaxonNode,
        options?: { resultForm?: 'array' | 'iterator'; namespaceContext?: Record<string, string> },
      ): unknown;
    };
  };
  export = SaxonJS;
}
