/**
 * Builds elements. Children given as strings become text nodes: everything the API says is
 * inserted as text, never parsed as HTML, so a run id or a tool's arguments cannot inject markup.
 */
export type Child = Node | string | number | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Readonly<Record<string, string>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) element.setAttribute(name, value);
  element.append(...texts(children));
  return element;
}

/** Replaces an element's children. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(...texts(children));
}

function texts(children: Child[]): Node[] {
  const nodes: Node[] = [];
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    nodes.push(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  return nodes;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null)
    throw new Error(`The page has no #${id}: index.html and the scripts disagree`);
  return element as T;
}

/** A time as the operator's clock shows it, with the exact instant on hover. */
export function when(iso: string): HTMLTimeElement {
  const date = new Date(iso);
  const time = el(
    "time",
    { title: iso },
    Number.isNaN(date.getTime()) ? iso : date.toLocaleString(),
  );
  time.dateTime = iso;
  return time;
}
