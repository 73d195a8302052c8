// fetch is the journaled tool call `fetch` (the toolset provides it): the response is data.
export default async function main() {
  const ok = await fetch("https://example.test/orders/1", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: 1 }),
  });
  const missing = await fetch("https://example.test/missing");
  return {
    ok: ok.ok,
    status: ok.status,
    data: await ok.json(),
    missing: { ok: missing.ok, status: missing.status, text: await missing.text() },
  };
}
