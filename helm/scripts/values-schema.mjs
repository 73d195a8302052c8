// Writes helm/rewind/values.schema.json. The schema is written as code so that its repeated
// parts (a component's pod settings, a worker's settings) are defined once; helm/test checks
// that the committed file is what this script makes.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const strict = (properties, extra = {}) => ({
  type: "object",
  additionalProperties: false,
  properties,
  ...extra,
});
const text = (description) => ({ type: "string", description });
const int = (description, minimum = 0, maximum) => ({
  type: "integer",
  minimum,
  ...(maximum === undefined ? {} : { maximum }),
  description,
});
const bool = (description) => ({ type: "boolean", description });
// Objects Kubernetes defines (resources, affinity…): checked by the API server, not here.
const k8s = (description) => ({ type: "object", description });
const k8sList = (description) => ({ type: "array", items: { type: "object" }, description });
const map = (description) => ({
  type: "object",
  additionalProperties: { type: "string" },
  description,
});
const port = (description) => int(description, 1, 65535);
const duration = (description) => ({
  type: "string",
  pattern: "^[0-9]+(ms|s|m|h)$",
  description: `${description} (a number and a unit: 90s, 10m, 1h)`,
});
const runtimeName = {
  type: "string",
  enum: ["node20", "node24", "node26"],
  description:
    "a Node runtime of `runtimes`: node20 replays epochs 1-2, node24 epoch 3, node26 epoch 4",
};

const placement = {
  nodeSelector: map("node labels the pods must run on"),
  tolerations: k8sList("Kubernetes tolerations"),
  affinity: k8s("Kubernetes affinity"),
  podAnnotations: map("annotations on the pods"),
};

const autoscaling = strict(
  {
    mode: {
      type: "string",
      enum: ["none", "hpa", "keda"],
      description:
        "none: fixed replicas; hpa: an HPA on the backlog (external metric); keda: a KEDA ScaledObject (can scale to zero)",
    },
    minReplicas: int("the fewest replicas (0 only with keda)"),
    maxReplicas: int("the most replicas", 1),
    targetBacklogPerReplica: int("activations waiting per worker pod the autoscaler aims at", 1),
    prometheusAddress: text(
      "keda: the Prometheus that scrapes the quarantine service's rewind_queue_backlog",
    ),
  },
  {
    // An HPA cannot scale to zero: say so here rather than let the API server refuse it.
    if: { properties: { mode: { const: "hpa" } } },
    then: {
      properties: {
        minReplicas: {
          minimum: 1,
          description: "an HPA needs at least 1 (use mode keda to scale to zero)",
        },
      },
    },
  },
);

const workerSettings = {
  runtime: runtimeName,
  replicas: int("replicas when autoscaling.mode is none"),
  healthPort: port("port of /healthz, /readyz and /metrics"),
  concurrency: int("activations a worker runs at once", 1),
  toolsets: {
    type: "array",
    items: { type: "string", pattern: "\\.(m|c)?js$" },
    description: "JavaScript toolset modules inside the worker image",
  },
  maxHotMb: int("the hot-run cache's bound in MiB", 16),
  leaseMs: int("how long a run stays a worker's without renewal", 500),
  shutdownGraceMs: int(
    "on SIGTERM, how long calls in flight may finish (REWIND_SHUTDOWN_GRACE_MS)",
  ),
  shutdownMarginSeconds: int(
    "seconds added to the grace for the pod's terminationGracePeriodSeconds",
  ),
  resources: k8s("Kubernetes resource requests and limits"),
  podDisruptionBudget: strict({
    enabled: bool("make a PodDisruptionBudget"),
    maxUnavailable: int("pods a voluntary disruption may take at once", 1),
  }),
  autoscaling,
  ...placement,
};

const component = (extra) =>
  strict({
    replicas: int("replicas"),
    resources: k8s("Kubernetes resource requests and limits"),
    terminationGracePeriodSeconds: int("seconds a stopping pod gets"),
    podDisruptionBudget: strict({
      enabled: bool("make a PodDisruptionBudget"),
      minAvailable: int("pods a voluntary disruption must leave"),
    }),
    ...placement,
    ...extra,
  });

const schema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "Rewind's Helm values",
  type: "object",
  // The root is open to what umbrella charts put there (global, and the subchart's `enabled`
  // condition); everything else is this chart's and checked strictly.
  additionalProperties: false,
  properties: {
    global: { type: "object", description: "an umbrella chart's shared values (unused here)" },
    enabled: { type: "boolean", description: "an umbrella chart's condition for this chart" },
    nameOverride: text("replaces the chart's name in object names"),
    fullnameOverride: text("replaces the release-and-chart base name of every object"),
    image: strict({
      repository: { type: "string", minLength: 1, description: "the rewind image's repository" },
      pullPolicy: { type: "string", enum: ["Always", "IfNotPresent", "Never"], description: "when the kubelet pulls the image" },
      runtime: runtimeName,
    }),
    runtimes: strict(
      Object.fromEntries(
        ["node20", "node24", "node26"].map((name) => [
          name,
          strict({ tag: text(`the ${name} image's tag (empty: <appVersion>-${name})`) }),
        ]),
      ),
    ),
    imagePullSecrets: k8sList("Kubernetes image pull secrets"),
    serviceAccount: strict({
      create: bool("make the pods' ServiceAccount"),
      name: text("its name (empty: the release's name)"),
      annotations: map("annotations, e.g. for a cloud identity"),
    }),
    database: strict({ url: text("DATABASE_URL: the journal's Postgres (or use existingSecret)") }),
    redis: strict({
      url: text("REDIS_URL: the doorbell's Redis (or use existingSecret)"),
      prefix: { type: "string", minLength: 1, description: "key prefix of the queues" },
    }),
    existingSecret: text(
      "a Secret with the keys DATABASE_URL and REDIS_URL, instead of database.url and redis.url",
    ),
    blobs: strict({
      url: {
        type: "string",
        pattern: "^(|s3://.+|/.+)$",
        description: "REWIND_BLOB_URL: s3://bucket/prefix, or empty",
      },
      s3: strict({
        endpoint: text("an S3-compatible server (REWIND_S3_ENDPOINT)"),
        region: text("AWS_REGION"),
        existingSecret: text("a Secret with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
      }),
    }),
    env: {
      type: "object",
      additionalProperties: { type: ["string", "number", "boolean"] },
      propertyNames: { pattern: "^[A-Za-z_][A-Za-z0-9_]*$" },
      description: "extra environment variables of every Rewind container",
    },
    envFromSecrets: {
      type: "array",
      items: { type: "string" },
      description: "Secrets whose keys all become environment variables",
    },
    podSecurityContext: k8s("the pods' Kubernetes securityContext"),
    securityContext: k8s("the containers' Kubernetes securityContext"),
    api: component({
      port: port("the API's container port"),
      service: strict({
        type: { type: "string", enum: ["ClusterIP", "NodePort", "LoadBalancer"] },
        port: port("the Service's port"),
        annotations: map("annotations on the Service"),
      }),
    }),
    quarantine: component({
      enabled: bool("run the quarantine service (release and give-up act only when it runs)"),
      healthPort: port("port of /healthz, /readyz and /metrics"),
      pollMs: int("how often it looks for operators' requests", 50),
    }),
    projector: component({
      enabled: bool("run the projector (traces and webhooks are projected only when it runs)"),
      healthPort: port("port of /healthz, /readyz and /metrics"),
      pollMs: int("how often it looks for newly committed entries when caught up", 10),
      publicUrl: text("where webhook payloads' links point: the API as clients reach it"),
      webhooks: strict({
        enabled: bool("deliver the namespaces' webhooks"),
        concurrency: int("deliveries in flight at once", 1),
        disableAfter: {
          type: "string",
          pattern: "^([0-9]+(\\.[0-9]+)?(ms|s|m|h|d|w))+$",
          description: "an endpoint failing every attempt for this long is disabled (5d, 12h)",
        },
        allow: {
          type: "array",
          items: { type: "string", minLength: 1 },
          description:
            "CIDRs, addresses or host names endpoints may reach although private or loopback",
        },
      }),
    }),
    workerDefaults: strict(workerSettings),
    workers: {
      type: "object",
      description: "one worker Deployment per epoch, keyed by the epoch number",
      propertyNames: { pattern: "^[1-9][0-9]*$" },
      additionalProperties: strict(workerSettings, { required: ["runtime"] }),
    },
    migrations: strict({
      enabled: bool("run the migration Job and make the services wait for the schema"),
      backoffLimit: int("retries of the migration Job"),
      resources: k8s("Kubernetes resource requests and limits"),
      waitTimeout: duration("how long a service's init container waits for the schema"),
    }),
    metrics: strict({
      serviceMonitor: strict({
        enabled: bool("make a Prometheus Operator ServiceMonitor"),
        interval: duration("scrape interval"),
        labels: map("labels your Prometheus selects ServiceMonitors by"),
        authorization: strict({
          secretName: text(
            "the Secret holding the scrape token: the API's /metrics needs a token of the `metrics` scope (`rewind token create --scope metrics`, docs/tokens.md)",
          ),
          key: text("its key"),
        }),
      }),
      grafanaDashboards: strict({
        enabled: bool("make the dashboards' ConfigMaps"),
        label: {
          type: "string",
          minLength: 1,
          description: "the label Grafana's sidecar looks for",
        },
        labelValue: text("its value"),
        annotations: map("annotations, e.g. the sidecar's folder"),
      }),
    }),
    ingress: strict({
      enabled: bool("make an Ingress for the API and dashboard"),
      className: text("the IngressClass"),
      host: { type: "string", minLength: 1, description: "the host name" },
      annotations: map("annotations (the defaults turn response buffering off for ingress-nginx)"),
      tls: k8sList("Kubernetes Ingress TLS entries"),
    }),
    networkPolicy: strict({
      enabled: bool("make NetworkPolicies"),
      apiFrom: k8sList("NetworkPolicy peers that may call the API (empty: the namespace's pods)"),
      metricsFrom: k8sList("NetworkPolicy peers that may scrape the metrics ports"),
      workerEgress: k8sList("NetworkPolicy egress rules of workers, the quarantine service and the projector"),
    }),
  },
};

// The chart README's table of values, from the same descriptions and the defaults of values.yaml.
function rows(node, prefix, defaults) {
  const out = [];
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const name = prefix === "" ? key : `${prefix}.${key}`;
    const value = defaults?.[key];
    if (child.properties !== undefined && child.type === "object") {
      out.push(...rows(child, name, value));
      continue;
    }
    const shown = value === undefined ? "" : `\`${JSON.stringify(value)}\``;
    const kind = child.enum ? child.enum.map((e) => `\`${e}\``).join(" \\| ") : (child.type ?? "");
    out.push(`| \`${name}\` | ${kind} | ${shown.replace(/\|/g, "\\|")} | ${child.description ?? ""} |`);
  }
  return out;
}

const chartDir = fileURLToPath(new URL("../rewind/", import.meta.url));
const { parse } = await import("yaml");
const defaults = parse(readFileSync(`${chartDir}values.yaml`, "utf8"));
const table = [
  "| value | type | default | what it is |",
  "|---|---|---|---|",
  ...rows(schema, "", defaults),
  `| \`workers.<epoch>.*\` | object | | any of the \`workerDefaults\` settings, for that epoch's Deployment (\`runtime\` is required) |`,
].join("\n");
const readmePath = `${chartDir}README.md`;
const readme = readFileSync(readmePath, "utf8");
const BEGIN = "<!-- values: made by helm/scripts/values-schema.mjs -->";
const END = "<!-- end of values -->";
const newReadme = `${readme.slice(0, readme.indexOf(BEGIN) + BEGIN.length)}\n${table}\n${readme.slice(readme.indexOf(END))}`;
const schemaPath = `${chartDir}values.schema.json`;
const json = `${JSON.stringify(schema, null, 2)}\n`;
if (process.argv.includes("--check")) {
  for (const [file, wanted] of [
    [schemaPath, json],
    [readmePath, newReadme],
  ]) {
    if (readFileSync(file, "utf8") !== wanted) {
      console.error(`${file} is not what helm/scripts/values-schema.mjs makes: run it and commit the result`);
      process.exit(1);
    }
  }
} else {
  writeFileSync(schemaPath, json);
  writeFileSync(readmePath, newReadme);
}
