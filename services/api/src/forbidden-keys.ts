/**
 * Where a JSON body holds a key the API refuses (`__proto__`, or `constructor` holding
 * `prototype`), as a field path like `body.input.user.__proto__`; undefined when it holds none
 * (or is not JSON at all). Only called once the fast parser refused the body, so the second parse
 * costs nothing on the usual path. JSON.parse makes `__proto__` an own property, so reading it
 * here is safe.
 */
export function forbiddenKey(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Iterative, depth-first: a deeply nested body must not overflow this stack.
  const stack: [unknown, string][] = [[value, "body"]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}.${i}`]);
      continue;
    }
    const record = node as Record<string, unknown>;
    if (Object.hasOwn(record, "__proto__")) return `${path}.__proto__`;
    const ctor = Object.hasOwn(record, "constructor") ? record.constructor : undefined;
    if (ctor !== null && typeof ctor === "object" && Object.hasOwn(ctor, "prototype"))
      return `${path}.constructor.prototype`;
    for (const key of Object.keys(record).reverse()) stack.push([record[key], `${path}.${key}`]);
  }
  return undefined;
}
