import { z } from "zod";
import { defineRoute, type ResponseDoc, type Route } from "./route.js";
import { ErrorResponse } from "@rewind/contract";

type JsonSchema = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  401: "UNAUTHORIZED: no API token, or an unknown one",
  403: "FORBIDDEN: the token lacks the scope this route needs (x-rewind-scope); the message names it",
  404: "NOT_FOUND: no such run (or webhook endpoint, delivery, …) in this namespace",
  409: "CONFLICT: the run has already ended (or, for a redelivery, its endpoint is disabled)",
  413: "PAYLOAD_TOO_LARGE: the body is larger than the API accepts",
  422: "INVALID_INPUT: a field is missing or wrong; `field` names it",
  429: "LIMIT_EXCEEDED: a limit of the namespace is reached; the message names it, its value and how to raise it",
  500: "SANDBOX_ERROR: the check could not finish (the script took down the process replaying it, which is replaced); the message says why",
  503: "UNAVAILABLE: the store does not answer, or a value is sealed with a payload codec key this process lacks (the message names the key id); retry",
};

/** The OpenAPI 3.1 document of these routes, generated from the zod schemas they validate with. */
export function buildOpenApi(routes: readonly Route[], version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Rewind API",
      version,
      description:
        "Durable execution of TypeScript scripts. Every error is { error: { code, message, field? } } with a code from Rewind's error table.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API token of your namespace" },
      },
      schemas: { Error: jsonSchema(ErrorResponse, "output") },
    },
    paths,
  };
}

function operation(route: Route): JsonSchema {
  const op: JsonSchema = { operationId: route.operationId, summary: route.summary };
  if (route.description !== undefined) op.description = route.description;
  if (route.access !== "public") {
    op.security = [{ bearer: [] }];
    // Which scope the token needs: the same declaration the API enforces.
    op["x-rewind-scope"] = route.access;
    op.description = `${route.description ?? route.summary}\n\nNeeds a token with the \`${route.access}\` scope.`;
  }
  const parameters = [...parametersOf(route.params, "path"), ...parametersOf(route.query, "query")];
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body !== undefined) {
    op.requestBody = {
      required: route.bodyOptional !== true,
      content: { "application/json": { schema: jsonSchema(route.body, "input") } },
    };
  }
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(route.responses)) responses[status] = response(doc);
  // A route that needs a scope may answer 403 (a token without it), whether or not it lists it.
  const errors =
    route.access === "public" || route.errors.includes(403)
      ? route.errors
      : [...route.errors, 403].sort((a, b) => a - b);
  for (const status of errors) {
    responses[String(status)] = {
      description: ERROR_DESCRIPTIONS[status] ?? "An error",
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  op.responses = responses;
  return op;
}

function response(doc: ResponseDoc): JsonSchema {
  const out: JsonSchema = { description: doc.description };
  const content: Record<string, unknown> = {};
  if (doc.schema !== undefined) {
    content[doc.contentType ?? "application/json"] = { schema: jsonSchema(doc.schema, "output") };
  }
  for (const [type, alternative] of Object.entries(doc.alternatives ?? {})) {
    content[type] = { schema: jsonSchema(alternative.schema, "output") };
  }
  if (Object.keys(content).length > 0) out.content = content;
  if (doc.headers !== undefined) {
    out.headers = Object.fromEntries(
      Object.entries(doc.headers).map(([name, description]) => [
        name,
        { description, schema: { type: "string" } },
      ]),
    );
  }
  return out;
}

/** An object schema's fields as OpenAPI parameters (path parameters are always required). */
function parametersOf(schema: z.ZodType | undefined, where: "path" | "query"): JsonSchema[] {
  if (schema === undefined) return [];
  const object = jsonSchema(schema, "input");
  const properties = (object.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((object.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    const parameter: JsonSchema = {
      name,
      in: where,
      required: where === "path" || required.has(name),
      schema: rest,
    };
    if (description !== undefined) parameter.description = description;
    return parameter;
  });
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const generated = z.toJSONSchema(schema, {
    io,
    target: "draft-2020-12",
    unrepresentable: "any",
    override: ({ jsonSchema: json }) => {
      // Responses may gain fields: a client must not be told to refuse unknown ones.
      if (io === "output" && json.additionalProperties === false) delete json.additionalProperties;
      // zod bounds every integer to the safe range; that says nothing to a reader.
      if (json.type === "integer" && json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
      if (json.type === "integer" && json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
    },
  }) as JsonSchema;
  delete generated.$schema; // the document names its dialect once
  return generated;
}

/** GET /v1/openapi.json, over every route the API serves (this one included). */
export function openApiRoute(routes: () => readonly Route[], version: string): Route {
  let document: JsonSchema | undefined;
  return defineRoute({
    method: "GET",
    path: "/v1/openapi.json",
    operationId: "openapi",
    summary: "This document",
    access: "public",
    responses: { 200: { description: "The OpenAPI 3.1 document", schema: z.looseObject({}) } },
    errors: [],
    async handle() {
      return (document ??= buildOpenApi(routes(), version));
    },
  });
}
