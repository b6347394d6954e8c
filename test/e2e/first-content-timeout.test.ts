/**
 * A streamed reply's wait for its first content (`providers[].first_content_timeout_ms`,
 * pipeline/commit.ts): before the commit point the client gets nothing, so an upstream that sends only
 * events without content (keep-alive pings) must not hold a streaming client forever. Past the bound
 * the attempt is a timeout (504) and the attempt loop falls back; with nothing left the client gets the
 * 504 in its own format. A block's start is the start of the reply on the passthrough lanes (Anthropic's
 * content_block_start, a Responses output item's start: committed there); on the translated lanes,
 * which commit a block only with its first content, the bound counts again from the block's start, so
 * a model that thinks at length has that long to show the first of it, and one that never does is cut.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { MESSAGE_START, sseEvent, THINKING_ANSWER, THINKING_START, thinkingDelta } from "../support/anthropic-thinking-stream.ts";
import { providersAtFake } from "../support/configs.ts";
import { armedDeadlines } from "../../pipeline/deadline-sweep.ts";

// Pings every 50 ms keep each idle timeout (2 s) far away; the first-content bound is 400 ms.
const YAML = `
${providersAtFake(["p", "anthropic"])}
    idle_timeout_ms: 2000
    first_content_timeout_ms: 400
  - id: s
    kind: anthropic
    base_url: "{{FAKE}}/s"
    idle_timeout_ms: 2000
    first_content_timeout_ms: 400
  - id: q
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: r
    kind: openai-responses
    base_url: "{{FAKE}}/r/v1"
    idle_timeout_ms: 2000
    first_content_timeout_ms: 400
  - id: t
    kind: anthropic
    base_url: "{{FAKE}}/t"
    idle_timeout_ms: 5000
    first_content_timeout_ms: 1000
  - id: u
    kind: openai-responses
    base_url: "{{FAKE}}/u/v1"
    idle_timeout_ms: 5000
    first_content_timeout_ms: 1000
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
  - id: a2
    provider: p
    api_key: env:KEY_A2
  - id: s1
    provider: s
    api_key: env:KEY_S
  - id: r1
    provider: r
    api_key: env:KEY_R
  - id: t1
    provider: t
    api_key: env:KEY_T
  - id: u1
    provider: u
    api_key: env:KEY_U
combos:
  - name: pingfirst
    targets:
      - model: s/claude-x
      - model: q/glm-x
settings:
  precommit_deadline_ms: 20000
`;
const ENV = { KEY_A1: "sk-test-account-one", KEY_A2: "sk-test-account-two", KEY_S: "sk-test-account-s", KEY_R: "sk-test-account-r", KEY_T: "sk-test-account-t", KEY_U: "sk-test-account-u" };

let gw: TestGateway;
beforeAll(async () => {
  // Every scenario races the gateway's timers against the fake's pieces and pings: the fake answers in
  // this process (FakeUpstreamOptions.inProcess, no socket), so a piece it sends before a bound is due
  // is read before that bound fires, however long the test process was stalled meanwhile.
  gw = await startGateway(YAML, { env: ENV, fakeOptions: { inProcess: () => true } });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  gw.fake.reset();
  for (const a of ["a1", "a2", "s1", "r1", "t1", "u1"]) {
    await gw.app.store.clearCooldown(a);
    await gw.app.store.clearLock(a);
  }
  for (const p of ["p", "s", "q", "r", "t", "u"]) await gw.app.store.clearCircuit(p);
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
  gw.app.registry.resetCounters();
});

const who = (r: ReceivedRequest) =>
  r.path.startsWith("/s/") ? "s1" : r.path.startsWith("/r/") ? "r1" : r.path.startsWith("/t/") ? "t1" : r.path.startsWith("/u/") ? "u1" : r.headers["x-api-key"] === ENV.KEY_A1 ? "a1" : r.headers["x-api-key"] === ENV.KEY_A2 ? "a2" : r.format === "openai-chat" ? "q" : "?";
const order = () => gw.fake.requests.map(who);
const ok = (r: ReceivedRequest): FakeReply => simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream);
/** Per-account scripts: a queue of replies each, or `forever` for one that answers every request; else a normal reply. */
function script(s: Partial<Record<"a1" | "a2" | "s1" | "r1" | "t1" | "u1" | "q", FakeReply[] | (() => FakeReply)>>) {
  gw.fake.handle((r) => {
    const q = s[who(r) as "a1"];
    if (typeof q === "function") return q();
    return q && q.length > 0 ? q.shift() : ok(r);
  });
}
const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

const PING = sseEvent("ping", { type: "ping" });

/** A streamed reply that opens and then sends keep-alive pings every 50 ms, forever: it never begins. */
const pingsForever = (): FakeReply => ({ sse: MESSAGE_START, endless: PING, endless_every_ms: 50 });

/**
 * The text a streaming client reads from a reply: Anthropic text and thinking deltas, Chat content and
 * reasoning deltas, joined in order.
 */
async function sseText(res: Response): Promise<string> {
  let out = "";
  for (const line of (await res.text()).split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const d = JSON.parse(line.slice(6));
    out += d.delta?.text ?? d.delta?.thinking ?? d.choices?.[0]?.delta?.content ?? d.choices?.[0]?.delta?.reasoning_content ?? "";
  }
  return out;
}

/** The four client formats streaming from the Anthropic provider `s`, and how each reads its error body. */
const lanes: { name: string; path: string; body: unknown; read: (b: any) => { status?: unknown; message: unknown } }[] = [
  {
    name: "Anthropic Messages",
    path: "/v1/messages",
    body: { model: "s/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] },
    read: (b) => ({ status: b.type === "error" ? b.error.type : undefined, message: b.error.message }),
  },
  {
    name: "OpenAI Chat",
    path: "/v1/chat/completions",
    body: { model: "s/claude-x", stream: true, messages: [{ role: "user", content: "hi" }] },
    read: (b) => ({ status: typeof b.error?.type === "string" ? "error" : undefined, message: b.error.message }),
  },
  {
    name: "OpenAI Responses",
    path: "/v1/responses",
    body: { model: "s/claude-x", stream: true, input: "hi" },
    read: (b) => ({ status: typeof b.error?.type === "string" ? "error" : undefined, message: b.error.message }),
  },
  {
    name: "Gemini",
    path: "/v1beta/models/s/claude-x:streamGenerateContent?alt=sse",
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    read: (b) => ({ status: b.error.status, message: b.error.message }),
  },
];

describe("an upstream that pings forever before its first content", () => {
  test("a streaming client's attempt is given up after first_content_timeout_ms and the next account serves, before the first byte", async () => {
    script({ a1: pingsForever });
    const res = await post("/v1/messages", { model: "p/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    expect(await sseText(res)).toBe("served by a2");
    const o = order();
    expect(o[o.length - 1]).toBe("a2");
    expect(o.filter((x) => x === "a1").length).toBeGreaterThanOrEqual(1);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts[0]).toMatchObject({ accountId: "a1", status: 504 });
    expect(trace.attempts[0].error).toBe(
      "Upstream p sent no content within 0.4 s of its headers, only events without any (keep-alive pings); its first_content_timeout_ms is 400.",
    );
  });

  test("a combo's target that pings forever is left for the next model", async () => {
    script({ s1: pingsForever });
    const res = await post("/v1/chat/completions", { model: "pingfirst", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    expect(await sseText(res)).toBe("served by q");
    expect(order()[order().length - 1]).toBe("q");
  });

  describe("the only candidate: the client gets a 504 in its own format", () => {
    const message = "Upstream s sent no content within 0.4 s of its headers, only events without any (keep-alive pings); its first_content_timeout_ms is 400.";
    for (const lane of lanes) {
      test(lane.name, async () => {
        script({ s1: pingsForever });
        const res = await post(lane.path, lane.body);
        expect(res.status).toBe(504);
        expect(res.headers.get("content-type")).toContain("application/json");
        const seen = lane.read(await res.json());
        expect(seen.message).toBe(message);
        if (lane.name === "Anthropic Messages") expect(seen.status).toBe("timeout_error");
        else if (lane.name === "Gemini") expect(seen.status).toBe("DEADLINE_EXCEEDED");
        else expect(seen.status).toBe("error");
        expect(order().every((x) => x === "s1")).toBe(true);
      });
    }
  });
  test("the bound is a deadline on the gateway's shared sweep, not a timer per stream: while the upstream pings, the stream holds two deadlines (the idle timeout and the bound), and none once it is over", async () => {
    script({ s1: pingsForever });
    const before = armedDeadlines();
    const pending = post("/v1/messages", lanes[0].body);
    // the fake has the request and has sent its first pings: the reply waits before its first content
    let waited = 0;
    while (gw.fake.requests.length === 0 && waited < 200) {
      await Bun.sleep(10);
      waited++;
    }
    await Bun.sleep(150);
    expect(armedDeadlines() - before).toBe(2);
    const res = await pending;
    expect(res.status).toBe(504);
    await res.text();
    expect(armedDeadlines()).toBe(before);
  });
});

/** The rest of an extended-thinking reply after its thinking block's start: the thinking, its signature, the answer. */
const THINKING_REST = thinkingDelta("Let me think about it.") + THINKING_ANSWER;

/** A streamed reply that starts a thinking block and then sends keep-alive pings every 50 ms, forever: nothing of the block ever comes. */
const blockThenPings = (): FakeReply => ({ sse: MESSAGE_START + PING + THINKING_START, endless: PING, endless_every_ms: 50 });

describe("a reply that started a block and then only pings", () => {
  const blockMessage = (p: string) =>
    `Upstream ${p} started a block but sent nothing of it within 0.4 s, only events without content (keep-alive pings); its first_content_timeout_ms is 400.`;

  test("a translated lane (Chat client, Anthropic provider) gives the block first_content_timeout_ms from its start, then the next account serves, before the first byte", async () => {
    script({ a1: blockThenPings });
    const res = await post("/v1/chat/completions", { model: "p/claude-x", stream: true, reasoning_effort: "low", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    expect(await sseText(res)).toBe("served by a2");
    const o = order();
    expect(o[o.length - 1]).toBe("a2");
    expect(o.filter((x) => x === "a1").length).toBeGreaterThanOrEqual(1);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts[0]).toMatchObject({ accountId: "a1", status: 504 });
    expect(trace.attempts[0].error).toBe(blockMessage("p"));
  });

  describe("the only candidate on a translated lane: the client gets a 504 in its own format", () => {
    // The Anthropic client's passthrough commits at the block's start: it gets the block and the pings.
    for (const lane of lanes.filter((l) => l.name !== "Anthropic Messages")) {
      test(lane.name, async () => {
        script({ s1: blockThenPings });
        const res = await post(lane.path, lane.body);
        expect(res.status).toBe(504);
        expect(res.headers.get("content-type")).toContain("application/json");
        const seen = lane.read(await res.json());
        expect(seen.message).toBe(blockMessage("s"));
        if (lane.name === "Gemini") expect(seen.status).toBe("DEADLINE_EXCEEDED");
        else expect(seen.status).toBe("error");
        expect(order().every((x) => x === "s1")).toBe(true);
      });
    }
  });
});

/**
 * A Responses reply that reasons without a summary: `response.created`, `response.in_progress` and the
 * reasoning item's start (`head`), then (`tail`) the reasoning item's end, a message saying "thought it
 * through" and `response.completed`.
 */
function reasoningReply(): { head: string; tail: string } {
  const resp = { id: "resp_r", object: "response", created_at: 1, status: "in_progress", model: "gpt-x", output: [] as unknown[], usage: null as unknown };
  let seq = 0;
  const rev = (type: string, data: Record<string, unknown>) => sseEvent(type, { type, sequence_number: seq++, ...data });
  const reasoning = { id: "rs_1", type: "reasoning", summary: [] };
  const text = "thought it through";
  const message = { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
  const head =
    rev("response.created", { response: resp }) +
    rev("response.in_progress", { response: resp }) +
    rev("response.output_item.added", { output_index: 0, item: reasoning });
  const tail =
    rev("response.output_item.done", { output_index: 0, item: reasoning }) +
    rev("response.output_item.added", { output_index: 1, item: { ...message, status: "in_progress", content: [] } }) +
    rev("response.content_part.added", { item_id: "msg_1", output_index: 1, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }) +
    rev("response.output_text.delta", { item_id: "msg_1", output_index: 1, content_index: 0, delta: text }) +
    rev("response.output_text.done", { item_id: "msg_1", output_index: 1, content_index: 0, text }) +
    rev("response.content_part.done", { item_id: "msg_1", output_index: 1, content_index: 0, part: message.content[0] }) +
    rev("response.output_item.done", { output_index: 1, item: message }) +
    rev("response.completed", {
      response: {
        ...resp,
        status: "completed",
        output: [reasoning, message],
        usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 8 }, total_tokens: 17 },
      },
    });
  return { head, tail };
}

describe("a reply that has begun is not cut by the first-content bound", () => {
  /**
   * Extended thinking: `message_start`, the thinking block's start, then 12 pings 100 ms apart (1.2 s,
   * three first-content bounds) while the model thinks, then the thinking, its signature and the answer.
   */
  function thinkingSlowly(): FakeReply {
    const head = MESSAGE_START + PING + THINKING_START;
    const sse = head + PING.repeat(12) + THINKING_REST;
    const split_at = Array.from({ length: 13 }, (_, i) => head.length + i * PING.length);
    return { sse, split_at, delay_ms: 100 };
  }

  test("a streaming Anthropic client (native passthrough) gets the whole reply from the one attempt", async () => {
    script({ a1: [thinkingSlowly()] });
    const res = await post("/v1/messages", { model: "p/claude-x", max_tokens: 2000, stream: true, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const raw = await res.text();
    expect(raw).toContain("Let me think about it.");
    expect(raw).toContain("thought it through");
    expect(raw).toContain('"stop_reason":"end_turn"');
    expect(order()).toEqual(["a1"]);
  });

  test("a streaming Chat client (translated): the bound counts again from the block's start, so pings before and after it that outlast one bound (0.6 s each, 1.2 s in all, against 1 s) do not cut it", async () => {
    // Pieces 0.2 s apart: message_start, two pings, the block's start (at 0.6 s), two pings, the rest (at 1.2 s).
    const pieces = [MESSAGE_START, PING, PING, THINKING_START, PING, PING, THINKING_REST];
    const split_at = pieces.slice(0, -1).map((_, i) => pieces.slice(0, i + 1).join("").length);
    script({ t1: [{ sse: pieces.join(""), split_at, delay_ms: 200 }] });
    const res = await post("/v1/chat/completions", { model: "t/claude-x", stream: true, reasoning_effort: "low", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    // The thinking reaches a Chat client as reasoning_content, then the answer.
    expect(await sseText(res)).toBe("Let me think about it.thought it through");
    expect(order()).toEqual(["t1"]);
  });

  test("a streaming Chat client (translated): thinking that keeps coming for three bounds is never cut", async () => {
    // The block's start, then 12 thinking deltas 100 ms apart, the last 1.2 s after it (three 0.4 s bounds), then the answer.
    const thought = (i: number) => thinkingDelta(`step ${i}. `);
    const head = MESSAGE_START + THINKING_START;
    const steps = Array.from({ length: 12 }, (_, i) => thought(i));
    const split_at = [head.length, ...steps.map((_, i) => head.length + steps.slice(0, i + 1).join("").length)];
    script({ a1: [{ sse: head + steps.join("") + THINKING_REST, split_at, delay_ms: 100 }] });
    const res = await post("/v1/chat/completions", { model: "p/claude-x", stream: true, reasoning_effort: "low", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await sseText(res)).toBe(steps.map((_, i) => `step ${i}. `).join("") + "Let me think about it.thought it through");
    expect(order()).toEqual(["a1"]);
  });

  test("a streaming Responses client (native passthrough): a reasoning item's start begins the reply, and 1.2 s of pings while it reasons without a summary (three bounds) do not cut it", async () => {
    const { head, tail } = reasoningReply();
    // A keep-alive comment (no event for an SSE reader) every 100 ms while the model reasons.
    const KEEP_ALIVE = ": keep-alive\n\n";
    const split_at = Array.from({ length: 13 }, (_, i) => head.length + i * KEEP_ALIVE.length);
    script({ r1: [{ sse: head + KEEP_ALIVE.repeat(12) + tail, split_at, delay_ms: 100 }] });
    const res = await post("/v1/responses", { model: "r/gpt-x", stream: true, input: "hi" });
    expect(res.status).toBe(200);
    const raw = await res.text();
    expect(raw).toContain('"delta":"thought it through"');
    expect(raw).toContain("event: response.completed");
    expect(order()).toEqual(["r1"]);
  });

  test("a streaming Chat client (translated from a Responses provider): the bound counts again from a reasoning item's start, so keep-alives before and after it that outlast one bound (0.6 s each, 1.2 s in all, against 1 s) do not cut it", async () => {
    // Pieces 0.2 s apart: the response's start, two keep-alives, the reasoning item's start (at 0.6 s), two keep-alives, the rest (at 1.2 s).
    const { head, tail } = reasoningReply();
    const at = head.lastIndexOf("event: response.output_item.added");
    const KEEP_ALIVE = ": keep-alive\n\n";
    const pieces = [head.slice(0, at), KEEP_ALIVE, KEEP_ALIVE, head.slice(at), KEEP_ALIVE, KEEP_ALIVE, tail];
    const split_at = pieces.slice(0, -1).map((_, i) => pieces.slice(0, i + 1).join("").length);
    script({ u1: [{ sse: pieces.join(""), split_at, delay_ms: 200 }] });
    const res = await post("/v1/chat/completions", { model: "u/gpt-x", stream: true, reasoning_effort: "low", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await sseText(res)).toBe("thought it through");
    expect(order()).toEqual(["u1"]);
  });
});
