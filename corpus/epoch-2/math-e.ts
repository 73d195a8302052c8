import { tools } from "rewind";

// Math.E: undefined in epoch 1 (Node 20's isolated-vm contexts), the standard's from epoch 2 on.
export default async function main() {
  const constants = {
    type: typeof Math.E,
    e: Math.E ?? null,
    exp: Math.exp(1),
    rounded: Number.isFinite(Math.E) ? Math.round(Math.E * 1000) : "not a number",
  };
  await tools.echo(constants);
  return constants;
}
