// The page's one way to make an element: its tag, its attributes (one left undefined is not set)
// and its children.

/** A new `tag` element with the attributes `props` gives (undefined ones skipped) and `children` appended. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) if (value !== undefined) node.setAttribute(name, value);
  node.append(...children);
  return node;
}
