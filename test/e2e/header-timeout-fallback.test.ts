/**
 * Tryout finding (routing): a first target whose upstream never sends its headers must not spend the
 * whole pre-commit deadline (SPEC 6.1) when a healthy candidate follows (SPEC 6.3: "timeout before
 * headers → next account"). With `header_timeout_ms` equal to `precommit_deadline_ms` (as their
 * defaults are: 60 000 each) the hanging attempt's header wait is cut to half the time left, it is not
 * retried on the same account, and the next target serves. Small configured values stand in for the
 * defaults here; pipeline/attempt-budget.test.ts checks the defaults leave room (computed). The hangs
 * are streamed calls: a non-streamed call's headers come with its whole reply, so its wait is the
 * provider's `reply_timeout_ms` (a GUI tryout: a non-streamed reply of 70 s got a 504 at 60 s).
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = `
providers:
  - id: slow
    kind: anthropic
    base_url: "{{FAKE}}/slow"
    header_timeout_ms: 1500
  - id: good
    kind: anthropic
    base_url: "{{FAKE}}/good"
    header_timeout_ms: 1500
  - id: bad
    kind: anthropic
    base_url: "{{FAKE}}/bad"
accounts:
  - id: s1
    provider: slow
    api_key: env:KEY_S
  - id: g1
    provider: good
    api_key: env:KEY_G1
  - id: g2
    provider: good
    api_key: env:KEY_G2
  - id: b1
    provider: bad
    api_key: env:KEY_B
combos:
  - name: hangfirst
    targets:
      - model: slow/claude-x
      - model: good/claude-x
  - name: badfirst
    targets:
      - model: bad/claude-x
      - model: good/claude-x
settings:
  precommit_deadline_ms: 1500
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, {
    env: { KEY_S: "sk-test-slow-one", KEY_G1: "sk-test-good-one", KEY_G2: "sk-test-good-two", KEY_B: "sk-test-bad-one" },
    // In this process (no socket): the timers race nothing a loaded machine could stall (fallback.test.ts).
    fake: await startFakeUpstream({ inProcess: (path) => path.startsWith("/slow/") || path.startsWith("/good/") }),
  });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  gw.fake.reset();
  for (const a of ["s1", "g1", "g2", "b1"]) await gw.app.store.clearCooldown(a);
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
  gw.app.registry.resetCounters();
});

const post = (model: string, stream = true) =>
  fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, stream, messages: [{ role: "user", content: "hi" }] }) });
/** The text of an Anthropic SSE reply's text deltas. */
const sseText = (sse: string): string =>
  sse
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)) as { delta?: { text?: string } })
    .map((e) => e.delta?.text ?? "")
    .join("");
const where = (r: ReceivedRequest) => r.path.split("/")[1];

test("a first target that hangs before its headers falls back to a healthy next target within the deadline (header wait = deadline), once", async () => {
  gw.fake.handle((r) => (where(r) === "slow" ? { hang_before_headers: true } : simpleReply(r.format!, { text: "served by good", model: r.model }, r.stream)));
  const res = await post("hangfirst");
  const text = sseText(await res.text());
  expect({ status: res.status, fallback: res.headers.get("x-switchyard-fallback"), text, calls: gw.fake.requests.map(where) }).toEqual({
    status: 200,
    fallback: "1",
    text: "served by good",
    calls: ["slow", "good"],
  });
  const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
  expect(trace.attempts[0]!.error).toMatch(/^Upstream slow sent no response headers within \d+ ms \(header_timeout; cut from header_timeout_ms 1500 to half the pre-commit deadline left/);
  expect(trace.attempts[0]!.effect).toBe("cooldown (model) 30 s; next_account; no same-account retry after a header timeout while other candidates remain");
});

test("a lone target that hangs still gets its whole header timeout (nothing to leave time for)", async () => {
  gw.fake.handle(() => ({ hang_before_headers: true }));
  const res = await post("slow/claude-solo");
  expect(res.status).toBe(504);
  const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
  expect(trace.attempts[0]!.error).toBe("Upstream slow sent no response headers within 1500 ms (header_timeout).");
});

test("max_attempts spent before a later target: the route trace says that target was not tried and why", async () => {
  const one = await startGateway(YAML.replace("precommit_deadline_ms: 1500", "precommit_deadline_ms: 1500\n  max_attempts: 1"), {
    env: { KEY_S: "sk-test-slow-one", KEY_G1: "sk-test-good-one", KEY_G2: "sk-test-good-two", KEY_B: "sk-test-bad-one" },
    fake: await startFakeUpstream(),
  });
  try {
    one.fake.handle((r) => (where(r) === "bad" ? { status: 400, json: { type: "error", error: { type: "invalid_request_error", message: "bad parameter" } } } : simpleReply(r.format!, { text: "ok", model: r.model }, r.stream)));
    const res = await fetch(`${one.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "badfirst", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
    expect({ status: res.status, calls: one.fake.requests.map(where) }).toEqual({ status: 400, calls: ["bad"] });
    const trace = (await one.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.decisions).toContainEqual({ subject: "good/claude-x", verdict: "out", reason: "not tried: the request's 1 attempt (settings.max_attempts) was spent" });
    // The dry run does not promise the attempts a request never gets to.
    const dry = await fetch(`${one.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: { model: "badfirst", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }, format: "anthropic-messages" }) });
    const plan = (await dry.json()) as { attempts: Array<{ target: string; accountId: string; notReached?: string }> };
    const beyond = "not reached: a request makes at most 1 attempt (settings.max_attempts)";
    expect(plan.attempts.map((a) => [a.target, a.notReached])).toEqual([
      ["bad/claude-x", undefined],
      ["good/claude-x", beyond],
      ["good/claude-x", beyond],
    ]);
  } finally {
    await one.stop();
  }
});

test("the dry run says which attempts the pre-commit deadline may leave out: after a non-streamed call that never answers, none (it waits reply_timeout_ms); a streamed request reaches them all", async () => {
  const dryRun = async (stream: boolean) => {
    const res = await fetch(`${gw.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: { model: "hangfirst", max_tokens: 20, stream, messages: [{ role: "user", content: "hi" }] }, format: "anthropic-messages" }) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { attempts: Array<{ target: string; accountId: string; notReached?: string; notReachedIf?: string }> }).attempts;
  };
  const ifHang = "not reached if slow/claude-x @ s1 never answers: a non-streamed call waits reply_timeout_ms (600000 ms), not less than the pre-commit deadline (1500 ms, settings.precommit_deadline_ms)";
  expect((await dryRun(false)).map((a) => [a.target, a.accountId, a.notReached, a.notReachedIf])).toEqual([
    ["slow/claude-x", "s1", undefined, undefined],
    ["good/claude-x", "g1", undefined, ifHang],
    ["good/claude-x", "g2", undefined, ifHang],
  ]);
  // Streamed: a hanging call's header wait is cut to half the deadline left while a candidate follows.
  expect((await dryRun(true)).map((a) => [a.target, a.accountId, a.notReached, a.notReachedIf])).toEqual([
    ["slow/claude-x", "s1", undefined, undefined],
    ["good/claude-x", "g1", undefined, undefined],
    ["good/claude-x", "g2", undefined, undefined],
  ]);
});

test("a non-streamed call is waited for as long as its reply takes, not the header timeout: its headers come with the whole reply", async () => {
  // header_timeout_ms is 1500 and the reply's headers come after 2.5 s (a long non-streamed generation):
  // before, the wait was the header timeout (cut further when a candidate followed): a 504, and the model cooled down.
  gw.fake.handle((r) => ({ ...simpleReply(r.format!, { text: "a long reply", model: r.model }, r.stream), headers_delay_ms: 2_500 }));
  const res = await post("slow/claude-long", false);
  const body = (await res.json()) as { content?: Array<{ text?: string }> };
  expect({ status: res.status, text: body.content?.[0]?.text, calls: gw.fake.requests.map(where) }).toEqual({ status: 200, text: "a long reply", calls: ["slow"] });
});

test("reply_timeout_ms bounds a non-streamed call; the 504 names it", async () => {
  const short = await startGateway(YAML.replace("    header_timeout_ms: 1500\n  - id: good", "    header_timeout_ms: 1500\n    reply_timeout_ms: 800\n  - id: good"), {
    env: { KEY_S: "sk-test-slow-one", KEY_G1: "sk-test-good-one", KEY_G2: "sk-test-good-two", KEY_B: "sk-test-bad-one" },
    fake: await startFakeUpstream({ inProcess: (path) => path.startsWith("/slow/") }),
  });
  try {
    short.fake.handle(() => ({ hang_before_headers: true }));
    const res = await fetch(`${short.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "slow/claude-solo", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
    expect(res.status).toBe(504);
    const trace = (await short.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts[0]!.error).toBe("Upstream slow sent no reply to a non-streamed request within 800 ms (reply_timeout_ms).");
  } finally {
    await short.stop();
  }
});
