import { tools } from "rewind";

// Locale and time zone are pinned (en-US, UTC) unless the script names them.
export default async function main() {
  const at = new Date(Date.UTC(2025, 6, 4, 15, 30));
  const formats = {
    date: at.toLocaleDateString(),
    time: at.toLocaleTimeString(),
    string: at.toString(),
    number: (1234567.891).toLocaleString(),
    german: (1234567.891).toLocaleString("de-DE"),
    currency: new Intl.NumberFormat(undefined, { style: "currency", currency: "EUR" }).format(12.5),
    list: new Intl.ListFormat(undefined, { type: "conjunction" }).format(["a", "b", "c"]),
    plural: new Intl.PluralRules().select(1),
    collated: ["b", "a", "C"].sort(new Intl.Collator().compare),
  };
  await tools.echo(formats);
  return formats;
}
