/**
 * GET /metrics (SPEC O-3) through a real gateway and the fake upstream: after a few requests (a plain
 * reply, a stream, a fallback after a 429, a rejected request) the exposition parses as Prometheus
 * text and carries the right counters with the right labels; its tokens agree with the usage the
 * admin API reports; its byte counter equals what the clients read; the guard lets loopback in and
 * wants an admin key from remote callers. The gauges are also checked against scripted live state.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GatewayMetrics, MAX_MODEL_SERIES, OTHER_MODEL, type MetricsSources } from "../../src/http/metrics.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

// ---- a strict little parser of the Prometheus text format (0.0.4) -------------------------------

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(s: string): number {
  if (s === "+Inf") return Infinity;
  if (s === "-Inf") return -Infinity;
  if (s === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`bad value ${s}`);
  return Number(s);
}

function parseLabels(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf("=", i);
    const name = s.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`bad label name ${name}`);
    if (s[eq + 1] !== '"') throw new Error(`label ${name}: value not quoted`);
    let j = eq + 2;
    let v = "";
    for (; j < s.length && s[j] !== '"'; j++) {
      if (s[j] === "\\") {
        const n = s[++j];
        v += n === "n" ? "\n" : n;
      } else v += s[j];
    }
    if (s[j] !== '"') throw new Error(`label ${name}: unterminated`);
    if (name in out) throw new Error(`label ${name} twice`);
    out[name] = v;
    i = j + 1;
    if (s[i] === ",") i++;
    else if (i < s.length) throw new Error(`junk after label ${name}`);
  }
  return out;
}

/** Parses an exposition; throws on anything the format does not allow. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const familyOf = (sample: string): Family | undefined => {
    const f = families.get(sample);
    if (f) return f;
    for (const suffix of ["_bucket", "_sum", "_count"]) {
      if (!sample.endsWith(suffix)) continue;
      const h = families.get(sample.slice(0, -suffix.length));
      if (h && (h.type === "histogram" || h.type === "summary")) return h;
    }
    return undefined;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m;
      if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
      const f = families.get(name) ?? { name, type: "untyped", help: "", samples: [] };
      if (kind === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) throw new Error(`bad type ${rest}`);
        if (f.samples.length > 0) throw new Error(`TYPE of ${name} after its samples`);
        f.type = rest;
      } else f.help = rest;
      families.set(name, f);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const [, name, labelText, value] = m;
    const f = familyOf(name);
    if (!f) throw new Error(`sample ${name} has no TYPE`);
    const labels = labelText ? parseLabels(labelText) : {};
    const id = name + JSON.stringify(Object.entries(labels).sort());
    if (seen.has(id)) throw new Error(`duplicate series ${id}`);
    seen.add(id);
    f.samples.push({ name, labels, value: parseValue(value) });
  }
  // Histograms: cumulative buckets ending in +Inf, which equals _count.
  for (const f of families.values()) {
    if (f.type !== "histogram") continue;
    const series = new Map<string, Sample[]>();
    for (const s of f.samples) {
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const samples of series.values()) {
      const buckets = samples.filter((s) => s.name.endsWith("_bucket"));
      const count = samples.find((s) => s.name.endsWith("_count"))!;
      for (let i = 1; i < buckets.length; i++) {
        if (buckets[i].value < buckets[i - 1].value) throw new Error(`${f.name}: buckets not cumulative`);
        if (parseValue(buckets[i].labels.le) <= parseValue(buckets[i - 1].labels.le)) throw new Error(`${f.name}: le not increasing`);
      }
      if (buckets.at(-1)?.labels.le !== "+Inf") throw new Error(`${f.name}: no +Inf bucket`);
      if (buckets.at(-1)!.value !== count.value) throw new Error(`${f.name}: +Inf bucket != count`);
    }
  }
  return families;
}

/** Metrics of an instance with no live state (no accounts, closed circuits, empty store buffers). */
const quietMetrics = () =>
  new GatewayMetrics({
    accounts: () => ({ accounts: [], providers: new Map(), cooldowns: [] }),
    circuit: () => ({ state: "closed" }),
    store: () => ({ pendingUsage: 0, pendingTraces: 0, dropped: 0, flushErrors: 0, lastFlushAt: 0 }),
    inflight: () => 0,
  });

/** The value of the sample of `name` whose labels include `labels` (exactly one must match). */
function valueOf(fams: Map<string, Family>, family: string, labels: Record<string, string> = {}, sample = family): number | undefined {
  const f = fams.get(family);
  const hits = (f?.samples ?? []).filter((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${sample} ${JSON.stringify(labels)}: ${hits.length} samples`);
  return hits[0]?.value;
}
const sumOf = (fams: Map<string, Family>, family: string, labels: Record<string, string> = {}) =>
  (fams.get(family)?.samples ?? []).filter((s) => s.name === family && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

// ---- the gateway -----------------------------------------------------------------------------------

const KEY_A1 = "sk-metrics-test-account-a1-secret";
const CLIENT_KEY = "sy-metrics-client-key-no-admin-7f3a";
const YAML = `
${providersAtFake(["p", "anthropic"], ["q", "openai-compatible"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
keys:
  - name: laptop
    key: env:CLIENT_KEY
combos:
  - name: duo
    targets:
      - model: p/claude-x
      - model: q/glm-x
`;

const post = (gw: TestGateway, path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const scrape = async (gw: TestGateway, headers: Record<string, string> = {}) => fetch(`${gw.url}/metrics`, { headers });

describe("GET /metrics after requests through the gateway", () => {
  let gw: TestGateway;
  let fams: Map<string, Family>;
  let exposition: string;
  let clientBytes = 0;
  let fallbackStatus = 0;
  let fallbackHeader: string | null = null;

  beforeAll(async () => {
    gw = await startGateway(YAML, { env: { KEY_A1, CLIENT_KEY } });
    const read = async (r: Response) => {
      const body = new Uint8Array(await r.arrayBuffer());
      if (r.status === 200) clientBytes += body.byteLength;
      return r;
    };
    const msg = { model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };
    // The two replies wait 5 ms before their headers, so each request lasts at least that on any machine:
    // durations are whole milliseconds of the wall clock, and in a full run on an idle moment (load ~5)
    // both took under one, so the duration histogram's sum was 0.
    gw.fake.handle((rec) => ({ ...simpleReply(rec.format!, { text: "Hello from the fake upstream.", model: rec.model }, rec.stream), headers_delay_ms: 5 }));
    expect((await read(await post(gw, "/v1/messages", msg))).status).toBe(200);
    expect((await read(await post(gw, "/v1/messages", { ...msg, stream: true }))).status).toBe(200);
    gw.fake.handle(undefined);
    // The combo's first target is rate-limited: the request falls back to q, and a1 cools down.
    gw.fake.enqueue({ status: 429, headers: { "retry-after": "30" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } });
    const fb = await read(await post(gw, "/v1/chat/completions", { model: "duo", stream: true, messages: [{ role: "user", content: "hi" }] }));
    fallbackStatus = fb.status;
    fallbackHeader = fb.headers.get("x-switchyard-fallback");
    // Nothing serves this model: rejected before any upstream call.
    expect((await read(await post(gw, "/v1/chat/completions", { model: "nowhere/none", messages: [{ role: "user", content: "hi" }] }))).status).toBeGreaterThanOrEqual(400);
    gw.app.settle(); // the requests' after-reply work runs now (it waited 50 ms for it)
    const res = await scrape(gw);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(res.headers.get("content-type")).toContain("version=0.0.4");
    exposition = await res.text();
    fams = parseExposition(exposition);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("the exposition parses and declares every metric the SPEC names", () => {
    for (const [name, type] of [
      ["switchyard_requests_total", "counter"],
      ["switchyard_request_duration_seconds", "histogram"],
      ["switchyard_time_to_first_byte_seconds", "histogram"],
      ["switchyard_upstream_attempts_total", "counter"],
      ["switchyard_fallbacks_total", "counter"],
      ["switchyard_tokens_total", "counter"],
      ["switchyard_stream_bytes_sent_total", "counter"],
      ["switchyard_cooldowns_active", "gauge"],
      ["switchyard_circuit_open", "gauge"],
      ["switchyard_store_pending", "gauge"],
      ["switchyard_store_dropped_total", "counter"],
      ["switchyard_store_flush_errors_total", "counter"],
      ["switchyard_requests_in_flight", "gauge"],
      ["process_resident_memory_bytes", "gauge"],
    ]) {
      expect({ name, type: fams.get(name)?.type }).toEqual({ name, type });
      expect(fams.get(name)!.help.length).toBeGreaterThan(0);
    }
    expect(valueOf(fams, "process_resident_memory_bytes")!).toBeGreaterThan(1_000_000);
  });

  test("request counts by endpoint, provider and outcome", () => {
    expect(fallbackStatus).toBe(200);
    expect(fallbackHeader).toBe("1");
    expect(valueOf(fams, "switchyard_requests_total", { endpoint: "messages", provider: "p", outcome: "ok" })).toBe(2);
    expect(valueOf(fams, "switchyard_requests_total", { endpoint: "chat", provider: "q", outcome: "ok" })).toBe(1);
    expect(valueOf(fams, "switchyard_requests_total", { endpoint: "chat", provider: "none" })).toBe(1);
    expect(sumOf(fams, "switchyard_requests_total")).toBe(4);
  });

  test("latency histograms count every request; time to first byte counts the committed ones", () => {
    const h = "switchyard_request_duration_seconds";
    expect(valueOf(fams, h, { endpoint: "messages", provider: "p", outcome: "ok" }, `${h}_count`)).toBe(2);
    expect(valueOf(fams, h, { endpoint: "messages", provider: "p", outcome: "ok", le: "+Inf" }, `${h}_bucket`)).toBe(2);
    expect(valueOf(fams, h, { endpoint: "messages", provider: "p", outcome: "ok" }, `${h}_sum`)!).toBeGreaterThan(0);
    expect(valueOf(fams, h, { endpoint: "chat", provider: "none" }, `${h}_count`)).toBe(1);
    const t = "switchyard_time_to_first_byte_seconds";
    expect(valueOf(fams, t, { endpoint: "messages", provider: "p", outcome: "ok" }, `${t}_count`)).toBe(2);
    expect(valueOf(fams, t, { endpoint: "chat", provider: "q", outcome: "ok" }, `${t}_count`)).toBe(1);
    expect(valueOf(fams, t, { endpoint: "chat", provider: "none" }, `${t}_count`)).toBeUndefined();
  });

  test("attempts by provider tried and result; the rate-limited first target shows as a fallback", () => {
    expect(valueOf(fams, "switchyard_upstream_attempts_total", { endpoint: "messages", provider: "p", result: "ok" })).toBe(2);
    expect(valueOf(fams, "switchyard_upstream_attempts_total", { endpoint: "chat", provider: "p", result: "rate_limit_with_reset" })).toBe(1);
    expect(valueOf(fams, "switchyard_upstream_attempts_total", { endpoint: "chat", provider: "q", result: "ok" })).toBe(1);
    expect(sumOf(fams, "switchyard_upstream_attempts_total")).toBe(4);
    expect(valueOf(fams, "switchyard_fallbacks_total", { endpoint: "chat", provider: "q" })).toBe(1);
    expect(valueOf(fams, "switchyard_fallbacks_total", { endpoint: "messages", provider: "p" })).toBeUndefined();
  });

  test("the 429'd account's cooldown is a gauge of its provider; no circuit is open", () => {
    expect(valueOf(fams, "switchyard_cooldowns_active", { provider: "p" })).toBe(1);
    expect(valueOf(fams, "switchyard_cooldowns_active", { provider: "q" })).toBe(0);
    expect(valueOf(fams, "switchyard_circuit_open", { provider: "p" })).toBe(0);
    expect(valueOf(fams, "switchyard_circuit_open", { provider: "q" })).toBe(0);
  });

  test("tokens by provider and model agree with the usage the admin API reports", async () => {
    await gw.app.store.flush();
    const usage = (await (await fetch(`${gw.url}/admin/api/usage?by=provider`)).json()) as { rows: Array<Record<string, number | string | null>> };
    for (const provider of ["p", "q"]) {
      const row = usage.rows.find((r) => r.group === provider)!;
      expect(row).toBeDefined();
      for (const [kind, field] of [["input", "inputTokens"], ["output", "outputTokens"], ["cache_read", "cacheReadTokens"], ["cache_write", "cacheWriteTokens"], ["reasoning", "reasoningTokens"]] as const) {
        expect({ provider, kind, n: sumOf(fams, "switchyard_tokens_total", { provider, kind }) }).toEqual({ provider, kind, n: Number(row[field] ?? 0) });
      }
    }
    expect(sumOf(fams, "switchyard_tokens_total", { provider: "p", model: "claude-x", kind: "input" })).toBeGreaterThan(0);
    expect(sumOf(fams, "switchyard_tokens_total", { provider: "q", model: "glm-x", kind: "output" })).toBeGreaterThan(0);
  });

  test("reply bytes sent equal the bytes the clients read from committed replies", () => {
    expect(clientBytes).toBeGreaterThan(0);
    expect(sumOf(fams, "switchyard_stream_bytes_sent_total")).toBe(clientBytes);
  });

  test("store buffers and drops, and nothing in flight between requests", async () => {
    // Right after the requests their usage rows may still be buffered; after a flush the gauge is 0.
    await gw.app.store.flush();
    const after = parseExposition(await (await scrape(gw)).text());
    expect(valueOf(after, "switchyard_store_pending", { kind: "usage" })).toBe(0);
    expect(valueOf(after, "switchyard_store_pending", { kind: "traces" })).toBe(0);
    expect(valueOf(fams, "switchyard_store_dropped_total")).toBe(0);
    expect(valueOf(fams, "switchyard_requests_in_flight")).toBe(0);
  });

  test("no secret appears in the exposition", () => {
    for (const secret of [KEY_A1, CLIENT_KEY, gw.app.adminToken, "sk-fake-upstream-secret"]) expect(exposition).not.toContain(secret);
  });

  test("loopback reads /metrics without a key; a remote caller needs an admin-scoped key (none or a wrong one: 401, one without the scope: 403 naming it)", async () => {
    const remote = { "x-forwarded-for": "203.0.113.7" };
    const anon = await scrape(gw, remote);
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
    const wrong = await scrape(gw, { ...remote, authorization: "Bearer sy-not-a-key-of-this-gateway" });
    expect(wrong.status).toBe(401);
    // A valid key without the admin scope is told so, by name (as the admin API does), not taken for a wrong key.
    const noScope = await scrape(gw, { ...remote, authorization: `Bearer ${CLIENT_KEY}` });
    expect(noScope.status).toBe(403);
    const refused = ((await noScope.json()) as { error: { type: string; message: string } }).error;
    expect(refused.type).toBe("permission_error");
    expect(refused.message).toContain("Key laptop has no admin scope");
    expect(refused.message).toContain("/metrics");
    expect(refused.message).not.toContain(CLIENT_KEY);
    expect((await scrape(gw, { ...remote, authorization: `Bearer ${gw.app.adminToken}` })).status).toBe(200);
    const created = (await (await post(gw, "/admin/api/keys", { name: "scraper", scopes: ["admin"] })).json()) as { secret: string };
    const ok = await scrape(gw, { ...remote, "x-api-key": created.secret });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("switchyard_requests_total");
  });
});

describe("gauges read live state at scrape time", () => {
  test("cooldowns per provider, open circuits, store counters, in-flight requests", async () => {
    let open = new Set<string>(["p"]);
    let dropped = 3;
    const providers = new Map<string, unknown>([["p", {}], ["q", {}], ["local", {}]]);
    const sources: MetricsSources = {
      accounts: () => ({
        accounts: [
          { id: "a1", providerId: "p" },
          { id: "a2", providerId: "p" },
          { id: "b1", providerId: "q" },
        ] as never,
        providers,
        cooldowns: [{ accountId: "a1" }, { accountId: "a2" }, { accountId: "b1" }, { accountId: "local-keyless" }],
      }),
      circuit: (id) => ({ state: open.has(id) ? "open" : "closed" }),
      store: () => ({ pendingUsage: 7, pendingTraces: 5, dropped, flushErrors: 2, lastFlushAt: 0 }),
      inflight: () => 4,
    };
    const m = new GatewayMetrics(sources);
    let f = parseExposition(await m.text());
    expect(valueOf(f, "switchyard_cooldowns_active", { provider: "p" })).toBe(2);
    expect(valueOf(f, "switchyard_cooldowns_active", { provider: "q" })).toBe(1);
    expect(valueOf(f, "switchyard_cooldowns_active", { provider: "local" })).toBe(1);
    expect(valueOf(f, "switchyard_circuit_open", { provider: "p" })).toBe(1);
    expect(valueOf(f, "switchyard_circuit_open", { provider: "q" })).toBe(0);
    expect(valueOf(f, "switchyard_store_pending", { kind: "usage" })).toBe(7);
    expect(valueOf(f, "switchyard_store_pending", { kind: "traces" })).toBe(5);
    expect(valueOf(f, "switchyard_store_dropped_total")).toBe(3);
    expect(valueOf(f, "switchyard_store_flush_errors_total")).toBe(2);
    expect(valueOf(f, "switchyard_requests_in_flight")).toBe(4);
    // The next scrape sees the state of then: the circuit closed, more drops.
    open = new Set();
    dropped = 9;
    f = parseExposition(await m.text());
    expect(valueOf(f, "switchyard_circuit_open", { provider: "p" })).toBe(0);
    expect(valueOf(f, "switchyard_store_dropped_total")).toBe(9);
  });

  test("after a registry reset counting starts again from zero; a negative or infinite token count is not added", async () => {
    const m = quietMetrics();
    const rec = (usage: Record<string, number>) =>
      ({ requestId: "r", ts: 0, clientFormat: "openai-chat", requestedModel: "m", providerId: "p", model: "m", usage, estimated: false, outcome: "ok", status: 200, ttfbMs: 100, totalMs: 200, attempts: 1, fallback: false }) as never;
    m.observe("chat", rec({ inputTokens: 10 }), 100);
    m.observe("chat", rec({ inputTokens: 10 }), 100);
    let f = parseExposition(await m.text());
    expect(valueOf(f, "switchyard_requests_total", { endpoint: "chat", provider: "p", outcome: "ok" })).toBe(2);
    m.registry.resetMetrics();
    f = parseExposition(await m.text());
    expect(valueOf(f, "switchyard_requests_total", { endpoint: "chat", provider: "p", outcome: "ok" })).toBeUndefined();
    expect(valueOf(f, "switchyard_request_duration_seconds", { endpoint: "chat", provider: "p", outcome: "ok" }, "switchyard_request_duration_seconds_count")).toBeUndefined();
    m.observe("chat", rec({ inputTokens: 7, outputTokens: -8, cacheReadTokens: Infinity, reasoningTokens: Number.NaN }), 50);
    f = parseExposition(await m.text());
    expect(valueOf(f, "switchyard_requests_total", { endpoint: "chat", provider: "p", outcome: "ok" })).toBe(1);
    expect(valueOf(f, "switchyard_request_duration_seconds", { endpoint: "chat", provider: "p", outcome: "ok" }, "switchyard_request_duration_seconds_count")).toBe(1);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "m", kind: "input" })).toBe(7);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "m", kind: "output" })).toBeUndefined();
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "m", kind: "cache_read" })).toBeUndefined();
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "m", kind: "reasoning" })).toBeUndefined();
    expect(valueOf(f, "switchyard_stream_bytes_sent_total", { endpoint: "chat", provider: "p" })).toBe(50);
  });

  test("client-chosen model names stop making new token series after MAX_MODEL_SERIES: the rest count as model=\"other\"", async () => {
    const m = quietMetrics();
    const rec = (model: string) =>
      ({ requestId: "r", ts: 0, clientFormat: "openai-chat", requestedModel: model, providerId: "p", model, usage: { inputTokens: 3 }, estimated: false, outcome: "ok", status: 200, ttfbMs: 1, totalMs: 2, attempts: 1, fallback: false }) as never;
    for (let i = 0; i < MAX_MODEL_SERIES + 50; i++) m.observe("chat", rec(`random-${i}`), 1);
    m.observe("chat", rec("random-0"), 1);
    const f = parseExposition(await m.text());
    expect(f.get("switchyard_tokens_total")!.samples.length).toBe(MAX_MODEL_SERIES + 1);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "random-0", kind: "input" })).toBe(6);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: `random-${MAX_MODEL_SERIES - 1}`, kind: "input" })).toBe(3);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: `random-${MAX_MODEL_SERIES}`, kind: "input" })).toBeUndefined();
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: OTHER_MODEL, kind: "input" })).toBe(150);
  });

  test("control characters of a client-chosen model name are replaced by U+FFFD in its label (LF stays, escaped): every line of the exposition is one line for a parser splitting at CR, NEL or U+2028 too", async () => {
    const m = quietMetrics();
    const rec = (model: string) =>
      ({ requestId: "r", ts: 0, clientFormat: "openai-chat", requestedModel: model, providerId: "p", model, usage: { inputTokens: 3 }, estimated: false, outcome: "ok", status: 200, ttfbMs: 1, totalMs: 2, attempts: 1, fallback: false }) as never;
    for (const model of ["a\rb", "a\tb", "x\u0000\u001b\u007f\u0085\u2028\u2029y", "l\nf", "plain"]) m.observe("chat", rec(model), 1);
    const text = await m.text();
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(text).toContain('model="l\\nf"');
    const f = parseExposition(text);
    // Split as a universal-newline reader splits: the same lines.
    expect(text.split(/\r\n|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/).length).toBe(text.split("\n").length);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "a\uFFFDb", kind: "input" })).toBe(6);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "x\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFDy", kind: "input" })).toBe(3);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "l\nf", kind: "input" })).toBe(3);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "plain", kind: "input" })).toBe(3);
    expect(f.get("switchyard_tokens_total")!.samples.length).toBe(4);
  });

  test("MAX_MODEL_SERIES counts (provider, model) pairs across providers: past it, each provider's new pairs count as its own model=\"other\"", async () => {
    const m = quietMetrics();
    const rec = (providerId: string, model: string) =>
      ({ requestId: "r", ts: 0, clientFormat: "openai-chat", requestedModel: model, providerId, model, usage: { inputTokens: 3 }, estimated: false, outcome: "ok", status: 200, ttfbMs: 1, totalMs: 2, attempts: 1, fallback: false }) as never;
    const half = MAX_MODEL_SERIES / 2;
    for (let i = 0; i < half; i++) m.observe("chat", rec("p", `random-${i}`), 1);
    for (let i = 0; i < half + 10; i++) m.observe("chat", rec("q", `random-${i}`), 1);
    m.observe("chat", rec("p", `random-${half}`), 1);
    m.observe("chat", rec("p", "random-0"), 1);
    const f = parseExposition(await m.text());
    expect(f.get("switchyard_tokens_total")!.samples.length).toBe(MAX_MODEL_SERIES + 2);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "random-0", kind: "input" })).toBe(6);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "q", model: `random-${half - 1}`, kind: "input" })).toBe(3);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "q", model: `random-${half}`, kind: "input" })).toBeUndefined();
    expect(valueOf(f, "switchyard_tokens_total", { provider: "q", model: OTHER_MODEL, kind: "input" })).toBe(30);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: OTHER_MODEL, kind: "input" })).toBe(3);
  });

  test("20,000 requests add up exactly; a duration equal to a bucket bound counts in that bucket (le is inclusive)", async () => {
    const m = quietMetrics();
    const rec = {
      requestId: "r",
      ts: 0,
      clientFormat: "anthropic-messages",
      requestedModel: "m",
      providerId: "p",
      model: "m",
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 1 },
      estimated: false,
      outcome: "ok",
      status: 200,
      ttfbMs: 120,
      totalMs: 900,
      attempts: 1,
      fallback: false,
    } as const;
    const attempts = [{ target: "p/m", providerId: "p", model: "m", startMs: 0, status: 200 }];
    // Durations cycle through 0.05 s (a bound itself), 0.3 s and 700 s (past the last bound: +Inf only).
    const totals = [50, 300, 700_000];
    for (let i = 0; i < 20_000; i++) m.observe("messages", { ...rec, totalMs: totals[i % 3]! } as never, 2048, attempts);
    const f = parseExposition(await m.text());
    const h = "switchyard_request_duration_seconds";
    const at = (le: string) => valueOf(f, h, { endpoint: "messages", provider: "p", outcome: "ok", le }, `${h}_bucket`);
    expect(at("0.05")).toBe(6667);
    expect(at("0.25")).toBe(6667);
    expect(at("0.5")).toBe(6667 + 6667);
    expect(at("600")).toBe(6667 + 6667);
    expect(at("+Inf")).toBe(20_000);
    expect(valueOf(f, h, { endpoint: "messages", provider: "p", outcome: "ok" }, `${h}_count`)).toBe(20_000);
    expect(valueOf(f, h, { endpoint: "messages", provider: "p", outcome: "ok" }, `${h}_sum`)).toBeCloseTo(6667 * 0.05 + 6667 * 0.3 + 6666 * 700, 3);
    expect(valueOf(f, "switchyard_requests_total", { endpoint: "messages", provider: "p", outcome: "ok" })).toBe(20_000);
    expect(valueOf(f, "switchyard_upstream_attempts_total", { endpoint: "messages", provider: "p", result: "ok" })).toBe(20_000);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "m", kind: "input" })).toBe(200_000);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "m", kind: "cache_read" })).toBe(20_000);
    expect(valueOf(f, "switchyard_tokens_total", { provider: "p", model: "m", kind: "reasoning" })).toBeUndefined();
    expect(valueOf(f, "switchyard_stream_bytes_sent_total", { endpoint: "messages", provider: "p" })).toBe(20_000 * 2048);
    expect(valueOf(f, "switchyard_fallbacks_total", { endpoint: "messages", provider: "p" })).toBeUndefined();
  });
});
