/**
 * Every response the API's tests receive, checked against the OpenAPI document the API serves:
 * the document is generated from the same schemas, so a handler answering something else (a
 * field renamed, a status undocumented, a required field left out) fails the test that saw it.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: unknown;
}

export interface ResponseContract {
  /** Throws when `body` is not what the document says `method url` answers with `status`. */
  check(method: string, url: string, status: number, contentType: string, body: string): void;
}

/** `document` is /v1/openapi.json as the API serves it. */
export function responseContract(document: unknown): ResponseContract {
  const doc = document as OpenApiDocument;
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: "doc", components: doc.components }, "doc");
  const routes = Object.entries(doc.paths).map(([template, methods]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    methods,
  }));
  const compiled = new Map<string, ValidateFunction>();
  return {
    check(method, url, status, contentType, body) {
      const pathname = new URL(url, "http://api.test").pathname;
      const route = routes.find((r) => r.pattern.test(pathname));
      // A path the API does not serve (a 404 from the router, the dashboard's files) is not
      // part of the document; the router's own 404 body is still the error shape, below.
      const operation = route?.methods[method.toLowerCase()];
      const what = `${method} ${pathname} answered ${status}`;
      if (operation === undefined) {
        if (status === 404 && contentType.startsWith("application/json")) {
          checkSchema(
            ajv,
            compiled,
            "doc#/components/schemas/Error",
            { $ref: "doc#/components/schemas/Error" },
            what,
            body,
          );
        }
        return;
      }
      const documented = operation.responses[String(status)];
      if (documented === undefined) {
        throw new Error(`${what}, a status /v1/openapi.json does not list for it`);
      }
      const type = contentType.split(";")[0]!.trim();
      if (documented.content === undefined || type !== "application/json") return;
      const schema = documented.content[type]?.schema as { $ref?: string } | undefined;
      if (schema === undefined) {
        throw new Error(`${what} with ${type}, which /v1/openapi.json does not list for it`);
      }
      const key = `${route!.template} ${method} ${status}`;
      checkSchema(
        ajv,
        compiled,
        key,
        schema.$ref ? { $ref: `doc${schema.$ref}` } : schema,
        what,
        body,
      );
    },
  };
}

function checkSchema(
  ajv: Ajv2020,
  compiled: Map<string, ValidateFunction>,
  key: string,
  schema: object,
  what: string,
  body: string,
): void {
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  const value: unknown = body === "" ? undefined : JSON.parse(body);
  if (!validate(value)) {
    throw new Error(
      `${what} with a body /v1/openapi.json does not describe: ${ajv.errorsText(validate.errors)}\n${body.slice(0, 2000)}`,
    );
  }
}
