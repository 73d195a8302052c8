// `--import` this into a worker thread to run its TypeScript from source, as vitest runs the
// rest of the workspace: only the replay pool uses it, and only when it was itself loaded from
// src/ (under vitest). A built pool starts its worker from dist/ and needs none of this.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
