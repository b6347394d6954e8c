/**
 * Found by tryotel44 (report-only): a Gemini `:countTokens` call is exported as a `chat` span
 * (`chat gem/MODEL`, `gen_ai.operation.name: "chat"`, its attempt `chat MODEL`), where the same call from
 * a Messages client (`/v1/messages/count_tokens`) is `count_tokens`. src/telemetry/otel.ts `operation()`
 * knows only the endpoint `count_tokens`, not `gemini_count_tokens` (pipeline/context.ts isCountTokens
 * knows both). Fails now: the operation reads "chat".
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

test("a Gemini countTokens call is a count_tokens span, as a Messages count_tokens call is", async () => {
  gw.fake.handle(() => ({ json: { totalTokens: 42 } }));
  const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-2.5-flash:countTokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ totalTokens: 42 });
  const routeId = res.headers.get("x-switchyard-route-id")!;
  const root = () => spans.find((s) => attr(s, "switchyard.route_id") === routeId);
  await until(() => root() !== undefined && spans.some((s) => s.parentSpanId === root()!.spanId), 10_000, "the countTokens spans");
  const child = spans.find((s) => s.parentSpanId === root()!.spanId)!;
  expect([root()!.name, attr(root()!, "gen_ai.operation.name")]).toEqual(["count_tokens gem/gemini-2.5-flash", "count_tokens"]);
  expect([child.name, attr(child, "gen_ai.operation.name")]).toEqual(["count_tokens gemini-2.5-flash", "count_tokens"]);
});
