import { tools } from "rewind";

// console output is journaled and compared byte for byte on replay, formatted like Node's.
export default async function main(input: { name: string }) {
  console.log("hello", input.name);
  console.info(
    "%s has %d items costing %i cents (%f) %j %o %%",
    "cart",
    3,
    1299.7,
    12.5,
    { a: 1 },
    [1],
  );
  console.warn("a warning", {
    nested: { deep: { deeper: { deepest: 1 } } },
    list: [1, "two", null],
  });
  console.error(new Error("shown, not thrown"));
  console.debug(undefined, null, true, 12n, Symbol("s"), () => 1, new Date(0), /re/g);
  console.dir({ map: new Map([["k", 1]]), set: new Set([1, 2]) });
  console.assert(1 + 1 === 3, "math is broken");
  await tools.echo({ printed: true });
  console.log("unicode: é 漢字 🎉, tab\tand newline\nsecond line");
  return "printed";
}
