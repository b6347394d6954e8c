/**
 * Fallback and the commit point (SPEC 6) through the real gateway and a scriptable fake upstream:
 * one scenario per classification row and the fault-injection list of the fallback issue.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
  # t: the timeout scenarios' provider (accounts t1, t2), answered by the fake in this process (no
  # socket: FakeUpstreamOptions.inProcess), so its timers race nothing the test process could stall: a
  # piece or header the fake sends before a timeout is due is read before it fires. Over a socket, p's
  # 300 ms header timeout once timed out an answered attempt under load (a scenario saw "served by a1"
  # from the retry) and gave a hanging one up before the fake had read its request (it saw three of
  # the four), and a stall of most of a second between two 250 ms pieces timed a trickle out.
  - id: t
    kind: anthropic
    base_url: "{{FAKE}}/t"
    idle_timeout_ms: 1000
    header_timeout_ms: 300
  # k: like t, with an idle timeout of 250 ms, for the scenario whose every attempt waits one out.
  - id: k
    kind: anthropic
    base_url: "{{FAKE}}/k"
    idle_timeout_ms: 250
    header_timeout_ms: 300
  - id: q
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: dead
    kind: anthropic
    base_url: "http://127.0.0.1:9"
    header_timeout_ms: 300
  - id: r
    kind: anthropic
    base_url: "{{FAKE}}/r"
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
  - id: a2
    provider: p
    api_key: env:KEY_A2
  - id: t1
    provider: t
    api_key: env:KEY_A1
  - id: t2
    provider: t
    api_key: env:KEY_A2
  - id: k1
    provider: k
    api_key: env:KEY_A1
  - id: k2
    provider: k
    api_key: env:KEY_A2
  - id: d1
    provider: dead
    api_key: env:KEY_A1
${Array.from({ length: 10 }, (_, i) => `  - id: r${i + 1}\n    provider: r\n    api_key: env:KEY_R\n`).join("")}combos:
  - name: duo
    targets:
      - model: p/claude-x
      - model: q/glm-x
  - name: rfirst
    targets:
      - model: r/claude-x
      - model: q/glm-x
  - name: deadfirst
    targets:
      - model: dead/claude-x
      - model: q/glm-x
settings:
  precommit_deadline_ms: 20000
`;
const ENV = { KEY_A1: "sk-test-account-one", KEY_A2: "sk-test-account-two", KEY_R: "sk-test-pool-r" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV, fake: await startFakeUpstream({ inProcess: (path) => path.startsWith("/t/") || path.startsWith("/k/") }) });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  gw.fake.reset();
  // Clear live account state between scenarios.
  for (const a of ["a1", "a2", "t1", "t2", "k1", "k2", "d1", ...Array.from({ length: 10 }, (_, i) => `r${i + 1}`)]) {
    await gw.app.store.clearCooldown(a);
    await gw.app.store.clearLock(a);
    await gw.app.store.restoreModel(a);
  }
  await gw.app.store.clearCircuit("p");
  await gw.app.store.clearCircuit("t");
  await gw.app.store.clearCircuit("k");
  await gw.app.store.clearCircuit("dead");
  await gw.app.store.clearCircuit("r");
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
  gw.app.registry.resetCounters();
});

const who = (r: ReceivedRequest) =>
  r.path.startsWith("/r/")
    ? "r"
    : r.headers["x-api-key"] === ENV.KEY_A1
      ? r.path.startsWith("/t/") ? "t1" : r.path.startsWith("/k/") ? "k1" : "a1"
      : r.headers["x-api-key"] === ENV.KEY_A2
        ? r.path.startsWith("/t/") ? "t2" : r.path.startsWith("/k/") ? "k2" : "a2"
        : r.format === "openai-chat"
          ? "q"
          : "?";
const order = () => gw.fake.requests.map(who);
const ok = (r: ReceivedRequest): FakeReply => simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream);
/** Per-account scripts: a queue of replies for a1 and a2 (t1 and t2); an empty queue answers normally. */
function script(s: { a1?: FakeReply[]; a2?: FakeReply[]; t1?: FakeReply[]; t2?: FakeReply[]; k1?: FakeReply[]; k2?: FakeReply[]; q?: FakeReply[]; r?: FakeReply[] }) {
  gw.fake.handle((r) => {
    const q = s[who(r) as "a1" | "a2" | "t1" | "t2" | "k1" | "k2" | "q" | "r"];
    return q && q.length > 0 ? q.shift() : ok(r);
  });
}
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const msg = (model: string, stream = false) => ({ model, max_tokens: 50, stream, messages: [{ role: "user", content: "hi" }] });
const anthropicError = (type: string, message: string) => ({ type: "error", error: { type, message } });
const state = () => gw.app.store.loadAccountState() as Promise<Awaited<ReturnType<typeof gw.app.store.loadAccountState>>>;

describe("classification rows through the gateway", () => {
  test("429 with Retry-After: cooldown equals it, next account serves, fallback header set", async () => {
    script({ a1: [{ status: 429, headers: { "retry-after": "30" }, json: anthropicError("rate_limit_error", "Rate limited") }] });
    const t0 = Date.now();
    const res = await post("/v1/messages", msg("p/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by a2");
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    expect(order()).toEqual(["a1", "a2"]);
    const cd = (await state()).cooldowns.find((c) => c.accountId === "a1")!;
    expect(cd.model).toBe("claude-x");
    expect(cd.until - t0).toBeGreaterThanOrEqual(29_000);
    expect(cd.until - t0).toBeLessThanOrEqual(32_000);
  });

  test("429 worded as a per-minute rate limit with no reset time: 90 s cooldown", async () => {
    script({ a1: [{ status: 429, json: anthropicError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit") }] });
    const t0 = Date.now();
    const res = await post("/v1/messages", msg("p/claude-x"));
    expect(res.status).toBe(200);
    const cd = (await state()).cooldowns.find((c) => c.accountId === "a1")!;
    expect(cd.until - t0).toBeGreaterThanOrEqual(89_000);
    expect(cd.until - t0).toBeLessThanOrEqual(92_000);
  });

  test("529 overloaded: backoff 2 s on that account, doubling on the next hit; next account serves", async () => {
    script({ a1: [{ status: 529, json: anthropicError("overloaded_error", "Overloaded") }] });
    // The backoff runs from the 529, which came between the request's start and its reply: bounded by
    // both (not by a fixed margin after the start, which a loaded machine could pass).
    const t0 = Date.now();
    expect((await post("/v1/messages", msg("p/claude-x"))).status).toBe(200);
    const t0End = Date.now();
    expect(order()).toEqual(["a1", "a2"]);
    let cd = (await state()).cooldowns.find((c) => c.accountId === "a1")!;
    expect(cd.level).toBe(0);
    expect(cd.until - t0).toBeGreaterThanOrEqual(1900);
    expect(cd.until - t0End).toBeLessThanOrEqual(2100);
    // The second 529 in a row doubles the wait. A new conversation (no affinity to a2) and fresh
    // routing stats, so a1 is picked first again once its backoff ended (waited for from its end as
    // the gateway stated it, not for a fixed 2.1 s).
    await Bun.sleep(Math.max(0, cd.until - Date.now()) + 100);
    gw.fake.reset();
    gw.app.registry.resetCounters();
    script({ a1: [{ status: 529, json: anthropicError("overloaded_error", "Overloaded") }] });
    const t1 = Date.now();
    expect((await post("/v1/messages", { ...msg("p/claude-x"), messages: [{ role: "user", content: "another conversation" }] })).status).toBe(200);
    const t1End = Date.now();
    cd = (await state()).cooldowns.find((c) => c.accountId === "a1")!;
    expect(cd.level).toBe(1);
    expect(cd.until - t1).toBeGreaterThanOrEqual(3900);
    expect(cd.until - t1End).toBeLessThanOrEqual(4100);
  });

  test("quota exhausted: the whole account is locked until changed", async () => {
    script({ a1: [{ status: 429, json: { type: "error", error: { type: "rate_limit_error", message: "You exceeded your monthly spend limit", details: { error_code: "enforced_spend_limit_reached" } } } }] });
    expect((await post("/v1/messages", msg("p/claude-x"))).status).toBe(200);
    const lock = (await state()).locks.find((l) => l.accountId === "a1")!;
    expect(lock.until).toBeNull();
    // Another model on the same account is also excluded: the lock is account-wide.
    gw.fake.reset();
    script({});
    expect((await post("/v1/messages", msg("p/claude-other"))).status).toBe(200);
    expect(order()).toEqual(["a2"]);
  });

  test("401 on an API-key account: credential disabled, next account serves", async () => {
    script({ a1: [{ status: 401, json: anthropicError("authentication_error", "invalid x-api-key") }] });
    expect((await post("/v1/messages", msg("p/claude-x"))).status).toBe(200);
    expect(order()).toEqual(["a1", "a2"]);
    expect((await state()).locks.map((l) => l.accountId)).toEqual(["a1"]);
  });

  test("404 model not found: pairing removed, no other account, the combo's next target serves", async () => {
    script({ a1: [{ status: 404, json: anthropicError("not_found_error", "model: claude-x") }] });
    const res = await post("/v1/messages", msg("duo"));
    expect(res.status).toBe(200);
    expect(order()).toEqual(["a1", "q"]);
    expect((await state()).removedModels).toEqual([expect.objectContaining({ accountId: "a1", model: "claude-x" })]);
  });

  test("402 payment required: account locked, next account", async () => {
    script({ a1: [{ status: 402, json: anthropicError("billing_error", "Payment required") }] });
    expect((await post("/v1/messages", msg("p/claude-x"))).status).toBe(200);
    expect(order()).toEqual(["a1", "a2"]);
    expect((await state()).locks.map((l) => l.accountId)).toEqual(["a1"]);
  });

  test("prompt too large: returned to the client at once, no fallback, no cooldown", async () => {
    script({ a1: [{ status: 400, json: anthropicError("invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum") }] });
    const res = await post("/v1/messages", msg("duo"));
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("prompt is too long");
    expect(order()).toEqual(["a1"]);
    expect((await state()).cooldowns).toEqual([]);
  });

  test("no capacity available: returned at once", async () => {
    script({ a1: [{ status: 503, json: anthropicError("overloaded_error", "No capacity available for model claude-x") }] });
    const res = await post("/v1/messages", msg("duo"));
    expect(res.status).toBe(503);
    expect(order()).toEqual(["a1"]);
  });

  test("a rejected parameter (other 4xx) with a two-target combo: no other account, next target serves", async () => {
    script({ a1: [{ status: 400, json: anthropicError("invalid_request_error", "top_k: unsupported value") }] });
    const res = await post("/v1/messages", msg("duo"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by q");
    expect(order()).toEqual(["a1", "q"]);
    expect((await state()).cooldowns).toEqual([]);
  });

  test("a rejected parameter on a single target: the client gets the upstream's 400, not a 503", async () => {
    script({ a1: [{ status: 400, json: anthropicError("invalid_request_error", "top_k: unsupported value") }] });
    const res = await post("/v1/chat/completions", { model: "p/claude-x", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.message).toContain("top_k");
    expect(order()).toEqual(["a1"]);
  });

  test("503 → same-account retries, then success on the same account", async () => {
    const e503: FakeReply = { status: 503, json: anthropicError("api_error", "unavailable") };
    script({ a1: [e503, e503] });
    const res = await post("/v1/messages", msg("p/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by a1");
    expect(order()).toEqual(["a1", "a1", "a1"]);
    expect(res.headers.get("x-switchyard-fallback")).toBeNull();
    expect((await state()).cooldowns).toEqual([]);
  });

  test("503 from an OpenAI-compatible provider worded 'overloaded', on its only account: retried there and served (SPEC 6.2 loop 1)", async () => {
    const e503: FakeReply = { status: 503, json: { error: { message: "The server is overloaded or not ready yet.", type: "server_error", code: null } } };
    script({ q: [e503] });
    const res = await post("/v1/chat/completions", { model: "q/glm-x", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe("served by q");
    expect(order()).toEqual(["q", "q"]);
    expect(res.headers.get("x-switchyard-fallback")).toBeNull();
  });

  test("503 three times then a fourth: the same account gets exactly 1 + 3 attempts, then the next account", async () => {
    const e503: FakeReply = { status: 503, json: anthropicError("overloaded_error", "Overloaded") };
    script({ a1: [e503, e503, e503, e503] });
    const res = await post("/v1/messages", msg("p/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by a2");
    expect(order()).toEqual(["a1", "a1", "a1", "a1", "a2"]);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
  });

  test("500 is not retried on the same account: short cooldown, next account", async () => {
    script({ a1: [{ status: 500, json: anthropicError("api_error", "internal") }] });
    const t0 = Date.now();
    expect((await post("/v1/messages", msg("p/claude-x"))).status).toBe(200);
    expect(order()).toEqual(["a1", "a2"]);
    const cd = (await state()).cooldowns.find((c) => c.accountId === "a1")!;
    expect(cd.until - t0).toBeGreaterThanOrEqual(29_000);
  });

  test("connection refused: same-account retries, then the combo's next target", async () => {
    const res = await post("/v1/messages", msg("deadfirst"));
    expect(res.status).toBe(200);
    expect(order()).toEqual(["q"]);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts.map((a) => a.classification ?? "ok")).toEqual(["transport", "transport", "transport", "transport", "ok"]);
  });

  test("headers never arriving: header timeout, then the next account at once (no same-account retry while another candidate remains)", async () => {
    script({ t1: [{ hang_before_headers: true }, { hang_before_headers: true }, { hang_before_headers: true }, { hang_before_headers: true }] });
    // Streamed: a non-streamed call's headers come with its whole reply, so its wait is reply_timeout_ms.
    const res = await post("/v1/messages", msg("t/claude-x", true));
    expect(res.status).toBe(200);
    await res.text();
    // SPEC 6.2's same-account retries name 502/503/504 and connection errors; a hang is not retried on the
    // same account while another may answer (pipeline/attempt-budget.ts; it waited 4 x 300 ms here before).
    expect(order()).toEqual(["t1", "t2"]);
    // The upstream was reached; it sent no headers in time (it read "could not be reached (header_timeout)").
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts[0]).toMatchObject({
      classification: "transport",
      error: "Upstream t sent no response headers within 300 ms (header_timeout).",
      effect: "cooldown (model) 30 s; next_account; no same-account retry after a header timeout while other candidates remain",
    });
    // The second account's pick is not "first eligible account".
    expect(trace.decisions.filter((d) => d.verdict === "in" && d.subject.includes(" @ ")).map((d) => [d.subject, d.reason.split("; ")[0]])).toEqual([
      ["t/claude-x @ t1", "first eligible account"],
      ["t/claude-x @ t2", "next eligible account (1 tried before it)"],
    ]);
  }, 60_000);

  test("a 200 that opens with an overloaded error event is a failed attempt: same-account retry, then success", async () => {
    const sse = `event: error\ndata: ${JSON.stringify(anthropicError("overloaded_error", "Overloaded"))}\n\n`;
    script({ a1: [{ sse }] });
    const res = await post("/v1/messages", msg("p/claude-x", true));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("overloaded_error");
    const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join("");
    expect(deltas).toBe("served by a1");
    expect(order()).toEqual(["a1", "a1"]);
  });

  test("non-final target's non-streaming 200 with nothing usable → next target", async () => {
    script({ a1: [{ json: { id: "msg_1", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }] });
    const res = await post("/v1/messages", msg("duo"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by q");
    expect(order()).toEqual(["a1", "q"]);
  });

  test("ten 5xx in a row open the provider circuit; the next request skips the provider", async () => {
    const e500: FakeReply = { status: 500, json: anthropicError("api_error", "boom") };
    script({ r: Array(20).fill(e500) });
    // max_attempts (8) ends the first request on r's accounts: the client gets the last error.
    expect((await post("/v1/messages", msg("rfirst"))).status).toBe(500);
    // The second reaches the tenth consecutive 5xx; the circuit opens and the next target serves.
    expect((await post("/v1/messages", msg("rfirst"))).status).toBe(200);
    expect(order().filter((w) => w === "r")).toHaveLength(10);
    expect((await state()).circuits.map((c) => c.providerId)).toEqual(["r"]);
    gw.fake.reset();
    script({});
    const res = await post("/v1/messages", msg("rfirst"));
    expect(res.status).toBe(200);
    expect(order()).toEqual(["q"]);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.decisions).toContainEqual({ subject: "r/claude-x", verdict: "out", reason: "provider r circuit open" });
    // Asked for the provider alone, the client hears why and for how long; nothing goes upstream.
    const alone = await post("/v1/messages", msg("r/claude-x"));
    const body = (await alone.json()) as { error: { type: string; message: string } };
    expect(alone.status).toBe(503);
    expect(body.error.message).toMatch(/^Provider r is not being called until \d{4}-\d\d-\d\dT[\d:.]+Z: its circuit is open after consecutive upstream 5xx errors \(switchyard accounts status shows it\)\. Nothing was sent upstream\.$/);
    expect(Number(alone.headers.get("retry-after"))).toBeWithin(290, 301);
    expect(order()).toEqual(["q"]);
    // accounts status: r's accounts are not eligible while the circuit is open, and say why.
    const status = (await (await fetch(`${gw.url}/admin/api/accounts`)).json()) as { accounts: { id: string; eligible: boolean; reasons: string[] }[] };
    const r1 = status.accounts.find((a) => a.id === "r1")!;
    expect({ eligible: r1.eligible, reasons: r1.reasons.map((x) => x.replace(/\d{4}-.*Z$/, "T")) }).toEqual({ eligible: false, reasons: ["provider r circuit open (consecutive upstream 5xx) until T"] });
  });

  test("all accounts cooling: 429 with Retry-After until the first is free", async () => {
    const t0 = Date.now();
    script({
      a1: [{ status: 429, headers: { "retry-after": "40" }, json: anthropicError("rate_limit_error", "Rate limited") }],
      a2: [{ status: 429, headers: { "retry-after": "20" }, json: anthropicError("rate_limit_error", "Rate limited") }],
    });
    const first = await post("/v1/messages", msg("p/claude-x"));
    expect(first.status).toBe(429);
    expect(Number(first.headers.get("retry-after"))).toBeGreaterThanOrEqual(19);
    gw.fake.reset();
    const res = await post("/v1/messages", msg("p/claude-x"));
    expect(res.status).toBe(429);
    const ra = Number(res.headers.get("retry-after"));
    expect(ra).toBeGreaterThanOrEqual(18);
    expect(ra).toBeLessThanOrEqual(21 - Math.floor((Date.now() - t0) / 1000) + 1);
    expect(((await res.json()) as any).error.type).toBe("rate_limit_error");
    expect(gw.fake.requests).toEqual([]);
  });
});

describe("after the commit point (SPEC 6.4): the SDK raises, never a finished reply", () => {
  const textStream = (format: "anthropic-messages" | "openai-chat" | "openai-responses") =>
    simpleReply(format, { text: "one two three four five six seven eight nine ten" }, true).sse!;

  test("Anthropic: reset mid-stream → exactly one event: error; the SDK throws", async () => {
    const sse = textStream("anthropic-messages");
    script({ a1: [{ sse, reset_after_bytes: sse.indexOf("four") + 20 }] });
    const client = new Anthropic({ apiKey: "x", baseURL: gw.url, maxRetries: 0 });
    const stream = client.messages.stream(msg("p/claude-x") as never);
    let text = "";
    stream.on("text", (t) => (text += t));
    await expect(stream.finalMessage()).rejects.toThrow();
    expect(text.length).toBeGreaterThan(0);
    expect(order()).toEqual(["a1"]);
  });

  test("Anthropic: a silent stream is closed after the idle timeout with an in-band error", async () => {
    const sse = textStream("anthropic-messages");
    script({ t1: [{ sse, stall_after_bytes: sse.indexOf("four") + 20 }] });
    const res = await post("/v1/messages", msg("t/claude-x", true));
    const body = await res.text();
    const events = [...body.matchAll(/^event: (\S+)/gm)].map((m) => m[1]);
    expect(events.at(-1)).toBe("error");
    expect(events.filter((e) => e === "error")).toHaveLength(1);
    expect(events).not.toContain("message_stop");
    expect(events).not.toContain("message_delta");
  });

  test("Chat client on an Anthropic provider: reset mid-stream → error frame then [DONE]; the SDK raises", async () => {
    const sse = textStream("anthropic-messages");
    // The reset comes once the client has the stream's headers (sent at the commit), not after a fixed
    // 100 ms: on a loaded machine the gateway could see the reset first and retry before committing.
    const committed = Promise.withResolvers<void>();
    script({ a1: [{ sse, reset_after_bytes: sse.indexOf("four") + 20, reset_when: committed.promise }] });
    const client = new OpenAI({ apiKey: "x", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const run = async () => {
      const s = await client.chat.completions.create({ model: "p/claude-x", messages: [{ role: "user", content: "hi" }], stream: true });
      committed.resolve();
      for await (const _ of s) {
        /* drain */
      }
    };
    try {
      await expect(run()).rejects.toThrow();
    } finally {
      committed.resolve();
    }
  });

  test("Responses client on an Anthropic provider: reset mid-stream → response.failed; the SDK raises", async () => {
    const sse = textStream("anthropic-messages");
    // Each reset comes once the client has the stream (committed), not after a fixed 100 ms.
    const first = Promise.withResolvers<void>();
    const second = Promise.withResolvers<void>();
    try {
      script({ a1: [{ sse, reset_after_bytes: sse.indexOf("four") + 20, reset_when: first.promise }] });
      const client = new OpenAI({ apiKey: "x", baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const res = await post("/v1/responses", { model: "p/claude-x", input: "hi", stream: true });
      first.resolve();
      const body = await res.text();
      expect(body).toContain("response.failed");
      expect(body).not.toContain("response.completed");
      script({ a1: [{ sse, reset_after_bytes: sse.indexOf("four") + 20, reset_when: second.promise }] });
      const stream = client.responses.stream({ model: "p/claude-x", input: "hi" });
      stream.on("event", () => second.resolve());
      await expect(stream.finalResponse()).rejects.toThrow();
    } finally {
      first.resolve();
      second.resolve();
    }
  });

  test("a reset before the first content is a failed attempt, retried before commit", async () => {
    const sse = textStream("anthropic-messages");
    script({ a1: [{ sse, reset_after_bytes: 40 }] });
    const client = new Anthropic({ apiKey: "x", baseURL: gw.url, maxRetries: 0 });
    const m = await client.messages.stream(msg("p/claude-x") as never).finalMessage();
    expect(m.content[0]).toMatchObject({ type: "text", text: "served by a1" });
    expect(order()).toEqual(["a1", "a1"]);
  });

  test("a JSON (non-streamed) reply cut off mid-body is a failed attempt, retried before anything reaches the client", async () => {
    const json = simpleReply("anthropic-messages", { text: "one two three four five six seven eight nine ten" }, false).json;
    script({ a1: [{ json, reset_after_bytes: 60 }] });
    const res = await post("/v1/messages", msg("p/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0]).toMatchObject({ type: "text", text: "served by a1" });
    expect(order()).toEqual(["a1", "a1"]);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts.map((a) => a.status ?? a.classification)).toEqual(["transport", 200]);
  });

  test("a JSON reply that goes silent mid-body is given up after the idle timeout and served by the next attempt", async () => {
    const json = simpleReply("anthropic-messages", { text: "one two three four five six seven eight nine ten" }, false).json;
    script({ t1: [{ json, stall_after_bytes: 60 }] });
    const t0 = Date.now();
    const res = await post("/v1/messages", msg("t/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toMatch(/^served by t[12]$/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950); // the provider's idle_timeout_ms is 1000
    expect(order()).toHaveLength(2);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts[0]).toMatchObject({ accountId: "t1", status: 504 });
  });

  test("a stream gathered for a non-streaming client that goes silent after its stop reason is served finished by that attempt (SPEC 6.4)", async () => {
    const sse = textStream("anthropic-messages");
    // Everything up to the message_stop arrives, then the upstream says nothing more and keeps the connection.
    script({ t1: [{ sse, stall_after_bytes: sse.indexOf("event: message_stop") }] });
    const res = await post("/v1/messages", msg("t/claude-x"));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ content: [{ type: "text", text: "one two three four five six seven eight nine ten" }], stop_reason: "end_turn" });
    expect(order()).toEqual(["t1"]);
  });

  /** A streamed reply that opens and then sends keep-alive pings every 50 ms, forever: it never holds anything. */
  const pingsOnly = (): FakeReply => {
    const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const start = ev("message_start", { type: "message_start", message: { id: "msg_p", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
    return { sse: start, endless: ev("ping", { type: "ping" }), endless_every_ms: 50 };
  };

  test("a stream gathered for a non-streaming client that sends only pings is given up after the idle timeout and served by the next attempt", async () => {
    // Pings every 50 ms keep bytes flowing far inside the provider's idle_timeout_ms (1000), but the
    // reply holds nothing: the attempt fails like a silent upstream (SPEC 6.4's idle timeout, 6.3's
    // timeout row) and the attempt loop moves on within the pre-commit deadline.
    script({ t1: [pingsOnly()] });
    const res = await post("/v1/messages", msg("t/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toMatch(/^served by t[12]$/);
    expect(order()).toHaveLength(2);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts[0]).toMatchObject({ accountId: "t1", status: 504 });
    expect(trace.attempts[0].error).toBe("Upstream t sent only events without content (keep-alive pings) for 1 s.");
  });

  test("pings on every attempt: the client gets a 504 in its own format saying so", async () => {
    script({ k1: Array.from({ length: 8 }, pingsOnly), k2: Array.from({ length: 8 }, pingsOnly) });
    const res = await post("/v1/messages", msg("k/claude-x"));
    expect(res.status).toBe(504);
    const body = (await res.json()) as any;
    expect(body.type).toBe("error");
    expect(body.error.message).toBe("Upstream k sent only events without content (keep-alive pings) for 0.25 s.");
    expect(order()).toEqual(["k1", "k1", "k1", "k1", "k2", "k2", "k2", "k2"]);
  }, 60_000);

  test("pings after the gathered reply's first content keep it alive, as they keep a stream alive (SPEC 6.4)", async () => {
    const sse = textStream("anthropic-messages");
    const cut = sse.indexOf("event: content_block_delta", sse.indexOf("event: content_block_delta") + 1);
    const ping = `event: ping\ndata: ${JSON.stringify({ type: "ping" })}\n\n`;
    // The reply's first text arrives, then 12 pings 250 ms apart (3 s, three idle timeouts), then the rest.
    const body = sse.slice(0, cut) + ping.repeat(12) + sse.slice(cut);
    const cuts = Array.from({ length: 13 }, (_, i) => cut + i * ping.length);
    script({ t1: [{ sse: body, split_at: cuts, delay_ms: 250 }] });
    const res = await post("/v1/messages", msg("t/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("one two three four five six seven eight nine ten");
    expect(order()).toEqual(["t1"]);
  }, 60_000);

  test("a JSON reply that trickles in with gaps shorter than the idle timeout is served whole, by one attempt", async () => {
    const json = simpleReply("anthropic-messages", { text: "one two three four five six seven eight nine ten" }, false).json;
    // Five gaps of 250 ms: 1.25 s in all, past the provider's idle_timeout_ms (1000), no gap reaching it.
    script({ t1: [{ json, split_at: [10, 40, 80, 120, 160], delay_ms: 250 }] });
    const res = await post("/v1/messages", msg("t/claude-x"));
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("one two three four five six seven eight nine ten");
    expect(order()).toEqual(["t1"]);
  });

  test("a client that disconnects mid-stream aborts the upstream call; usage recorded as client_closed", async () => {
    const sse = textStream("anthropic-messages");
    // The rest of the reply waits for the test's end: the upstream call is still in flight when the
    // client goes however slow the machine, and only the gateway's abort ends it before then.
    const rest = Promise.withResolvers<void>();
    script({ a1: [{ sse, split_at: [sse.indexOf("two"), sse.indexOf("five")], resume_after_first: rest.promise }] });
    try {
      const res = await post("/v1/messages", msg("p/claude-x", true), {});
      const reader = res.body!.getReader();
      await reader.read();
      await reader.cancel();
      // Polled until the fake sees the abort (not for a fixed 2 s: on a loaded machine it came later).
      const end = Date.now() + 15_000;
      while (gw.fake.aborted === 0 && Date.now() < end) await Bun.sleep(50);
      expect(gw.fake.aborted).toBe(1);
      await gw.app.store.flush();
      const calls = await gw.app.store.recentCalls(5);
      const call = calls.find((c) => c.requestId === res.headers.get("x-request-id"))!;
      expect(call.outcome).toBe("client_closed");
    } finally {
      rest.resolve();
    }
  }, 60_000);
});

describe("restart", () => {
  test("a cooldown in force survives a restart", async () => {
    script({ a1: [{ status: 429, headers: { "retry-after": "120" }, json: anthropicError("rate_limit_error", "Rate limited") }] });
    expect((await post("/v1/messages", msg("p/claude-x"))).status).toBe(200);
    const dataDir = gw.dataDir;
    const fake = gw.fake;
    await gw.stopGatewayOnly();
    gw = await startGateway(YAML, { env: ENV, dataDir, fake });
    fake.reset();
    script({});
    expect((await post("/v1/messages", msg("p/claude-x"))).status).toBe(200);
    expect(order()).toEqual(["a2"]);
  });
});
