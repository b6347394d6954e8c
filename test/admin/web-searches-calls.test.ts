/**
 * A call's web searches (Usage.webSearches: Anthropic's `usage.server_tool_use.web_search_requests`)
 * are listed by GET /admin/api/calls beside the cost they are priced into, and documented in its
 * OpenAPI document; a `settings.pricing` entry prices them with `web_searches` (USD per search).
 * Until 2026-12-07 the calls listed the cost without the searches (they were in the log line and the
 * `request_finished` event only), and an override priced the tokens alone (the config refused
 * `web_searches` as an unknown field).
 *
 * Usage 1000 input and 500 output tokens, 2 web searches: claude-sonnet-4-5 from the price table
 * 0.0105 + 2 × $10 / 1000 = 0.0305; p/claude-a at { input: 1, output: 2, web_searches: 0.02 }:
 * 0.001 + 0.001 + 0.04 = 0.042 (0.002 without the searches).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { providersAtFake } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { SOURCE_CLI } from "../support/instance.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
accounts:
  - { id: a1, provider: p, api_key: env:KEY_A1 }
settings:
  pricing:
    p/claude-a: { input: 1, output: 2, web_searches: 0.02 }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A1: "sk-test-web-searches" } });
  gw.fake.handle((r) => ({
    json: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: r.model,
      content: [{ type: "text", text: "found it" }],
      stop_reason: "end_turn",
      // p/claude-plain: a reply without searches
      usage: { input_tokens: 1000, output_tokens: 500, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...(r.model === "claude-plain" ? {} : { server_tool_use: { web_search_requests: 2 } }) },
    },
  }));
});
afterAll(async () => {
  await gw?.stop();
});

async function call(model: string) {
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 20, tools: [{ type: "web_search_20250305", name: "web_search" }], messages: [{ role: "user", content: "search" }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  let row: { model?: string; usage?: Record<string, number>; costUsd?: number } | undefined;
  for (const end = Date.now() + 5000; row?.model !== model.slice(2) && Date.now() < end; await Bun.sleep(50)) {
    row = ((await (await fetch(`${gw.url}/admin/api/calls?limit=1`)).json()) as { calls: (typeof row)[] }).calls[0];
  }
  return { usage: row?.usage, costUsd: row?.costUsd };
}

test("GET /admin/api/calls lists a call's 2 web searches with its cost, from the price table and from an override's web_searches", async () => {
  expect(await call("p/claude-sonnet-4-5")).toEqual({ usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0, webSearches: 2 }, costUsd: 0.0305 });
  expect(await call("p/claude-a")).toEqual({ usage: { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0, webSearches: 2 }, costUsd: 0.042 });
});

test("the OpenAPI document describes usage.webSearches of GET /admin/api/calls", async () => {
  const doc = (await (await fetch(`${gw.url}/admin/api/openapi.json`)).json()) as any;
  const text = JSON.stringify(doc.paths["/admin/api/calls"].get.responses["200"]);
  expect(text).toContain('"webSearches"');
  expect(text).toContain("Server-side web searches priced into costUsd");
});

/** `switchyard calls list ARGS… --url URL` from source (asynchronously: the gateway answering it runs in this process). */
async function callsList(args: string[] = []) {
  const p = Bun.spawn([...SOURCE_CLI, "calls", "list", "--url", gw.url, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** The table's rows as [model, web_searches] (the last column when the table has it, else none). */
const searchesColumn = (stdout: string) => {
  // the table alone: a legend follows a blank line when a listed call is unpriced (p/claude-plain is)
  const [head, ...rows] = stdout.trimEnd().split("\n\n")[0]!.split("\n").map((l) => l.trim().split(/\s{2,}/));
  return { head: head!, rows: rows.map((r) => [r[2], head!.at(-1) === "web_searches" ? r.at(-1) : undefined]) };
};

test("switchyard calls list shows a web_searches column when a listed call had searches, and none when no call had", async () => {
  await call("p/claude-plain");
  // the newest call only: no searches, no column
  const plain = await callsList(["--limit", "1"]);
  expect([plain.code, plain.stderr]).toEqual([0, ""]);
  expect(searchesColumn(plain.stdout).head).toEqual(["time", "route_id", "model", "target", "status", "outcome", "ms", "cost", "transport", "instance"]);
  const all = await callsList();
  expect([all.code, all.stderr]).toEqual([0, ""]);
  const { head, rows } = searchesColumn(all.stdout);
  expect(head.at(-1)).toBe("web_searches");
  // newest first: this test's plain call, then the two calls of the first test, 2 searches each
  expect(rows).toEqual([
    ["p/claude-plain", "-"],
    ["p/claude-a", "2"],
    ["p/claude-sonnet-4-5", "2"],
  ]);
}, 30_000);
