// Runs the pinned Helm and kubeconform (scripts/install-tools.mjs) on the chart, for the tests.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, stringify } from "yaml";
// @ts-expect-error: a plain ES module of the repository's scripts, without types
import { missingTools, toolPaths } from "../../scripts/install-tools.mjs";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
export const CHART = path.join(REPO, "helm/rewind");
export const EXAMPLES = path.join(REPO, "helm/examples");

interface Tools {
  helm: string;
  kubeconform: string;
  schemas: string;
  kubernetesVersions: string[];
}
export const tools = toolPaths() as Tools;

/** Fails (never skips) when the tools are not installed, saying what to run. */
export function requireTools(): void {
  const missing = (missingTools as (options: { collector: boolean }) => string[])({
    collector: false,
  });
  if (missing.length > 0)
    throw new Error(
      `The chart's tests need ${missing.join(", ")}: run \`node scripts/install-tools.mjs\` (npm test does it when Go is installed)`,
    );
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface Rendered {
  objects: K8sObject[];
  yaml: string;
}

export interface RenderOptions {
  valuesFiles?: string[];
  /** Values given inline, written to a file (so types survive: --set would turn "3" into 3). */
  values?: Record<string, unknown>;
  release?: string;
  chart?: string;
  extraArgs?: string[];
}

export function helm(args: string[]): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(tools.helm, args, { encoding: "utf8", env: helmEnv() });
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

function helmEnv() {
  // Helm keeps no state of ours in $HOME: each call gets throwaway config and cache folders.
  const base = path.join(tmpdir(), "rewind-helm-test");
  return {
    ...process.env,
    HELM_CONFIG_HOME: path.join(base, "config"),
    HELM_CACHE_HOME: path.join(base, "cache"),
    HELM_DATA_HOME: path.join(base, "data"),
  };
}

function valuesArgs(options: RenderOptions): { args: string[]; cleanup: () => void } {
  const args: string[] = [];
  for (const file of options.valuesFiles ?? []) args.push("-f", file);
  if (options.values === undefined) return { args, cleanup: () => {} };
  const dir = mkdtempSync(path.join(tmpdir(), "rewind-values-"));
  const file = path.join(dir, "values.yaml");
  writeFileSync(file, stringify(options.values));
  args.push("-f", file);
  return { args, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `helm template`, parsed; throws with Helm's own message when it refuses. */
export function render(options: RenderOptions = {}): Rendered {
  const { args, cleanup } = valuesArgs(options);
  try {
    const result = helm([
      "template",
      options.release ?? "rw",
      options.chart ?? CHART,
      "--namespace",
      "rewind",
      ...args,
      ...(options.extraArgs ?? []),
    ]);
    if (result.status !== 0) throw new Error(result.stderr.trim() || result.stdout.trim());
    const objects = parseAllDocuments(result.stdout)
      .map((document) => document.toJS() as K8sObject | null)
      .filter((object): object is K8sObject => object !== null);
    return { objects, yaml: result.stdout };
  } finally {
    cleanup();
  }
}

/** The error Helm gives for these values (lint and template both check the values schema). */
export function renderError(options: RenderOptions): string {
  try {
    render(options);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("helm template accepted values it should have refused");
}

export function lint(options: RenderOptions = {}): { status: number; output: string } {
  const { args, cleanup } = valuesArgs(options);
  try {
    const result = helm(["lint", "--strict", options.chart ?? CHART, ...args]);
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    cleanup();
  }
}

export interface ConformReport {
  valid: number;
  invalid: number;
  errors: number;
  skipped: number;
  output: string;
}

/** Validates rendered manifests with kubeconform -strict against one Kubernetes version. */
export function kubeconform(yaml: string, kubernetesVersion: string): ConformReport {
  const result = spawnSync(
    tools.kubeconform,
    [
      "-strict",
      "-summary",
      "-output",
      "json",
      "-kubernetes-version",
      kubernetesVersion,
      // Offline: the schemas scripts/install-tools.mjs built from pinned sources, nothing else.
      "-schema-location",
      `${tools.schemas}/${kubernetesVersion}/{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json`,
      "-schema-location",
      `${tools.schemas}/crds/{{ .ResourceKind }}-{{ .Group }}-{{ .ResourceAPIVersion }}.json`,
      "-",
    ],
    { input: yaml, encoding: "utf8" },
  );
  const report = JSON.parse(result.stdout) as {
    summary: { valid: number; invalid: number; errors: number; skipped: number };
    resources?: { filename: string; kind: string; name: string; status: string; msg: string }[];
  };
  return { ...report.summary, output: result.stdout };
}

export const byKind = (rendered: Rendered, kind: string) =>
  rendered.objects.filter((object) => object.kind === kind);

export function find(rendered: Rendered, kind: string, name: string): K8sObject {
  const object = rendered.objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (object === undefined)
    throw new Error(
      `no ${kind} ${name} rendered; there are: ${rendered.objects.map((o) => `${o.kind}/${o.metadata.name}`).join(", ")}`,
    );
  return object;
}
