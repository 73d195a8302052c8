/**
 * The dashboard's files as a bare fastify serves them: content types, caching, the security
 * headers, and nothing outside the allowed files (no traversal, no sources, no build files).
 */
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountDashboard } from "../src/index.js";

const app = Fastify();
beforeAll(async () => {
  mountDashboard(app);
  await app.ready();
});
afterAll(() => app.close());

describe("the dashboard's files", () => {
  it("serves the page at /dashboard/, and sends /dashboard there", async () => {
    const page = await app.inject({ url: "/dashboard/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    // Vite's page: the bundle and its style by relative URL, and no inline script (the CSP).
    expect(page.body).toMatch(/<script type="module" crossorigin src="\.\/main\.js"><\/script>/);
    expect(page.body).toMatch(/<link rel="stylesheet" crossorigin href="\.\/style\.css">/);
    expect(page.body.match(/<script\b[^>]*>/g)).toHaveLength(1);
    expect((await app.inject({ url: "/dashboard/index.html" })).body).toBe(page.body);

    const bare = await app.inject({ url: "/dashboard" });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe("/dashboard/");
  });

  it("serves scripts as JavaScript and the style as CSS, each with its own ETag", async () => {
    const script = await app.inject({ url: "/dashboard/main.js" });
    expect(script.statusCode).toBe(200);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    // One bundle (Preact and highlight.js inside it), its source map beside it.
    expect(script.body).not.toMatch(/^import\b/m);
    expect(script.body).toContain("//# sourceMappingURL=main.js.map");
    const map = await app.inject({ url: "/dashboard/main.js.map" });
    expect(map.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(map.body).sources.some((s: string) => s.endsWith("run-page.tsx"))).toBe(true);
    const style = await app.inject({ url: "/dashboard/style.css" });
    expect(style.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(style.headers.etag).toMatch(/^"[\w-]{22}"$/);
    expect(style.headers.etag).not.toBe(script.headers.etag);
    const icon = await app.inject({ url: "/dashboard/favicon.svg" });
    expect(icon.headers["content-type"]).toBe("image/svg+xml");
    const head = await app.inject({ method: "HEAD", url: "/dashboard/main.js" });
    expect(head.statusCode).toBe(200);
    expect(head.headers["content-type"]).toBe("text/javascript; charset=utf-8");
  });

  it("asks browsers to revalidate, answers 304 while the file is unchanged, and fences the page in", async () => {
    const first = await app.inject({ url: "/dashboard/main.js" });
    expect(first.headers["cache-control"]).toBe("no-cache");
    expect(first.headers["x-content-type-options"]).toBe("nosniff");
    expect(first.headers["referrer-policy"]).toBe("no-referrer");
    expect(first.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(first.headers["content-security-policy"]).toContain("connect-src 'self'");
    const etag = String(first.headers.etag);
    const again = await app.inject({
      url: "/dashboard/main.js",
      headers: { "if-none-match": etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
    const other = await app.inject({
      url: "/dashboard/main.js",
      headers: { "if-none-match": '"x"' },
    });
    expect(other.statusCode).toBe(200);
  });

  it.each([
    "/dashboard/..%2Fpackage.json",
    "/dashboard/%2e%2e%2fpackage.json",
    "/dashboard/..%2F..%2F..%2Fpackage.json",
    "/dashboard/..%5Cpackage.json",
    "/dashboard/%2Fetc%2Fpasswd",
    "/dashboard/package.json",
    "/dashboard/main.tsx", // the browser app's sources: only the bundle is served
    "/dashboard/vite.config.ts",
    "/dashboard/tsconfig.json",
    "/dashboard/web.tsbuildinfo",
    "/dashboard/.hidden.js",
    "/dashboard/main.js%00.html",
  ])("refuses %s", async (url) => {
    const response = await app.inject({ url });
    expect(response.statusCode).toBe(404);
    expect(response.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(response.body).toMatch(/^No file ".*" in the dashboard: open \/dashboard\/\n$/);
    expect(response.body).not.toContain('"name"');
  });

  it("leaves paths below /dashboard/ to the host's own not-found handler", async () => {
    for (const url of [
      "/dashboard/../package.json",
      "/dashboard/web/index.html",
      "/dashboard/a/../../package.json",
    ]) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toContain("@rewind/dashboard");
    }
  });
});
