/**
 * A token count is a `count_tokens` span whichever client asked (a Gemini `:countTokens` as a Messages
 * `/v1/messages/count_tokens`: one predicate, pipeline/context.ts isCountTokens), and a count a provider
 * gave names that provider: `switchyard.provider` on the span and `provider` in
 * `switchyard_requests_total`. A count the gateway estimated itself (no provider asked) stays
 * `provider="none"`. Found in the observability tryout of 2026-12-07: a Gemini count was a `chat` span,
 * and every count was labelled provider="none" with no `switchyard.provider` on its span.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { until } from "../support/until.ts";

const spans: Array<{ name: string; spanId: string; parentSpanId?: string; attributes: Array<{ key: string; value: Record<string, unknown> }> }> = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: typeof spans }> }> };
    for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
    return Response.json({});
  },
});
const attr = (s: (typeof spans)[number], key: string) => s.attributes.find((a) => a.key === key)?.value.stringValue;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(undefined, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_BSP_SCHEDULE_DELAY: "100" } });
});
afterAll(async () => {
  await gw?.stop();
  receiver.stop(true);
});

/** The request span of a route id and its attempts' spans, once exported. */
async function spansOf(routeId: string, attempts: number) {
  const root = () => spans.find((s) => attr(s, "switchyard.route_id") === routeId);
  await until(() => root() !== undefined && spans.filter((s) => s.parentSpanId === root()!.spanId).length === attempts, 10_000, "the count's spans");
  return { root: root()!, children: spans.filter((s) => s.parentSpanId === root()!.spanId) };
}
const requestsOf = (metrics: string, endpoint: string) =>
  metrics
    .split("\n")
    .filter((l) => l.startsWith(`switchyard_requests_total{endpoint="${endpoint}"`))
    .sort();

test("a Gemini countTokens a provider answered is a count_tokens span naming that provider, counted under it", async () => {
  gw.fake.handle(() => ({ json: { totalTokens: 42 } }));
  const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-2.5-flash:countTokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ totalTokens: 42 });
  const { root, children } = await spansOf(res.headers.get("x-switchyard-route-id")!, 1);
  expect([root.name, attr(root, "gen_ai.operation.name"), attr(root, "switchyard.provider"), attr(root, "gen_ai.provider.name")]).toEqual([
    "count_tokens gem/gemini-2.5-flash",
    "count_tokens",
    "gem",
    "gcp.gemini",
  ]);
  expect([children[0]!.name, attr(children[0]!, "gen_ai.operation.name")]).toEqual(["count_tokens gemini-2.5-flash", "count_tokens"]);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(requestsOf(metrics, "gemini_count_tokens")).toEqual(['switchyard_requests_total{endpoint="gemini_count_tokens",provider="gem",outcome="ok"} 1']);
  const line = gw.logs.map((l) => JSON.parse(l) as { msg?: string; routeId?: string; target?: string }).find((l) => l.msg === "request" && l.routeId === res.headers.get("x-switchyard-route-id"));
  expect(line?.target).toBe("gem/gemini-2.5-flash");
});

test("a Messages count_tokens an Anthropic provider answered names it; one estimated locally stays provider none", async () => {
  gw.fake.handle(() => ({ json: { input_tokens: 17 } }));
  const count = (model: string) =>
    fetch(`${gw.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }] }),
    });
  const forwarded = await count("anth/claude-test");
  expect(await forwarded.json()).toEqual({ input_tokens: 17 });
  // an OpenAI-format target cannot count Messages tokens: the gateway estimates them (SPEC 2.1)
  const local = await count("oai/gpt-4o");
  expect(local.status).toBe(200);
  const f = await spansOf(forwarded.headers.get("x-switchyard-route-id")!, 1);
  expect([f.root.name, attr(f.root, "switchyard.provider"), attr(f.root, "gen_ai.provider.name")]).toEqual(["count_tokens anth/claude-test", "anth", "anthropic"]);
  const l = await spansOf(local.headers.get("x-switchyard-route-id")!, 0);
  expect([l.root.name, attr(l.root, "switchyard.provider")]).toEqual(["count_tokens oai/gpt-4o", undefined]);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(requestsOf(metrics, "count_tokens")).toEqual([
    'switchyard_requests_total{endpoint="count_tokens",provider="anth",outcome="ok"} 1',
    'switchyard_requests_total{endpoint="count_tokens",provider="none",outcome="ok"} 1',
  ]);
});
