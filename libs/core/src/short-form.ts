/**
 * A one-line, human-sized rendering of a value for reports and tables: long strings and
 * collections cut, byte arrays shown by length (a serialised Uint8Array is an object with keys
 * "0", "1", …; a plain array of bytes is shown the same way when it is long).
 */
export function shortForm(value: unknown, budget = 80): string {
  const text = render(value, 0);
  return text.length <= budget ? text : `${text.slice(0, budget - 1)}…`;
}

const MAX_STRING = 40;
const MAX_ITEMS = 6;

function render(value: unknown, depth: number): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value);
    case "number":
    case "boolean":
      return String(value);
    case "undefined":
      return "undefined";
    case "object":
      break;
    case "bigint":
      return `${value}n`;
    default:
      return typeof value; // a function or symbol: not data
  }
  if (Array.isArray(value)) {
    if (value.length > 16 && value.every(isByte)) return `<${value.length} bytes>`;
    if (depth > 2) return `[…${value.length}]`;
    const items = value.slice(0, MAX_ITEMS).map((item) => render(item, depth + 1));
    if (value.length > MAX_ITEMS) items.push(`…${value.length - MAX_ITEMS} more`);
    return `[${items.join(", ")}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (
    keys.length > 0 &&
    keys.every((key, i) => key === String(i)) &&
    keys.every((k) => isByte(record[k]))
  ) {
    return `<${keys.length} bytes>`;
  }
  if (depth > 2) return "{…}";
  const items = keys
    .slice(0, MAX_ITEMS)
    .map(
      (key) =>
        `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}: ${render(record[key], depth + 1)}`,
    );
  if (keys.length > MAX_ITEMS) items.push(`…${keys.length - MAX_ITEMS} more`);
  return items.length === 0 ? "{}" : `{ ${items.join(", ")} }`;
}

function isByte(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 255;
}
