// Builds the JSON schemas kubeconform validates the chart's manifests against, offline, from
// pinned sources that the Go module proxy serves (scripts/install-tools.sh downloads them):
// - Kubernetes' own OpenAPI document (k8s.io/kubernetes/api/openapi-spec/swagger.json) for each
//   Kubernetes version in KUBERNETES_VERSIONS;
// - the CustomResourceDefinitions of KEDA (ScaledObject) and the Prometheus Operator
//   (ServiceMonitor), from their modules' config folders.
// Every schema is standalone (references inlined) and strict (an object with listed properties
// admits no other: a misspelt field fails instead of being dropped by the API server).
//
// Usage: node helm/scripts/k8s-schemas.mjs <GOMODCACHE> <out-dir>
// Writes <out-dir>/<k8s version>/<kind>-<group>-<version>.json and <out-dir>/crds/… the same way.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { KUBERNETES_VERSIONS, CRD_SOURCES } from "./pins.mjs";

const INT_OR_STRING = { oneOf: [{ type: "string" }, { type: "integer" }] };
const QUANTITY = { oneOf: [{ type: "string" }, { type: "number" }] };
const SPECIAL = {
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING,
  "io.k8s.apimachinery.pkg.api.resource.Quantity": QUANTITY,
};

/** Inlines `#/definitions/…` references; a reference back into its own ancestry becomes `{}`. */
function inline(schema, definitions, ancestry = []) {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, definitions, ancestry));
  if (schema === null || typeof schema !== "object") return schema;
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/definitions/", "");
    if (SPECIAL[name] !== undefined) return SPECIAL[name];
    if (ancestry.includes(name)) return {};
    const target = definitions[name];
    if (target === undefined) throw new Error(`unresolved reference ${schema.$ref}`);
    const { $ref: _ref, ...rest } = schema;
    return { ...inline(target, definitions, [...ancestry, name]), ...rest };
  }
  const out = {};
  for (const [key, value] of Object.entries(schema))
    out[key] = inline(value, definitions, ancestry);
  return out;
}

/** Objects with listed properties admit no others, unless the source says they may. */
function strict(schema) {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== "object") return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema))
    out[key] = key === "properties" ? mapValues(value, strict) : strict(value);
  if (schema["x-kubernetes-int-or-string"] === true)
    return { ...INT_OR_STRING, description: schema.description };
  if (
    out.properties !== undefined &&
    out.additionalProperties === undefined &&
    schema["x-kubernetes-preserve-unknown-fields"] !== true
  )
    out.additionalProperties = false;
  return out;
}

const mapValues = (object, f) =>
  Object.fromEntries(Object.entries(object).map(([k, v]) => [k, f(v)]));

// kubeconform's template names a core resource's group by its version (apiVersion "v1": Group
// "v1"), so core schemas are <kind>-v1-v1.json.
const fileName = (kind, group, version) =>
  `${kind.toLowerCase()}-${(group || version).toLowerCase()}-${version.toLowerCase()}.json`;

function write(dir, name, schema) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, name),
    JSON.stringify({ $schema: "http://json-schema.org/draft-07/schema#", ...schema }),
  );
}

function kubernetes(modCache, outDir) {
  for (const version of KUBERNETES_VERSIONS) {
    const swagger = JSON.parse(
      readFileSync(
        path.join(modCache, `k8s.io/kubernetes@v${version}/api/openapi-spec/swagger.json`),
        "utf8",
      ),
    );
    let count = 0;
    for (const [name, definition] of Object.entries(swagger.definitions)) {
      for (const gvk of definition["x-kubernetes-group-version-kind"] ?? []) {
        const schema = strict(inline(definition, swagger.definitions, [name]));
        write(path.join(outDir, version), fileName(gvk.kind, gvk.group, gvk.version), schema);
        count++;
      }
    }
    console.log(`kubernetes ${version}: ${count} schemas`);
  }
}

function crds(modCache, outDir) {
  for (const { module, files } of CRD_SOURCES) {
    for (const file of files) {
      const text = readFileSync(path.join(modCache, module, file), "utf8");
      for (const document of parseAllDocuments(text)) {
        const crd = document.toJS();
        if (crd?.kind !== "CustomResourceDefinition") continue;
        for (const version of crd.spec.versions) {
          const schema = version.schema?.openAPIV3Schema;
          if (schema === undefined) continue;
          write(
            path.join(outDir, "crds"),
            fileName(crd.spec.names.kind, crd.spec.group, version.name),
            strict(schema),
          );
          console.log(`crd ${crd.spec.group}/${version.name} ${crd.spec.names.kind}`);
        }
      }
    }
  }
}

const [modCache, outDir] = process.argv.slice(2);
if (modCache === undefined || outDir === undefined) {
  console.error("usage: node helm/scripts/k8s-schemas.mjs <GOMODCACHE> <out-dir>");
  process.exit(2);
}
kubernetes(modCache, outDir);
crds(modCache, outDir);
