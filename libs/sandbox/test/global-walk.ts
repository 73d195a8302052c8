/**
 * A function, as source text, that describes every property reachable from a realm's global
 * object a few levels deep: evaluated as is in the sandbox and in a plain `node:vm` context, so
 * that the two descriptions compare entry by entry. Plain JavaScript in a string: it must not
 * depend on how the test file is transformed.
 *
 * Each entry is keyed by its path (`globalThis.Date.prototype.getHours`, `[Symbol.iterator]` for
 * symbols, `<get>`/`<set>` for accessors, `<proto>` for the path of an object's prototype) and
 * says: data or accessor, its flags, `typeof`, and for functions `length`, `name` and whether it
 * is a constructor (without calling it); the value of constants (non-writable primitives).
 * Accessors are never called.
 */
export const WALK_SOURCE = String.raw`(function walk(depth) {
  const seen = new Map([[globalThis, "globalThis"]]);
  const out = {};
  const keyName = (key) => (typeof key === "symbol" ? "[" + (key.description || "") + "]" : key);
  const isConstructor = (f) => {
    try {
      Reflect.construct(String, [], f);
      return true;
    } catch {
      return false;
    }
  };
  const queue = [[globalThis, "globalThis", 0]];
  const walked = [];
  while (queue.length > 0) {
    const [object, path, level] = queue.shift();
    walked.push([object, path]);
    for (const key of Reflect.ownKeys(object)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(object, key);
      const at = path + "." + keyName(key);
      const shape = {
        kind: "value" in descriptor ? "data" : "accessor",
        enumerable: descriptor.enumerable,
        configurable: descriptor.configurable,
      };
      out[at] = shape;
      const values = [];
      if ("value" in descriptor) {
        shape.writable = descriptor.writable;
        values.push([descriptor.value, at, shape]);
      } else {
        if (descriptor.get) values.push([descriptor.get, at + "<get>", (out[at + "<get>"] = {})]);
        if (descriptor.set) values.push([descriptor.set, at + "<set>", (out[at + "<set>"] = {})]);
      }
      for (const [value, where, s] of values) {
        s.type = value === null ? "null" : typeof value;
        if (typeof value === "function") {
          s.length = value.length;
          s.name = value.name;
          s.constructible = isConstructor(value);
        }
        if ((typeof value !== "object" || value === null) && typeof value !== "function") {
          if (descriptor.writable === false && typeof value !== "symbol") s.value = String(value);
          continue;
        }
        if (!seen.has(value)) {
          seen.set(value, where);
          if (level + 1 < depth) queue.push([value, where, level + 1]);
        }
      }
    }
  }
  for (const [object, path] of walked) {
    const proto = Object.getPrototypeOf(object);
    out[path + "<proto>"] = proto === null ? "null" : (seen.get(proto) || "?");
  }
  return out;
})`;
