// The pinned Kubernetes versions and CRD sources (scripts/tools.json holds every tool's pin).
import { readFileSync } from "node:fs";

const tools = JSON.parse(
  readFileSync(new URL("../../scripts/tools.json", import.meta.url), "utf8"),
);
export const KUBERNETES_VERSIONS = tools.kubernetesVersions;
export const CRD_SOURCES = tools.crdModules;
