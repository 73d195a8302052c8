import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { loadAssets, type Asset } from "./assets.js";

/** Where the dashboard lives on the API's origin (so its requests need no CORS). */
export const DASHBOARD_PATH = "/dashboard/";

/*
 * Every file is answered `no-cache`: the names carry no content hash, so a browser must ask
 * again, and the ETag turns that into a 304 while the build has not changed. The policy allows
 * only this origin's scripts, styles and requests: the page inserts API text as text, and the
 * policy is the second wall if that ever slips.
 */
const SECURITY_HEADERS = {
  "cache-control": "no-cache",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** File names a request may ask for: letters, digits, '-', '_' and an extension (`.js.map`: two). */
const FILE_NAME = /^[A-Za-z0-9_-]+(\.[a-z]+){1,2}$/;

/**
 * Serves the dashboard at `/dashboard/` on this fastify instance: `index.html` there, its
 * scripts and style beside it. The files hold no data (the page asks the API with the operator's
 * token), so they are served without authentication.
 */
export function mountDashboard(app: FastifyInstance): void {
  const loaded = loadAssets();
  const bare = DASHBOARD_PATH.slice(0, -1);
  // Relative URLs in the page resolve against the folder: /dashboard must gain its slash.
  app.get(bare, async (_request, reply) => reply.redirect(DASHBOARD_PATH, 301));
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    if ("missing" in loaded)
      return reply.code(503).type("text/plain; charset=utf-8").send(`${loaded.missing}\n`);
    const file = (request.params as { file?: string }).file ?? "index.html";
    const asset = FILE_NAME.test(file) ? loaded.assets.get(file) : undefined;
    if (asset === undefined)
      return reply
        .code(404)
        .type("text/plain; charset=utf-8")
        .send(`No file ${JSON.stringify(file)} in the dashboard: open ${DASHBOARD_PATH}\n`);
    return send(request, reply, asset);
  };
  app.get(DASHBOARD_PATH, serve);
  app.get(`${DASHBOARD_PATH}:file`, serve);
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  void reply.headers(SECURITY_HEADERS).header("etag", asset.etag);
  const match = request.headers["if-none-match"];
  if (match !== undefined && match.split(/\s*,\s*/).includes(asset.etag))
    return reply.code(304).send();
  return reply.type(asset.contentType).send(asset.body);
}
