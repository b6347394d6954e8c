/**
 * Tokens the gateway estimated for a reply whose provider reported no usage (usage row `estimated:
 * true`, SPEC O-1) are told apart everywhere they are reported: `/metrics` counts them in
 * `switchyard_estimated_tokens_total`, not in `switchyard_tokens_total` ("Tokens as the provider
 * reported them"); the span carries `switchyard.usage.estimated: true` beside its `gen_ai.usage.*`; the
 * request's log line has `estimated: true` in its `usage`. A reply with the provider's usage has none of
 * these marks. Found in the observability tryout of 2026-12-07: the estimates were added to
 * `switchyard_tokens_total` and went unmarked on the span and the log line.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { until } from "../support/until.ts";

type Span = { name: string; attributes: Array<{ key: string; value: Record<string, unknown> }> };
const spans: Span[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Span[] }> }> };
    for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
    return Response.json({});
  },
});
/** An attribute's value (OTLP JSON: `{intValue}`, `{boolValue}`, …), undefined when absent. */
const attr = (s: Span, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue));
};

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(undefined, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_BSP_SCHEDULE_DELAY: "100" } });
});
afterAll(async () => {
  await gw?.stop();
  receiver.stop(true);
});

const chunk = (model: string, delta: object, finish: string | null, usage?: object) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;

/** A Chat stream of `model` (with the provider's usage chunk when `usage` is given) through the gateway: its request id. */
async function stream(model: string, usage?: object): Promise<string> {
  const sse =
    chunk(model, { role: "assistant", content: "hello there, this reply has no usage at all" }, null) +
    chunk(model, {}, "stop") +
    (usage ? `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [], usage })}\n\n` : "") +
    "data: [DONE]\n\n";
  gw.fake.handle(() => ({ sse }));
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: `oai/${model}`, stream: true, messages: [{ role: "user", content: "say hello" }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  return res.headers.get("x-request-id")!;
}

/** The usage row of a request (admin API). */
async function row(requestId: string) {
  let found: { estimated: boolean; usage: { inputTokens?: number; outputTokens?: number } } | undefined;
  for (const end = Date.now() + 10_000; !found && Date.now() < end; await Bun.sleep(50)) {
    gw.app.settle();
    const body = (await (await fetch(`${gw.url}/admin/api/calls?limit=50`)).json()) as { calls: Array<{ requestId: string; estimated: boolean; usage: { inputTokens?: number; outputTokens?: number } }> };
    found = body.calls.find((c) => c.requestId === requestId);
  }
  return found!;
}

/** The `switchyard_…{provider="oai",model=MODEL,kind=…}` samples of a metric, as `kind → value`. */
function tokenSamples(metrics: string, name: string, model: string): Record<string, number> {
  const out: Record<string, number> = {};
  const prefix = `${name}{provider="oai",model="${model}",kind="`;
  for (const l of metrics.split("\n")) if (l.startsWith(prefix)) out[l.slice(prefix.length, l.indexOf('"', prefix.length))] = Number(l.slice(l.lastIndexOf(" ") + 1));
  return out;
}

const logLine = (requestId: string) => gw.logs.map((l) => JSON.parse(l) as { msg?: string; requestId?: string; usage?: Record<string, unknown> }).find((l) => l.msg === "request" && l.requestId === requestId);
const spanOf = async (requestId: string) => {
  await until(() => spans.some((s) => attr(s, "switchyard.request_id") === requestId), 10_000, "the request's span");
  return spans.find((s) => attr(s, "switchyard.request_id") === requestId)!;
};

test("estimated tokens count in switchyard_estimated_tokens_total, not switchyard_tokens_total, and are marked on the span and the log line", async () => {
  const requestId = await stream("gpt-4o");
  const r = await row(requestId);
  expect(r.estimated).toBe(true);
  expect(r.usage.outputTokens).toBeGreaterThan(0);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(tokenSamples(metrics, "switchyard_tokens_total", "gpt-4o")).toEqual({});
  expect(tokenSamples(metrics, "switchyard_estimated_tokens_total", "gpt-4o")).toEqual({ input: r.usage.inputTokens!, output: r.usage.outputTokens! });
  expect(metrics).toContain("# TYPE switchyard_estimated_tokens_total counter");
  expect(logLine(requestId)?.usage).toEqual({ ...r.usage, estimated: true });
  const span = await spanOf(requestId);
  expect([attr(span, "gen_ai.usage.input_tokens"), attr(span, "gen_ai.usage.output_tokens"), attr(span, "switchyard.usage.estimated")]).toEqual([
    r.usage.inputTokens,
    r.usage.outputTokens,
    true,
  ]);
});

test("tokens the provider reported count in switchyard_tokens_total only, unmarked", async () => {
  const requestId = await stream("gpt-4o-mini", { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  const r = await row(requestId);
  expect(r.estimated).toBe(false);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(tokenSamples(metrics, "switchyard_tokens_total", "gpt-4o-mini")).toEqual({ input: 11, output: 7 });
  expect(tokenSamples(metrics, "switchyard_estimated_tokens_total", "gpt-4o-mini")).toEqual({});
  expect(logLine(requestId)?.usage).toEqual({ inputTokens: 11, outputTokens: 7 });
  const span = await spanOf(requestId);
  expect([attr(span, "gen_ai.usage.input_tokens"), attr(span, "gen_ai.usage.output_tokens"), attr(span, "switchyard.usage.estimated")]).toEqual([11, 7, undefined]);
});
