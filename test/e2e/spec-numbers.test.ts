/**
 * Every number and scope of SPEC 6.1–6.3, A-2 and G-4, pinned at its boundary through the real
 * gateway. Expectations are literals read from the SPEC, never the code's constants, so changing a
 * constant fails a test. The gateway runs on a virtual clock: `now()` moves only when a test advances
 * it or the gateway sleeps (a sleep returns at once and adds its length), so "until" times are exact
 * and a 5-minute boundary takes no real time. What is observed is what a user sees: which account the
 * next request reaches (the fake upstream's record), what the client gets (status, headers, body), and
 * what `accounts status` (GET /admin/api/accounts) reports.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import type { FakeReply, ReceivedRequest } from "../support/fake-upstream.ts";
import type { Clock } from "../../pipeline/ports.ts";

/** A clock that stands still until told to move; the gateway's sleeps move it instead of waiting. */
class VirtualClock implements Clock {
  t = Date.now();
  /** Every sleep the gateway asked for, in ms, in order. */
  sleeps: number[] = [];
  now(): number {
    return this.t;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.t += ms;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const YAML = `
providers:
  - id: p
    kind: anthropic
    base_url: "{{FAKE}}/p"
  - id: b
    kind: anthropic
    base_url: "{{FAKE}}/b"
  - id: dead
    kind: anthropic
    base_url: "http://127.0.0.1:9"
  - id: r
    kind: anthropic
    base_url: "{{FAKE}}/r"
  - id: q
    kind: openai-compatible
    base_url: "{{FAKE}}/q/v1"
accounts:
  - { id: a1, provider: p, api_key: env:KEY_A1 }
  - { id: a2, provider: p, api_key: env:KEY_A2 }
  - { id: b1, provider: b, api_key: env:KEY_B1 }
  - { id: d1, provider: dead, api_key: env:KEY_B1 }
${Array.from({ length: 10 }, (_, i) => `  - { id: r${i + 1}, provider: r, api_key: env:KEY_R }\n`).join("")}combos:
  - name: rfirst
    targets:
      - model: r/claude-x
      - model: q/glm-x
settings:
  precommit_deadline_ms: 600000
  max_attempts: 20
`;
const ENV = { KEY_A1: "sk-spec-account-one", KEY_A2: "sk-spec-account-two", KEY_B1: "sk-spec-account-b", KEY_R: "sk-spec-pool-r" };
const ACCOUNTS = ["a1", "a2", "b1", "d1", ...Array.from({ length: 10 }, (_, i) => `r${i + 1}`)];

const clock = new VirtualClock();
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV, clock });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  gw.fake.reset();
  gw.fake.handle(undefined);
  for (const a of ACCOUNTS) {
    await gw.app.store.clearCooldown(a);
    await gw.app.store.clearLock(a);
    await gw.app.store.restoreModel(a);
  }
  for (const p of ["p", "b", "dead", "r"]) await gw.app.store.clearCircuit(p);
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
  gw.app.registry.resetCounters();
  clock.sleeps = [];
  clock.advance(7 * DAY); // whatever a test left behind has long expired
});

/** Which account (or provider, for the keyless q) a request reached. */
const who = (r: ReceivedRequest) => {
  const key = r.headers["x-api-key"];
  const id = Object.entries(ENV).find(([, v]) => v === key)?.[0];
  if (id === "KEY_R") return "r";
  if (id) return id.slice(4).toLowerCase();
  return r.path.startsWith("/q/") ? "q" : "?";
};
const reached = () => gw.fake.requests.map(who);
let convo = 0;
/** A request in a new conversation unless `text` names one. */
const msg = (model: string, text?: string) => ({ model, max_tokens: 50, messages: [{ role: "user", content: text ?? `conversation ${++convo}` }] });
/** POSTs `body` (JSON text or bytes as they are, anything else as JSON) to `path`. */
const post = (body: unknown, path = "/v1/messages") =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body) });
const anthropicError = (type: string, message: string) => ({ type: "error", error: { type, message } });
/** The first request the fake sees gets `reply`; the rest are answered normally. */
const once = (...replies: FakeReply[]) => gw.fake.enqueue(...replies);
async function accountStatus(id: string) {
  const res = await fetch(`${gw.url}/admin/api/accounts`);
  const doc = (await res.json()) as { accounts: Array<{ id: string; eligible: boolean; reasons: string[]; lock?: { reason: string; until: number | null; advice: string }; cooldowns: Array<{ model: string; reason: string; until: number; level: number }>; circuit: { state: string; openUntil?: number } }> };
  return doc.accounts.find((a) => a.id === id)!;
}
const rateLimited = (headers: Record<string, string>, message = "Rate limited"): FakeReply => ({ status: 429, headers, json: anthropicError("rate_limit_error", message) });

describe("SPEC 6.3 row 1: 429 with a reset time → cooldown until then, capped at 6 h", () => {
  for (const [what, headers, ms] of [
    ["Retry-After 21599 s (just under 6 h)", { "retry-after": "21599" }, 21_599 * SECOND],
    ["Retry-After exactly 6 h", { "retry-after": "21600" }, 6 * HOUR],
    ["Retry-After 10 h: capped at 6 h", { "retry-after": "36000" }, 6 * HOUR],
    ["retry-after-ms 2500 (OpenAI SDK's header)", { "retry-after-ms": "2500" }, 2500],
  ] as const) {
    test(what, async () => {
      once(rateLimited(headers));
      const t0 = clock.now();
      const res = await post(msg("b/claude-x"));
      expect(res.status).toBe(429);
      const st = await accountStatus("b1");
      expect(st.cooldowns).toEqual([{ model: "claude-x", reason: "429 with a reset time", until: t0 + ms, level: 0 }]);
      // Just before the end the account is not called; at the end it is.
      clock.advance(ms - 1);
      gw.fake.reset();
      const during = await post(msg("b/claude-x"));
      expect(during.status).toBe(429);
      expect(during.headers.get("retry-after")).toBe("1");
      expect(reached()).toEqual([]);
      clock.advance(1);
      expect((await post(msg("b/claude-x"))).status).toBe(200);
      expect(reached()).toEqual(["b1"]);
    });
  }

  test("the cooldown is for that model only: another model of the same account is served meanwhile", async () => {
    once(rateLimited({ "retry-after": "120" }));
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    gw.fake.reset();
    expect((await post(msg("b/claude-other"))).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
  });
});

describe("SPEC 6.3 row 2: a 429 worded as a rate limit with healthy quota → 90 s for that model", () => {
  test("cooldown exactly 90 s; the next account serves meanwhile; at 90 s the account is back", async () => {
    once(rateLimited({}, "Number of request tokens has exceeded your per-minute rate limit"));
    const t0 = clock.now();
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    expect((await accountStatus("b1")).cooldowns).toEqual([{ model: "claude-x", reason: "429 rate limit (per-minute window)", until: t0 + 90 * SECOND, level: 0 }]);
    clock.advance(90 * SECOND - 1);
    gw.fake.reset();
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    expect(reached()).toEqual([]);
    clock.advance(1);
    expect((await post(msg("b/claude-x"))).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
  });
});

describe("SPEC 6.3 row 3: other 429, overloaded, 529 → backoff 2 s, doubling, ceiling 5 min", () => {
  test("ten 529s in a row on one account: 2, 4, 8 … 256 s, then 5 min, 5 min", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) {
      once({ status: 529, json: anthropicError("overloaded_error", "Overloaded") });
      const t = clock.now();
      const res = await post(msg("b/claude-x"));
      expect(res.status).toBe(529);
      const cd = (await accountStatus("b1")).cooldowns.find((c) => c.model === "claude-x")!;
      seen.push(cd.until - t);
      clock.advance(cd.until - t); // the backoff ends: the next request reaches the account again
    }
    expect(seen).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map((s) => s * SECOND));
    expect(reached()).toEqual(Array(10).fill("b1"));
  });
});

describe("SPEC 6.3 row 3: a 429 that names no reset and is not worded as a rate limit", () => {
  test("backs off 2 s for that model (not the 90 s per-minute rule)", async () => {
    once({ status: 429, text: "Slow down" });
    const t0 = clock.now();
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    expect((await accountStatus("b1")).cooldowns).toEqual([{ model: "claude-x", reason: "429", until: t0 + 2 * SECOND, level: 0 }]);
  });
});

describe("SPEC 6.3: a request too large is returned at once", () => {
  test("413 from the upstream: the client gets it, no other account is tried, no cooldown is written", async () => {
    once({ status: 413, json: anthropicError("request_too_large", "Request exceeds the maximum size") });
    const res = await post(msg("p/claude-x"));
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.type).toBe("request_too_large");
    expect(reached()).toHaveLength(1);
    expect((await accountStatus("a1")).cooldowns).toEqual([]);
    expect((await accountStatus("a2")).cooldowns).toEqual([]);
  });
});

describe("SPEC 6.3 row 4: quota exhausted / spend cap → the whole account is locked until the named reset", () => {
  const spendCap = (headers: Record<string, string>): FakeReply => ({
    status: 429,
    headers,
    json: { type: "error", error: { type: "rate_limit_error", message: "You exceeded your monthly spend limit", details: { error_code: "enforced_spend_limit_reached" } } },
  });

  test("a reset named 3 days ahead is honoured to the millisecond (no 6 h cap), for every model of the account", async () => {
    once(spendCap({ "retry-after": String(3 * 24 * 3600) }));
    const t0 = clock.now();
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    expect((await accountStatus("b1")).lock).toEqual({ reason: "quota exhausted or account blocked", until: t0 + 3 * DAY, advice: "switchyard accounts unlock b1 ends it now" });
    clock.advance(3 * DAY - 1);
    gw.fake.reset();
    expect((await post(msg("b/claude-other"))).status).toBe(429);
    expect(reached()).toEqual([]);
    clock.advance(1);
    expect((await post(msg("b/claude-other"))).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
  });

  test("without a named reset the lock lasts until changed", async () => {
    once(spendCap({}));
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    expect((await accountStatus("b1")).lock).toEqual({ reason: "quota exhausted or account blocked", until: null, advice: "replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock b1 once the key works again" });
    clock.advance(30 * DAY);
    gw.fake.reset();
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    expect(reached()).toEqual([]);
  });

  test("a named reset further than 31 days ahead is taken as at most 31 days (switchyard's bound on a monthly window)", async () => {
    once(spendCap({ "retry-after": String(90 * 24 * 3600) }));
    const t0 = clock.now();
    expect((await post(msg("b/claude-x"))).status).toBe(429);
    expect((await accountStatus("b1")).lock?.until).toBe(t0 + 31 * DAY);
  });
});

describe("SPEC 6.3: 402 payment required → lock the account, honouring a named reset", () => {
  test("402 with Retry-After: locked until then, for every model; the next account serves", async () => {
    once({ status: 402, headers: { "retry-after": "7200" }, json: anthropicError("billing_error", "Payment required") });
    const t0 = clock.now();
    expect((await post(msg("b/claude-x"))).status).toBe(402);
    expect((await accountStatus("b1")).lock).toEqual({ reason: "402 payment required", until: t0 + 2 * HOUR, advice: "switchyard accounts unlock b1 ends it now" });
    clock.advance(2 * HOUR - 1);
    gw.fake.reset();
    expect((await post(msg("b/claude-y"))).status).toBe(503);
    expect(reached()).toEqual([]);
    clock.advance(1);
    expect((await post(msg("b/claude-y"))).status).toBe(200);
  });

  test("402 without a reset: locked until changed", async () => {
    once({ status: 402, json: anthropicError("billing_error", "Payment required") });
    expect((await post(msg("b/claude-x"))).status).toBe(402);
    expect((await accountStatus("b1")).lock).toEqual({ reason: "402 payment required", until: null, advice: "replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock b1 once the key works again" });
  });
});

describe("SPEC 6.3: 401 / credential 403 on an API key → credential disabled; model-scoped 403 → pairing removed, next target", () => {
  test("403 naming an invalid key disables the account for every model", async () => {
    once({ status: 403, json: anthropicError("permission_error", "Invalid API key provided") });
    // The provider refused the gateway's own key, not the client's: a 503 that says so (test/e2e/upstream-auth.test.ts).
    const first = await post(msg("b/claude-x"));
    expect(first.status).toBe(503);
    expect(((await first.json()) as { error: { message: string } }).error.message).toStartWith("No account of b could authenticate upstream");
    expect((await accountStatus("b1")).eligible).toBe(false);
    gw.fake.reset();
    clock.advance(1 * DAY);
    expect((await post(msg("b/claude-y"))).status).toBe(503);
    expect(reached()).toEqual([]);
  });

  test("403 'no access to this model': that model is removed from the account, another model still served", async () => {
    once({ status: 403, json: anthropicError("permission_error", "You do not have access to the model claude-x") });
    expect((await post(msg("b/claude-x"))).status).toBe(403);
    gw.fake.reset();
    // not a 503 "right now" (an overloaded error clients retry): the model is not to be had there
    const again = await post(msg("b/claude-x"));
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { message: string } }).error.message).toBe("The model claude-x is not available at provider b: model removed for this account: 403 model not available to this account.");
    expect(reached()).toEqual([]);
    expect((await post(msg("b/claude-y"))).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
  });
});

describe("SPEC 6.2 loop 1 and 6.1: same-account retries", () => {
  test("502/503/504: up to 3 retries on the same account, 100 ms doubling between them, then a 30 s cooldown of that model (SPEC 6.2 loop 2)", async () => {
    const e = (status: number): FakeReply => ({ status, json: anthropicError("api_error", "upstream trouble") });
    once(e(502), e(503), e(504), e(503));
    const t0 = clock.now();
    const res = await post(msg("b/claude-x"));
    expect(res.status).toBe(503);
    expect(reached()).toEqual(["b1", "b1", "b1", "b1"]);
    expect(clock.sleeps).toEqual([100, 200, 400]);
    const st = await accountStatus("b1");
    expect(st.cooldowns).toEqual([{ model: "claude-x", reason: "upstream 503", until: t0 + 700 + 30 * SECOND, level: 0 }]);
    // The account stays eligible as a whole: its other models are served at once.
    expect(st.eligible).toBe(true);
    gw.fake.reset();
    expect((await post(msg("b/claude-other"))).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
    // The model that failed is not sent there until the 30 s are over; the 503 says when it is free.
    gw.fake.reset();
    clock.advance(t0 + 700 + 20 * SECOND - clock.now());
    const cooling = await post(msg("b/claude-x"));
    expect(cooling.status).toBe(503);
    expect(cooling.headers.get("retry-after")).toBe("10");
    expect(reached()).toEqual([]);
    clock.advance(10 * SECOND);
    expect((await post(msg("b/claude-x"))).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
  });

  test("a 503 asking to wait exactly 60 s is retried on the same account after 60 s", async () => {
    once({ status: 503, headers: { "retry-after": "60" }, json: anthropicError("api_error", "busy") });
    const res = await post(msg("p/claude-x"));
    expect(res.status).toBe(200);
    const [first, second] = reached();
    expect(second).toBe(first);
    expect(clock.sleeps).toEqual([60 * SECOND]);
  });

  test("a 503 asking to wait 61 s is not retried there: the next account serves at once", async () => {
    once({ status: 503, headers: { "retry-after": "61" }, json: anthropicError("api_error", "busy") });
    const res = await post(msg("p/claude-x"));
    expect(res.status).toBe(200);
    const [first, second] = reached();
    expect(second).not.toBe(first);
    expect(clock.sleeps).toEqual([]);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
  });

  test("500 is not retried on the same account; its 30 s cooldown is for that model, the account's others still serve", async () => {
    once({ status: 500, json: anthropicError("api_error", "internal") });
    const t0 = clock.now();
    expect((await post(msg("b/claude-x"))).status).toBe(500);
    expect(reached()).toEqual(["b1"]);
    expect((await accountStatus("b1")).cooldowns).toEqual([{ model: "claude-x", reason: "upstream 500", until: t0 + 30 * SECOND, level: 0 }]);
    gw.fake.reset();
    expect((await post(msg("b/claude-y"))).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
    clock.advance(30 * SECOND - 1);
    gw.fake.reset();
    expect((await post(msg("b/claude-x"))).status).toBe(503);
    expect(reached()).toEqual([]);
    clock.advance(1);
    expect((await post(msg("b/claude-x"))).status).toBe(200);
  });

  test("connection refused: 1 + 3 attempts on the account, then a 30 s cooldown of that model", async () => {
    const t0 = clock.now();
    const res = await post(msg("dead/claude-x"));
    expect(res.status).toBe(502);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts.map((a) => [a.accountId, a.classification])).toEqual(Array(4).fill(["d1", "transport"]));
    const cd = (await accountStatus("d1")).cooldowns;
    expect(cd).toHaveLength(1);
    expect(cd[0].model).toBe("claude-x");
    expect(cd[0].until - (t0 + 700)).toBe(30 * SECOND);
  });
});

describe("SPEC 6.3: 10 consecutive 5xx open the provider circuit for 5 min", () => {
  const e500: FakeReply = { status: 500, json: anthropicError("api_error", "boom") };

  test("9 consecutive 5xx do not open it", async () => {
    once(...Array(9).fill(e500));
    const res = await post(msg("rfirst"));
    expect(res.status).toBe(200);
    expect(reached()).toEqual([...Array(9).fill("r"), "r"]);
    expect((await accountStatus("r1")).circuit.state).toBe("closed");
  });

  test("the 10th opens it: skipped for 5 min minus 1 ms, then one half-open probe", async () => {
    once(...Array(10).fill(e500));
    const t0 = clock.now();
    const first = await post(msg("rfirst"));
    expect(first.status).toBe(200);
    expect(reached()).toEqual([...Array(10).fill("r"), "q"]);
    expect((await accountStatus("r1")).circuit).toMatchObject({ state: "open", openUntil: t0 + 5 * MINUTE });
    clock.advance(5 * MINUTE - 1);
    gw.fake.reset();
    const during = await post(msg("rfirst"));
    expect(during.status).toBe(200);
    expect(reached()).toEqual(["q"]);
    clock.advance(1);
    gw.fake.reset();
    const probe = await post(msg("rfirst"));
    expect(probe.status).toBe(200);
    expect(reached()).toEqual(["r"]);
  });
});

describe("SPEC A-2: a conversation binding lasts 15 minutes after the success that wrote it", () => {
  /**
   * One turn of the conversation through the gateway in process, its body handed over parsed: the
   * binding is written after the reply (the after-reply queue, docs/performance.md item 149), which over
   * HTTP runs before or after the test has the reply, as the gateway's next event-loop turn and the
   * client's read fall (a binding dated when it is written instead of at the success failed the HTTP
   * version of this test in 2 of 5 runs). Here it is still queued when the turn returns and the clock
   * moves; the next turn writes it as it starts (the gateway settles the queue before its guard).
   * Returns the `X-Switchyard-Cache` answer.
   */
  const turn = async (text: string) => {
    const value = msg("p/claude-x", text);
    const bytes = new TextEncoder().encode(JSON.stringify(value));
    const res = await gw.app.gateway.handle({
      request: new Request(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" } }),
      body: { value, bytes, maxBytes: bytes.byteLength },
      endpoint: "messages",
      peer: "127.0.0.1",
    });
    expect(res.status).toBe(200);
    return res.headers.get("x-switchyard-cache");
  };

  test("hit at 15 min minus 1 ms (same account), miss at 15 min, counted from the success however late the binding is written", async () => {
    const text = "a conversation bound for fifteen minutes";
    expect(await turn(text)).toBe("miss");
    const bound = reached()[0];
    clock.advance(15 * MINUTE - 1);
    expect(await turn(text)).toBe("hit");
    expect(reached()[1]).toBe(bound);
    // The hit re-bound it for 15 minutes from its success, not from when the binding was written (the next turn's start).
    clock.advance(15 * MINUTE);
    expect(await turn(text)).toBe("miss");
  });
});

describe("SPEC G-4: body size limit 32 MiB, token limits positive", () => {
  const LIMIT = 32 * 1024 * 1024;
  const MESSAGES_HEAD = '{"model":"b/claude-x","max_tokens":5,"messages":[{"role":"user","content":"';
  const CHAT_HEAD = '{"model":"b/claude-x","messages":[{"role":"user","content":"';
  /** The buffer every body of this block is written into (made once: 32 MiB + 1 bytes). */
  let buffer: Uint8Array | undefined;
  /**
   * A request of exactly `size` bytes, `head` + "aaa…" + `tail`, as bytes: a view of {@link buffer}, valid
   * until the next call. Made as a string, each 32 MiB body was three 32 MiB copies in the test process
   * (the repeat, its flattened concatenation, fetch's UTF-8 encoding) before the gateway read a byte:
   * the 413 test (two such bodies, refused by their declared length) took 3.3× the CPU it takes now.
   */
  const bodyOf = (size: number, head = MESSAGES_HEAD, tail = '"}]}') => {
    buffer ??= new Uint8Array(LIMIT + 1);
    const body = buffer.subarray(0, size);
    body.fill(0x61); // "a"
    const enc = new TextEncoder();
    body.set(enc.encode(head));
    body.set(enc.encode(tail), size - tail.length);
    return body;
  };

  test("a body of exactly 32 MiB is accepted and forwarded", async () => {
    const body = bodyOf(LIMIT);
    expect(body.byteLength).toBe(LIMIT);
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(reached()).toEqual(["b1"]);
  });

  test("one byte more is refused with 413 request_too_large in the client's format, and nothing is sent upstream", async () => {
    const res = await post(bodyOf(LIMIT + 1));
    expect(res.status).toBe(413);
    const body = (await res.json()) as { type: string; error: { type: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("request_too_large");
    const chat = await post(bodyOf(LIMIT + 1, CHAT_HEAD), "/v1/chat/completions");
    expect(chat.status).toBe(413);
    expect(((await chat.json()) as { error: { code: string } }).error.code).toBe("request_too_large");
    expect(reached()).toEqual([]);
  });

  test("max_tokens 0 is refused in every client format; 1 is accepted", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["/v1/messages", { model: "b/claude-x", max_tokens: 0, messages: [{ role: "user", content: "hi" }] }, "max_tokens"],
      ["/v1/chat/completions", { model: "b/claude-x", max_tokens: 0, messages: [{ role: "user", content: "hi" }] }, "max_tokens"],
      ["/v1/chat/completions", { model: "b/claude-x", max_completion_tokens: 0, messages: [{ role: "user", content: "hi" }] }, "max_completion_tokens"],
      ["/v1/responses", { model: "b/claude-x", max_output_tokens: 0, input: "hi" }, "max_output_tokens"],
    ];
    for (const [path, body, param] of cases) {
      const res = await post(body, path);
      expect([path, param, res.status]).toEqual([path, param, 400]);
      expect(JSON.stringify(await res.json())).toContain(param);
    }
    expect(reached()).toEqual([]);
    expect((await post({ model: "b/claude-x", max_tokens: 1, messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    expect(reached()).toEqual(["b1"]);
  });
});
