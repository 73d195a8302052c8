// `node --import ./register.mjs file.ts`: runs TypeScript on Node 20 with no new dependency.
// Types are stripped by esbuild (already in the repo); @rewind/* resolve to their built dist/.
import { register } from "node:module";

register("./ts-hooks.mjs", import.meta.url);
