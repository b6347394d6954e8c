/**
 * The per-request JSON log line (SPEC O-4; what `journalctl -u switchyard` shows an operator) through the
 * real gateway: it names the client key (its name, never its secret) and, for a request that was not
 * served, the error code the client got — a model outside the key's allow-list (403
 * `model_not_allowed`), its rpm limit reached (429 `key_rate_limit_exceeded`). Until 2026-12-06 the line
 * of a refused request said neither which key nor why (try19 D6): `calls list` or the dashboard had to.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";

const SECRET = "sy-test-loglines-tight-000001";
const YAML = `${DEFAULT_YAML}
server: { require_api_key: true }
aliases:
  fast: oai/gpt-test
keys:
  - { name: tight, key: ${SECRET}, limits: { rpm: 1, models: [fast] } }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

type Line = { msg: string; requestId?: string; key?: string; code?: string; status: number; outcome: string };
/** Sends a Chat request with the key; returns its status and its log line (written after the reply: waited for, up to 20 s). */
async function request(model: string): Promise<{ status: number; line: Line }> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${SECRET}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.arrayBuffer();
  const id = res.headers.get("x-request-id");
  expect(id).toBeTruthy();
  for (let i = 0; i < 400; i++) {
    const found = gw.logs.map((l) => JSON.parse(l) as Line).find((l) => l.msg === "request" && l.requestId === id);
    if (found) return { status: res.status, line: found };
    await Bun.sleep(50);
  }
  throw new Error(`no log line for request ${id}`);
}

describe("the request log line", () => {
  test("names the key and, when refused, the error code; never the key's secret", async () => {
    const refused = await request("oai/gpt-test");
    expect(refused.status).toBe(403);
    expect(refused.line).toMatchObject({ outcome: "rejected", status: 403, key: "tight", code: "model_not_allowed" });

    const served = await request("fast");
    expect(served.status).toBe(200);
    expect(served.line).toMatchObject({ outcome: "ok", status: 200, key: "tight" });
    expect(served.line.code).toBeUndefined();

    const limited = await request("fast");
    expect(limited.status).toBe(429);
    expect(limited.line).toMatchObject({ outcome: "rejected", status: 429, key: "tight", code: "key_rate_limit_exceeded" });

    expect(gw.logs.join("\n")).not.toContain(SECRET);
  });
});
