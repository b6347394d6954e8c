/**
 * OpenTelemetry export (SPEC O-5) through the real gateway: a small OTLP/HTTP receiver on 127.0.0.1
 * decodes what the official SDK's exporter sends (OTLP JSON at /v1/traces) and the test checks the
 * request span, one child span per upstream attempt and their GenAI attributes. Without the
 * environment variable nothing is exported and the SDK is not loaded.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { until } from "../support/until.ts";
import { providersAtFake } from "../support/configs.ts";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}

/** An OTLP/HTTP receiver: every exported span (flattened), the resource attributes, the raw bodies' content types. */
function startReceiver() {
  const spans: OtlpSpan[] = [];
  const resources: Array<Record<string, unknown>> = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/traces") return new Response("not found", { status: 404 });
      contentTypes.push(req.headers.get("content-type") ?? "");
      const body = (await req.json()) as any;
      for (const rs of body.resourceSpans ?? []) {
        resources.push(attrs(rs.resource?.attributes ?? []));
        for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      return Response.json({});
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, spans, resources, contentTypes, stop: () => server.stop(true) };
}

/** OTLP key/value attributes as a plain object (int values arrive as strings or numbers). */
function attrs(list: Array<{ key: string; value: Record<string, unknown> }>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list) {
    if ("stringValue" in value) out[key] = value.stringValue;
    else if ("intValue" in value) out[key] = Number(value.intValue);
    else if ("doubleValue" in value) out[key] = Number(value.doubleValue);
    else if ("boolValue" in value) out[key] = value.boolValue;
  }
  return out;
}

/** The request's span (the one with the reply's `switchyard.route_id`), once the receiver has it; fails after 10 s. */
async function requestSpan(res: Response): Promise<OtlpSpan> {
  const routeId = res.headers.get("x-switchyard-route-id")!;
  const find = () => receiver.spans.find((s) => attrs(s.attributes)["switchyard.route_id"] === routeId);
  await until(() => find() !== undefined, 10_000, `the request span of ${routeId}`);
  return find()!;
}

/** The spans whose parent is `root` (its attempts), once there are at least `n`; fails after 10 s. */
async function attemptSpans(root: OtlpSpan, n: number): Promise<OtlpSpan[]> {
  const children = () => receiver.spans.filter((s) => s.parentSpanId === root.spanId);
  await until(() => children().length >= n, 10_000, `${n} attempt span(s) under ${root.spanId}`);
  return children();
}

const YAML = `
${providersAtFake(["p", "anthropic"])}
accounts:
  - { id: a1, provider: p, api_key: env:KEY_A1, priority: 0 }
  - { id: a2, provider: p, api_key: env:KEY_A2, priority: 1 }
`;
const ENV = { KEY_A1: "sk-otel-one", KEY_A2: "sk-otel-two" };
const who = (r: ReceivedRequest) => (r.headers["x-api-key"] === ENV.KEY_A1 ? "a1" : "a2");

let receiver: ReturnType<typeof startReceiver>;
let gw: TestGateway;

beforeAll(async () => {
  receiver = startReceiver();
  gw = await startGateway(YAML, {
    env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_SERVICE_NAME: "switchyard-test", OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=staging,team=platform%2Cinfra,service.name=not-this-one" },
  });
});

afterAll(async () => {
  await gw?.stop();
  receiver?.stop();
});

describe("OpenTelemetry export (SPEC O-5)", () => {
  test("one span per request, one child per attempt, GenAI attributes, over OTLP/HTTP; each attempt sends its provider a traceparent naming its span", async () => {
    let first = true;
    const before = gw.fake.requests.length;
    gw.fake.handle((r) => {
      if (first) {
        first = false;
        return { status: 429, headers: { "retry-after": "30" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
      }
      return simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model, usage: { input: 11, output: 7 } } as never, r.stream);
    });
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", tracestate: "vendor=orphan" }, // a tracestate without its traceparent
      body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const root = await requestSpan(res);
    await attemptSpans(root, 2);
    expect(receiver.contentTypes[0]).toContain("application/json");
    // OTEL_RESOURCE_ATTRIBUTES on the resource, percent-decoded; OTEL_SERVICE_NAME wins over its service.name (newuser15 N2)
    expect(receiver.resources[0]).toMatchObject({ "service.name": "switchyard-test", "deployment.environment": "staging", team: "platform,infra" });
    // which instance served it: a UUID per process, named in the start log too (none before: G11)
    const instanceId = receiver.resources[0]!["service.instance.id"];
    expect(instanceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg?.startsWith("OpenTelemetry: exporting"))?.serviceInstanceId).toBe(instanceId);

    expect(root.name).toBe("chat p/claude-x");
    expect(root.kind).toBe(2); // SERVER
    expect(root.parentSpanId ?? "").toBe("");
    const ra = attrs(root.attributes);
    expect(ra).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "p/claude-x",
      "gen_ai.response.model": "claude-x",
      "gen_ai.provider.name": "anthropic", // the convention's well-known value, from the kind (newuser15 N6)
      "switchyard.provider": "p",
      "switchyard.account": "a2",
      "switchyard.outcome": "ok",
      "switchyard.attempts": 2,
      "switchyard.fallback": true,
      "http.response.status_code": 200,
    });
    expect(typeof ra["gen_ai.usage.input_tokens"]).toBe("number");
    expect(typeof ra["gen_ai.usage.output_tokens"]).toBe("number");

    const children = receiver.spans.filter((s) => s.parentSpanId === root.spanId).sort((x, y) => Number(x.startTimeUnixNano) - Number(y.startTimeUnixNano));
    expect(children).toHaveLength(2);
    expect(children.every((c) => c.traceId === root.traceId && c.kind === 3)).toBe(true); // CLIENT
    expect(children.map((c) => c.name)).toEqual(["chat claude-x", "chat claude-x"]);
    const [failed, served] = children.map((c) => attrs(c.attributes));
    expect(failed).toMatchObject({ "gen_ai.provider.name": "anthropic", "switchyard.provider": "p", "gen_ai.request.model": "claude-x", "switchyard.account": "a1", "http.response.status_code": 429 });
    expect(failed!["error.type"]).toBeDefined();
    expect(children[0]!.status?.code).toBe(2); // ERROR
    expect(served).toMatchObject({ "switchyard.account": "a2", "http.response.status_code": 200 });
    expect(served!["error.type"]).toBeUndefined();
    // Without a caller's traceparent the request's own trace: each attempt told its provider its span (SPEC O-5)
    expect(gw.fake.requests.slice(before).map((q) => q.headers.traceparent)).toEqual(children.map((c) => `00-${root.traceId}-${c.spanId}-01`));
    expect(children[0]!.spanId).not.toBe(children[1]!.spanId);
    // ... and no tracestate: it belonged to no trace the gateway continued (Trace Context section 3.3)
    expect(gw.fake.requests.slice(before).map((q) => "tracestate" in q.headers)).toEqual([false, false]);
    expect(Number(root.startTimeUnixNano)).toBeLessThanOrEqual(Number(children[0]!.startTimeUnixNano));
    expect(Number(children[1]!.endTimeUnixNano)).toBeLessThanOrEqual(Number(root.endTimeUnixNano));
    // No secrets and no prompt text in what was exported.
    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain(ENV.KEY_A1);
    expect(exported).not.toContain("Rate limited");
  });

  test("a streamed attempt's CLIENT span lasts until the stream ended; a request with a traceparent continues the caller's trace (newuser15 N6)", async () => {
    // headers at once, the rest of the stream 800 ms later
    gw.fake.handle((r) => ({ ...simpleReply(r.format!, { text: "streamed slowly", model: r.model } as never, true), split_at: [40], delay_ms: 800 }));
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    try {
      const res = await fetch(`${gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", traceparent: `00-${callerTrace}-${callerSpan}-01`, tracestate: "vendor=abc" },
        body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      const r = await requestSpan(res);
      expect([r.traceId, r.parentSpanId]).toEqual([callerTrace, callerSpan]);
      const [child] = (await attemptSpans(r, 1)) as [OtlpSpan];
      expect(child.traceId).toBe(callerTrace);
      const ms = (ns: string | number) => Number(BigInt(ns) / 1_000_000n);
      // the attempt covers the stream (>= the 800 ms pause), ending with the request
      expect(ms(child.endTimeUnixNano) - ms(child.startTimeUnixNano)).toBeGreaterThanOrEqual(700);
      expect(ms(child.endTimeUnixNano)).toBe(ms(r.endTimeUnixNano));
      // the provider was told its caller is the attempt's span, in the caller's trace; tracestate passes unchanged
      const sent = gw.fake.requests.at(-1)!.headers;
      expect([sent.traceparent, sent.tracestate]).toEqual([`00-${callerTrace}-${child.spanId}-01`, "vendor=abc"]);
    } finally {
      gw.fake.handle(undefined);
    }
  });

  test("a caller's traceparent that says 'not sampled' (flags 00) still gets the request its span, in the caller's trace: one span per request (SPEC O-5, review15 R3)", async () => {
    const callerTrace = "5ce0e9a56015fec5aadfa328ae398115";
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${callerTrace}-ab42124a3c573678-00` },
      body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const root = await requestSpan(res);
    expect(root.traceId).toBe(callerTrace);
    expect(await attemptSpans(root, 1)).toHaveLength(1);
  });

  test("a request that failed on every attempt names the model it asked for, and no response model", async () => {
    gw.fake.handle(() => ({ status: 500, json: { type: "error", error: { type: "api_error", message: "boom" } } }));
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBeGreaterThanOrEqual(500);
    await res.text();
    const root = await requestSpan(res);
    expect(root.parentSpanId ?? "").toBe("");
    const ra = attrs(root.attributes);
    expect([ra["gen_ai.request.model"], ra["gen_ai.response.model"], ra["error.type"] !== undefined]).toEqual(["p/claude-x", undefined, true]);
  });

  test("a stream the upstream cut mid-reply (a connection reset): the request and attempt spans' error.type names the failure (the client's in-band error code), not the 200 the reply began with", async () => {
    const sse = simpleReply("anthropic-messages", { text: "one two three four five six seven eight nine ten", model: "claude-x" }, true).sse!;
    // A gateway of its own: the earlier tests left this file's accounts cooling down.
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" } });
    // The reset comes once the client has the stream's headers (the commit), after some of its text.
    const committed = Promise.withResolvers<void>();
    g.fake.handle(() => ({ sse, reset_after_bytes: sse.indexOf("four") + 20, reset_when: committed.promise }));
    try {
      const res = await fetch(`${g.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(200);
      committed.resolve();
      expect(await res.text()).toContain("The upstream connection broke mid-reply (ECONNRESET)");
      const root = await requestSpan(res);
      const [child] = (await attemptSpans(root, 1)) as [OtlpSpan];
      const ra = attrs(root.attributes);
      const ca = attrs(child.attributes);
      expect([ra["switchyard.outcome"], ra["http.response.status_code"], ra["error.type"], root.status?.code]).toEqual(["upstream_error", 200, "upstream_connection_lost", 2]);
      expect([ca["http.response.status_code"], ca["error.type"], child.status?.code]).toEqual([200, "upstream_connection_lost", 2]);
      // what the route trace says of that attempt
      g.app.settle();
      const trace = (await g.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
      expect(trace.attempts.at(-1)!.error).toContain("ECONNRESET");
    } finally {
      committed.resolve();
      await g.stop();
    }
  });

  test("an unusable 200 (an HTML page) to a streamed request: its attempt span is the failure row empty_reply with the status the upstream sent, 200", async () => {
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" } });
    g.fake.handle(() => ({ text: "<!DOCTYPE html><html><head><title>Sign in</title></head></html>", headers: { "content-type": "text/html" } }));
    try {
      const res = await fetch(`${g.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(502);
      await res.text();
      const root = await requestSpan(res);
      const [child] = (await attemptSpans(root, 1)) as [OtlpSpan];
      const ca = attrs(child.attributes);
      // the upstream sent 200 (until 2026-12-07 the attempt read 502, a status it never sent)
      expect([ca["http.response.status_code"], ca["switchyard.classification"], ca["error.type"], child.status?.code]).toEqual([200, "empty_reply", "empty_reply", 2]);
    } finally {
      await g.stop();
    }
  });

  test("a client that leaves mid-stream: the serving attempt's span is an error of class client_closed, as the request's, not OK", async () => {
    const sse = simpleReply("anthropic-messages", { text: "one two three four five six seven eight nine ten", model: "claude-x" }, true).sse!;
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" } });
    // some text reaches the client (the commit), then the upstream goes silent until the client leaves
    g.fake.handle(() => ({ sse, stall_after_bytes: sse.indexOf("four") + 20 }));
    const client = new AbortController();
    try {
      const res = await fetch(`${g.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
        signal: client.signal,
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let got = "";
      while (!got.includes("one")) got += new TextDecoder().decode((await reader.read()).value);
      client.abort();
      const root = await requestSpan(res);
      const [child] = (await attemptSpans(root, 1)) as [OtlpSpan];
      const ra = attrs(root.attributes);
      const ca = attrs(child.attributes);
      expect([ra["switchyard.outcome"], ra["error.type"], root.status?.code]).toEqual(["client_closed", "client_closed", 2]);
      expect([ca["http.response.status_code"], ca["error.type"], child.status?.code]).toEqual([200, "client_closed", 2]);
    } finally {
      client.abort();
      await g.stop();
    }
  });

  test("without OTEL_EXPORTER_OTLP_ENDPOINT the SDK is not even loaded (with it, it is)", () => {
    const loaded = (env: Record<string, string>) => {
      const proc = Bun.spawnSync(
        [
          process.execPath,
          "-e",
          `const { startApp } = await import(${JSON.stringify(new URL("../../src/app.ts", import.meta.url).pathname)});
           const { mkdtempSync } = await import("node:fs");
           const app = await startApp({ host: "127.0.0.1", port: 0, dataDir: mkdtempSync("/tmp/sy-otel-"), env: ${JSON.stringify(env)}, log: () => {}, writeInstanceFile: false });
           const loaded = Object.keys(require.cache).filter((k) => k.includes("@opentelemetry")).length;
           await app.shutdown(100);
           console.log(JSON.stringify({ loaded }));`,
        ],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp" } },
      );
      expect(proc.exitCode).toBe(0);
      return (JSON.parse(proc.stdout.toString().trim().split("\n").at(-1)!) as { loaded: number }).loaded;
    };
    expect(loaded({})).toBe(0);
    expect(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })).toBeGreaterThan(0);
  }, 60_000);

  test("OTEL_SDK_DISABLED=true switches export off though the endpoint is set, and says so; a grpc protocol is named in a warning (newuser15 N2)", async () => {
    const off = startReceiver();
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: off.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_SDK_DISABLED: "TRUE" } });
    const h = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: off.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } });
    try {
      g.fake.handle((r) => simpleReply(r.format!, { text: "ok" } as never, r.stream));
      const res = await fetch(`${g.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "p/claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) });
      expect(res.status).toBe(200);
      await res.text();
      await Bun.sleep(500);
      expect(off.spans).toHaveLength(0);
      expect(g.logs.filter((l) => l.includes("OpenTelemetry")).map((l) => JSON.parse(l).msg)).toEqual(["OpenTelemetry export is off: OTEL_SDK_DISABLED=true (the endpoint set is not used)"]);
      expect(h.logs.filter((l) => l.includes("OTEL_EXPORTER_OTLP_PROTOCOL")).map((l) => JSON.parse(l))).toEqual([
        { level: "warn", time: expect.any(Number), msg: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: switchyard exports OTLP over HTTP as JSON (http/json); a collector's gRPC port (4317) will not take it, use its HTTP port (4318)" },
      ]);
    } finally {
      await g.stop();
      await h.stop();
      off.stop();
    }
  }, 30_000);

  test("the log says where spans go; a collector that refuses them is logged once, and again when it takes them", async () => {
    // Found by a new operator: a collector that was down or refused every batch left no line anywhere.
    let refuse = true;
    const got: number[] = [];
    const collector = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        await req.arrayBuffer();
        got.push(refuse ? 400 : 200);
        return refuse ? new Response("bad batch", { status: 400 }) : Response.json({});
      },
    });
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`, OTEL_BSP_SCHEDULE_DELAY: "50" } });
    try {
      g.fake.handle((r) => simpleReply(r.format!, { text: "ok" } as never, r.stream));
      const ask = () => fetch(`${g.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "p/claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text());
      const otelLines = () => g.logs.filter((l) => l.includes("OpenTelemetry")).map((l) => JSON.parse(l) as { level: string; msg: string });
      expect(otelLines()[0]).toMatchObject({ level: "info", msg: `OpenTelemetry: exporting a span per request to http://127.0.0.1:${collector.port}/v1/traces` });
      const deadline = Date.now() + 15_000;
      const until = async (done: () => boolean) => {
        while (!done() && Date.now() < deadline) await Bun.sleep(25);
      };
      await ask();
      await until(() => otelLines().some((l) => l.msg.includes("failed")));
      await ask();
      await until(() => got.length >= 2);
      const failed = otelLines().filter((l) => l.msg.includes("failed"));
      expect(failed).toHaveLength(1); // once, not per batch
      expect(failed[0]!.level).toBe("warn");
      expect(failed[0]!.msg).toContain(`OpenTelemetry export to http://127.0.0.1:${collector.port}/v1/traces failed`);
      expect(failed[0]!.msg).toContain("(HTTP 400)"); // the collector's status, not only its reason phrase
      refuse = false;
      await ask();
      await until(() => otelLines().some((l) => l.msg.includes("works again")));
      expect(otelLines().at(-1)).toMatchObject({ level: "info", msg: `OpenTelemetry export to http://127.0.0.1:${collector.port}/v1/traces works again` });
    } finally {
      await g.stop();
      collector.stop(true);
    }
  }, 30_000);

  test("a collector that answers 503 to every try: the line says it answered a busy or unavailable status, not only \"Export failed with retryable status\"", async () => {
    const collector = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        await req.arrayBuffer();
        return new Response("down", { status: 503 });
      },
    });
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`, OTEL_BSP_SCHEDULE_DELAY: "50" } });
    try {
      g.fake.handle((r) => simpleReply(r.format!, { text: "ok" } as never, r.stream));
      await fetch(`${g.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "p/claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text());
      const failed = () => g.logs.map((l) => JSON.parse(l) as { level: string; msg: string }).find((l) => l.msg.includes("OpenTelemetry export") && l.msg.includes("failed"));
      for (const end = Date.now() + 15_000; !failed() && Date.now() < end; ) await Bun.sleep(25);
      expect(failed()!.msg).toContain("failed: the collector answered 429, 502, 503 or 504 (busy or unavailable) to every try");
    } finally {
      await g.stop();
      collector.stop(true);
    }
  }, 30_000);

  test("a collector that is not there is logged within about a second of the batch, not after ~10 s of retries; a timeout that is no number is named", async () => {
    // A port nothing listens on: bound on port 0, then closed.
    const gone = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = gone.port;
    gone.stop(true);
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "soon" } });
    try {
      g.fake.handle((r) => simpleReply(r.format!, { text: "ok" } as never, r.stream));
      await fetch(`${g.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "p/claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text());
      const served = Date.now();
      const failed = () => g.logs.map((l) => JSON.parse(l) as { level: string; msg: string; time: number }).find((l) => l.msg.includes("OpenTelemetry export") && l.msg.includes("failed"));
      while (!failed() && Date.now() - served < 6_000) await Bun.sleep(25);
      expect(failed()).toMatchObject({ level: "warn", msg: expect.stringContaining(`OpenTelemetry export to http://127.0.0.1:${port}/v1/traces failed`) });
      expect(failed()!.msg).toContain("ECONNREFUSED");
      // the batch leaves ~50 ms after the request, is retried once ~1 s later (SDK default: ~8 s of retries)
      expect(failed()!.time - served).toBeLessThan(4_000);
      // a timeout that is no number of ms is named, and the default used
      expect(g.logs.filter((l) => l.includes("TIMEOUT")).map((l) => JSON.parse(l).msg)).toEqual(['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT must be a number of milliseconds above 0, not "soon": using 2000']);
    } finally {
      await g.stop();
    }
  }, 20_000);

  test("OTEL_EXPORTER_OTLP_TIMEOUT gives a slow collector longer than the 2 s default", async () => {
    let answered = 0;
    const slow = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        await req.arrayBuffer();
        await Bun.sleep(2_600);
        answered++;
        return Response.json({});
      },
    });
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${slow.port}`, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_EXPORTER_OTLP_TIMEOUT: "8000" } });
    try {
      g.fake.handle((r) => simpleReply(r.format!, { text: "ok" } as never, r.stream));
      await fetch(`${g.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "p/claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text());
      const deadline = Date.now() + 6_000;
      while (answered === 0 && Date.now() < deadline) await Bun.sleep(25);
      await Bun.sleep(200); // the exporter's callback after the answer
      expect(answered).toBeGreaterThan(0);
      expect(g.logs.filter((l) => l.includes("OpenTelemetry export") && l.includes("failed"))).toEqual([]);
    } finally {
      await g.stop();
      slow.stop(true);
    }
  }, 20_000);

  test("an endpoint of another scheme with a user and password is quoted without them", async () => {
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://alice:s3cretPassw0rd@collector.example:4317" } });
    try {
      const lines = g.logs.filter((l) => l.includes("OpenTelemetry")).map((l) => JSON.parse(l) as { level: string; msg: string });
      expect(lines).toEqual([
        { level: "warn", time: expect.any(Number), msg: 'OpenTelemetry export is off: OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (e.g. http://127.0.0.1:4318), not "grpc://…@collector.example:4317"' } as never,
      ]);
      expect(g.logs.join("\n")).not.toContain("s3cretPassw0rd");
    } finally {
      await g.stop();
    }
  });

  test("an endpoint without http:// (localhost:4318) is a warning naming the variable; the gateway serves without exporting", async () => {
    const g = await startGateway(YAML, { env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" } });
    try {
      g.fake.handle((r) => simpleReply(r.format!, { text: "ok" } as never, r.stream));
      const res = await fetch(`${g.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "p/claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) });
      expect(res.status).toBe(200);
      const lines = g.logs.filter((l) => l.includes("OpenTelemetry")).map((l) => JSON.parse(l) as { level: string; msg: string });
      expect(lines).toEqual([
        { level: "warn", time: expect.any(Number), msg: 'OpenTelemetry export is off: OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (e.g. http://127.0.0.1:4318), not "localhost:4318"' } as never,
      ]);
    } finally {
      await g.stop();
    }
  });
});
