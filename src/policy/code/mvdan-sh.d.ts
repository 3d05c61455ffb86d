/**
 * The part of mvdan-sh's API (mvdan.cc/sh/v3/syntax, transpiled to JavaScript) that the shell judge uses.
 * @see https://pkg.go.dev/mvdan.cc/sh/v3/syntax
 */
declare module 'mvdan-sh' {
  /** A syntax tree node; its fields depend on `syntax.NodeType(node)`. */
  export type ShNode = Record<string, unknown> & { Lit?: () => string };
  export interface ShParser {
    Parse(src: string, name: string): ShNode;
  }
  export const syntax: {
    NewParser(...options: unknown[]): ShParser;
    Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
    NodeType(node: ShNode): string;
    Variant(lang: unknown): unknown;
    LangBash: unknown;
  };
  const _default: { syntax: typeof syntax };
  export default _default;
}
