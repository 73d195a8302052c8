/**
 * A real platform (`rewind dev` in this process, on PGlite in a temp folder) and the built CLI
 * talking to it as a user's terminal would. The CLI runs asynchronously: this process serves it.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import type { Toolset } from "@rewind/core";
import { startDevPlatform, type DevPlatform } from "@rewind/dev";
import { Rewind } from "@rewind/sdk";
import type { Store } from "@rewind/store";
import { responseContract } from "../../../services/api/test/response-contract.js";

const cli = fileURLToPath(new URL("../dist/main.js", import.meta.url));

export interface PlatformHarness {
  /** The working folder the CLI runs in (scripts written by a test go here). */
  readonly dir: string;
  readonly api: Rewind;
  /** The platform's store: for tests that must put it in a state no API call makes. */
  readonly store: Store;
  /** The environment the CLI runs with: REWIND_URL and REWIND_TOKEN of this platform. */
  readonly env: NodeJS.ProcessEnv;
  /** The built CLI's entry point (`node <cli> …`). */
  readonly cli: string;
  rewind(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Registers beforeAll/afterAll that start and stop the platform with these toolsets. */
export function usePlatform(
  toolsets: readonly Toolset[],
  setup?: (h: PlatformHarness) => Promise<void>,
): PlatformHarness {
  let dir = "";
  let platform: DevPlatform | undefined;
  let api: Rewind | undefined;
  const harness: PlatformHarness = {
    get dir() {
      return dir;
    },
    get api() {
      return api!;
    },
    get store() {
      return platform!.store;
    },
    get env() {
      return { ...process.env, REWIND_URL: platform!.url, REWIND_TOKEN: platform!.token };
    },
    cli,
    rewind: (...args) =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          [cli, ...args],
          {
            cwd: dir,
            timeout: 60_000,
            env: harness.env,
          },
          (error, stdout, stderr) =>
            resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      }),
  };
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "rewind-cli-"));
    platform = await startDevPlatform({ port: 0, dataDir: path.join(dir, ".rewind"), toolsets });
    api = new Rewind({
      url: platform.url,
      token: platform.token,
      fetch: await checkedFetch(platform.url),
    });
    await setup?.(harness);
  }, 180_000); // a PGlite start-up and migrations: slow on a loaded 2-core machine
  afterAll(async () => {
    await platform?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return harness;
}

/**
 * A fetch for the tests' client that checks every JSON answer against the platform's own
 * /v1/openapi.json: a response the document does not describe fails the test that received it.
 */
async function checkedFetch(url: string): Promise<typeof fetch> {
  const contract = responseContract(await (await fetch(`${url}/v1/openapi.json`)).json());
  return async (input, init) => {
    const response = await fetch(input, init);
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("application/json")) {
      const target =
        typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      contract.check(
        init?.method ?? "GET",
        target,
        response.status,
        type,
        await response.clone().text(),
      );
    }
    return response;
  };
}
