import { tools } from "rewind";

// Date as standard JavaScript: own statics, its prototype chain, its name, native methods,
// and local time at UTC whatever the host's TZ and LANG.
export default async function main() {
  const at = new Date(2025, 6, 4, 15, 30);
  const observed = {
    statics: [Object.hasOwn(Date, "parse"), Object.hasOwn(Date, "UTC")],
    chain: Object.getPrototypeOf(Date) === Function.prototype,
    name: Date.name,
    native: String(Date).includes("[native code]"),
    nowConstructible: Object.hasOwn(Date.now, "prototype"),
    local: [at.toISOString(), at.getHours(), at.getTimezoneOffset(), at.toString()],
    parsed: [Date.parse("2025-07-04T15:30"), Date.parse("Jul 4 2025 15:30")],
  };
  await tools.echo(observed);
  return observed;
}
