import type { z } from "zod";
import { compileScript } from "@rewind/sandbox";
import { CompileScriptBody, CompiledScriptView } from "@rewind/contract";
import { defineRoute } from "../route.js";

/**
 * Compiles a script sent as text (the dashboard's paste box, an upload of several files) with
 * the same compiler `rewind run` uses. It reads no file of the server: imports resolve among the
 * submitted files and "rewind" only (libs/sandbox/src/submitted-files.ts). Nothing is stored:
 * the answer is passed on to a start, fork or replay check, which stores it by its hash.
 */
export const compileSubmittedScript = defineRoute({
  method: "POST",
  path: "/v1/scripts/compile",
  operationId: "compileScript",
  summary: 'Compile a script sent as source files (imports only among them and "rewind")',
  access: "run",
  body: CompileScriptBody,
  responses: {
    200: { description: "The compiled script, with its source map", schema: CompiledScriptView },
  },
  errors: [401, 403, 413, 422, 503],
  async handle({ body }) {
    const compiled = await compileScript({ entry: body.entry, files: body.files });
    return {
      hash: compiled.hash,
      entry: compiled.entry,
      code: compiled.code,
      sourceMap: compiled.sourceMap,
    } satisfies z.input<typeof CompiledScriptView>;
  },
});
