// The Helm chart, rendered by the pinned Helm and validated offline by kubeconform against the
// Kubernetes API schemas of two supported versions and the KEDA and Prometheus Operator CRDs.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  CHART,
  EXAMPLES,
  REPO,
  byKind,
  find,
  kubeconform,
  lint,
  render,
  requireTools,
  tools,
  type K8sObject,
  type Rendered,
} from "./helm.js";

const examples = readdirSync(EXAMPLES)
  .filter((file) => file.endsWith(".yaml"))
  .sort();
const cases: { name: string; valuesFiles: string[] }[] = [
  { name: "default values", valuesFiles: [] },
  ...examples.map((file) => ({ name: file, valuesFiles: [path.join(EXAMPLES, file)] })),
];

beforeAll(requireTools);

describe("the chart renders and validates", () => {
  it.each(cases)("helm lint --strict: $name", ({ valuesFiles }) => {
    const result = lint({ valuesFiles });
    expect(result.output).toContain("0 chart(s) failed");
    expect(result.status).toBe(0);
  });

  it.each(cases)("kubeconform -strict on every supported Kubernetes: $name", ({ valuesFiles }) => {
    const rendered = render({ valuesFiles });
    expect(rendered.objects.length).toBeGreaterThan(0);
    for (const version of tools.kubernetesVersions) {
      const report = kubeconform(rendered.yaml, version);
      // Nothing skipped: a manifest without a schema is an error, never ignored.
      expect({
        version,
        ...report,
        output: report.invalid + report.errors > 0 ? report.output : "",
      }).toMatchObject({
        invalid: 0,
        errors: 0,
        skipped: 0,
        output: "",
      });
      expect(report.valid).toBe(rendered.objects.length);
    }
  });

  it("kubeconform does catch a misspelt field (the strict schemas are strict)", () => {
    const rendered = render({ valuesFiles: [path.join(EXAMPLES, "keda.yaml")] });
    const broken = rendered.yaml
      .replace("readinessProbe:", "readinesProbe:")
      .replace("minReplicaCount:", "minReplicas:");
    const report = kubeconform(broken, tools.kubernetesVersions[0]!);
    expect(report.invalid).toBeGreaterThanOrEqual(2);
    expect(report.output).toMatch(/readinesProbe/);
    expect(report.output).toMatch(/minReplicas/);
  });
});

describe("what the manifests say", () => {
  let twoEpochs: Rendered;
  let keda: Rendered;
  beforeAll(() => {
    twoEpochs = render({ valuesFiles: [path.join(EXAMPLES, "two-epochs.yaml")] });
    keda = render({ valuesFiles: [path.join(EXAMPLES, "keda.yaml")] });
  });

  const containers = (rendered: Rendered) =>
    [...byKind(rendered, "Deployment"), ...byKind(rendered, "Job")].flatMap((o) => [
      ...((o.spec.template.spec.initContainers ?? []) as Container[]),
      ...(o.spec.template.spec.containers as Container[]),
    ]);

  it("one worker Deployment per epoch, on the image of the runtime that replays it", () => {
    const one = find(twoEpochs, "Deployment", "rw-rewind-worker-epoch-1");
    const three = find(twoEpochs, "Deployment", "rw-rewind-worker-epoch-3");
    const image = (d: K8sObject) => (d.spec.template.spec.containers[0] as Container).image;
    expect(image(one)).toBe("rewind:0.1.0-node20");
    expect(image(three)).toBe("rewind:0.1.0-node24");
    expect(env(one.spec.template.spec.containers[0]).REWIND_EPOCHS).toBe("1");
    expect(env(three.spec.template.spec.containers[0]).REWIND_EPOCHS).toBe("3");
    expect(one.spec.template.spec.containers[0].args).toEqual([
      "worker",
      "--concurrency",
      "64",
      "--toolset",
      "/app/toolsets/shop.js",
    ]);
    // The API and the quarantine service run the newest runtime.
    expect(image(find(twoEpochs, "Deployment", "rw-rewind-api"))).toBe("rewind:0.1.0-node24");
  });

  it("a worker's grace period is its shutdown grace plus the margin", () => {
    const worker = find(twoEpochs, "Deployment", "rw-rewind-worker-epoch-3");
    expect(env(worker.spec.template.spec.containers[0]).REWIND_SHUTDOWN_GRACE_MS).toBe("20000");
    expect(worker.spec.template.spec.terminationGracePeriodSeconds).toBe(30);
    const custom = render({
      values: {
        existingSecret: "x",
        workers: { "3": { runtime: "node24", shutdownGraceMs: 45_500 } },
      },
    });
    expect(
      find(custom, "Deployment", "rw-rewind-worker-epoch-3").spec.template.spec
        .terminationGracePeriodSeconds,
    ).toBe(56);
  });

  it("every container is non-root, read-only, and probed on /readyz and /healthz", () => {
    for (const rendered of [twoEpochs, keda]) {
      for (const deployment of byKind(rendered, "Deployment")) {
        const pod = deployment.spec.template.spec;
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
        const main = pod.containers[0] as Container;
        expect(main.readinessProbe?.httpGet?.path).toBe("/readyz");
        expect(main.livenessProbe?.httpGet?.path).toBe("/healthz");
      }
      for (const container of containers(rendered)) {
        expect(container.securityContext).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
        });
        expect(container.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
      }
    }
  });

  it("KEDA scales each epoch's workers on its backlog, from zero, and never beside an HPA", () => {
    const scaled = byKind(keda, "ScaledObject");
    expect(scaled.map((s) => s.spec.scaleTargetRef.name).sort()).toEqual([
      "rw-rewind-worker-epoch-3",
      "rw-rewind-worker-epoch-4",
    ]);
    expect(byKind(keda, "HorizontalPodAutoscaler")).toEqual([]);
    const three = scaled.find((s) => s.metadata.name.endsWith("epoch-3"))!;
    expect(three.spec.minReplicaCount).toBe(0);
    expect(three.spec.triggers[0].metadata.query).toBe(
      'max(rewind_queue_backlog{epoch="3",namespace="rewind"})',
    );
    // Scaled Deployments leave replicas to the autoscaler.
    expect(find(keda, "Deployment", "rw-rewind-worker-epoch-3").spec.replicas).toBeUndefined();
    const hpa = render({ valuesFiles: [path.join(EXAMPLES, "hpa.yaml")] });
    expect(byKind(hpa, "ScaledObject")).toEqual([]);
    expect(
      byKind(hpa, "HorizontalPodAutoscaler")[0]!.spec.metrics[0].external.metric.selector,
    ).toEqual({
      matchLabels: { epoch: "3" },
    });
  });

  it("the ServiceMonitor scrapes every process, the Ingress streams, dashboards reach Grafana", () => {
    const observed = render({ valuesFiles: [path.join(EXAMPLES, "observability.yaml")] });
    const monitor = byKind(observed, "ServiceMonitor")[0]!;
    expect(monitor.spec.endpoints.map((e: { port: string }) => e.port)).toEqual([
      "http",
      "metrics",
    ]);
    expect(monitor.spec.endpoints[0].authorization.credentials).toEqual({
      name: "rewind-metrics",
      key: "token",
    });
    const selected = byKind(observed, "Service").filter(
      (s) => s.metadata.labels?.["rewind.dev/metrics"] === "true",
    );
    expect(selected.map((s) => s.metadata.name).sort()).toEqual([
      "rw-rewind-api",
      "rw-rewind-projector-metrics",
      "rw-rewind-quarantine-metrics",
      "rw-rewind-worker-epoch-3-metrics",
    ]);
    const ingress = byKind(observed, "Ingress")[0]!;
    expect(ingress.metadata.annotations?.["nginx.ingress.kubernetes.io/proxy-buffering"]).toBe(
      "off",
    );
    const dashboards = byKind(observed, "ConfigMap").filter(
      (c) => c.metadata.labels?.grafana_dashboard === "1",
    );
    const sources = readdirSync(path.join(REPO, "deploy/grafana")).filter((f) =>
      f.endsWith(".json"),
    );
    expect(dashboards.length).toBe(sources.length);
    for (const configMap of dashboards) {
      const [file, json] = Object.entries(configMap.data!)[0]!;
      expect(JSON.parse(json)).toEqual(
        JSON.parse(readFileSync(path.join(REPO, "deploy/grafana", file), "utf8")),
      );
    }
    expect(byKind(observed, "NetworkPolicy").length).toBe(2);
  });

  it("without connections the chart makes no Secret, and points its pods at the one to make", () => {
    // NOTES.txt says how to make it (helm lint renders the notes too).
    const rendered = render();
    expect(byKind(rendered, "Secret")).toEqual([]);
    const api = find(rendered, "Deployment", "rw-rewind-api").spec.template.spec
      .containers[0] as Container;
    expect(JSON.stringify(api.env)).toContain("rw-rewind-connections");
    expect(readFileSync(path.join(CHART, "templates/NOTES.txt"), "utf8")).toContain(
      "create secret generic",
    );
  });
});

describe("the migration step", () => {
  const job = (rendered: Rendered) => {
    const jobs = byKind(rendered, "Job");
    expect(jobs.length).toBe(1);
    return jobs[0]!;
  };

  it("is named by the schema version this build's migrations reach", async () => {
    const { SCHEMA_VERSION } = await import("@rewind/store");
    const chart = parse(readFileSync(path.join(CHART, "Chart.yaml"), "utf8")) as {
      annotations: Record<string, string>;
    };
    expect(Number(chart.annotations["rewind.dev/schema-version"])).toBe(SCHEMA_VERSION);
    expect(job(render()).metadata.name).toMatch(
      new RegExp(`^rw-rewind-migrate-v${SCHEMA_VERSION}-[0-9a-f]{8}$`),
    );
  });

  it("two revisions render the same Job unless the schema (or what the Job runs) changed", () => {
    const first = job(render({ values: { existingSecret: "c" } }));
    const second = job(
      render({
        values: {
          existingSecret: "c",
          api: { replicas: 5 },
          env: { LOG_LEVEL: "debug" },
          workers: { "3": { runtime: "node24" }, "1": { runtime: "node20" } },
        },
      }),
    );
    expect(second).toEqual(first);
    const newImage = job(
      render({ values: { existingSecret: "c", runtimes: { node24: { tag: "0.2.0-node24" } } } }),
    );
    expect(newImage.metadata.name).not.toBe(first.metadata.name);

    const dir = mkdtempSync(path.join(tmpdir(), "rewind-chart-"));
    try {
      const copy = path.join(dir, "rewind");
      cpSync(CHART, copy, { recursive: true, dereference: true });
      const chartYaml = path.join(copy, "Chart.yaml");
      writeFileSync(
        chartYaml,
        readFileSync(chartYaml, "utf8").replace(/schema-version: "\d+"/, 'schema-version: "999"'),
      );
      const migrated = job(render({ chart: copy, values: { existingSecret: "c" } }));
      expect(migrated.metadata.name).toMatch(/^rw-rewind-migrate-v999-/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is no Helm hook (hooks deadlock --wait and GitOps tools treat them each their own way)", () => {
    for (const object of render().objects)
      expect(
        Object.keys(object.metadata.annotations ?? {}).filter((k) => k.startsWith("helm.sh/hook")),
      ).toEqual([]);
  });
});

describe("as a subchart of an umbrella chart", () => {
  it("takes global values and the parent's enabled condition", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "rewind-umbrella-"));
    try {
      mkdirSync(path.join(dir, "platform/charts"), { recursive: true });
      cpSync(CHART, path.join(dir, "platform/charts/rewind"), {
        recursive: true,
        dereference: true,
      });
      writeFileSync(
        path.join(dir, "platform/Chart.yaml"),
        "apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n  - name: rewind\n    version: 0.1.0\n    condition: rewind.enabled\n",
      );
      writeFileSync(
        path.join(dir, "platform/values.yaml"),
        "global:\n  imageRegistry: registry.example.com\n  storageClass: fast\nrewind:\n  enabled: true\n  existingSecret: conn\n",
      );
      const rendered = render({ chart: path.join(dir, "platform"), release: "platform" });
      expect(find(rendered, "Deployment", "platform-rewind-api")).toBeDefined();
      execFileSync(tools.helm, ["lint", "--strict", path.join(dir, "platform")], { stdio: "pipe" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
}

function env(container: Container): Record<string, string | undefined> {
  return Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
}
