/**
 * A body one target refuses (its translation, before any call), in a combo whose other targets were
 * passed over for capacity before their body was built (an account cooling down) and a later target
 * built it but got no concurrency slot in time (SPEC A-4): the answer is a capacity failure, never the
 * refusal's 400 (a target takes the body), and never the capacity failure of a skipped target that
 * would refuse the body too (its Retry-After would send the client back for a 400: the review of
 * session 37's mixed refusal). Through the real gateway; the slot wait shortened to 300 ms. And the
 * Retry-After of a capacity answer given for a body another target refused is when the first of the
 * targets that would take the body frees up, not an earlier one that would refuse it.
 */
import { expect, test } from "bun:test";
import { simpleReply, startFakeUpstream } from "../support/fake-upstream.ts";
import { startGateway } from "../support/gateway.ts";

/**
 * Combo `mix`: `a/claude-x` (Anthropic, one account), `c/gpt-demo` (OpenAI-compatible, normalised through
 * the hub: refuses a Chat `n: 2`), `o/gpt-x` (OpenAI, one account with one concurrency slot: a native
 * pair, it takes `n: 2`).
 */
const yaml = `
providers:
  - { id: a, kind: anthropic, base_url: "{{FAKE}}/a" }
  - { id: c, kind: openai-compatible, base_url: "{{FAKE}}/c/v1" }
  - { id: o, kind: openai, base_url: "{{FAKE}}/o/v1" }
accounts:
  - { id: a1, provider: a, api_key: env:FAKE_KEY }
  - { id: c1, provider: c, api_key: env:FAKE_KEY }
  - { id: o1, provider: o, api_key: env:FAKE_KEY, max_concurrency: 1 }
combos:
  - name: mix
    targets:
      - model: a/claude-x
      - model: c/gpt-demo
      - model: o/gpt-x
`;

const chunk = (delta: object) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "gpt-x", choices: [{ index: 0, delta }] })}\n\n`;

test("a skipped target that would refuse the body too, a refusing one, and one that takes it but gets no slot: the gateway's 503, not the skipped target's 429 nor the 400", async () => {
  const fake = await startFakeUpstream();
  const gw = await startGateway(yaml, { fake, slotWaitMs: 300 });
  const post = (body: Record<string, unknown>) => fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], ...body }) });
  try {
    fake.handle((r) => {
      if (r.path.startsWith("/a/")) return { status: 429, headers: { "retry-after": "100" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
      if (r.path.startsWith("/o/")) return { headers: { "content-type": "text/event-stream" }, sse: chunk({ role: "assistant", content: "hi" }), endless: chunk({ content: "." }), endless_every_ms: 200 };
      return simpleReply(r.format!, { text: "ok", model: r.model }, r.stream);
    });
    expect((await post({ model: "mix" })).status).toBe(200); // a's only account cools down for 100 s; c serves
    // o's only slot, held by a stream
    const held = await post({ model: "o/gpt-x", stream: true });
    expect(held.status).toBe(200);
    const reader = held.body!.getReader();
    await reader.read();
    const seen = fake.requests.length;

    const res = await post({ model: "mix", n: 2 });
    const body = (await res.json()) as { error: { message: string; code?: string } };
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeNull(); // not a's 100 s: a would refuse the body anyway
    expect(body.error.message).toContain("No target could serve this request.");
    expect(body.error.message).not.toContain("No account of a");
    expect(fake.requests.length).toBe(seen); // no call was made
    const trace = (await (await fetch(`${gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`, { headers: { authorization: `Bearer ${gw.app.adminToken}` } })).json()) as { decisions: unknown };
    expect(JSON.stringify(trace.decisions)).toContain("not called; its translation would refuse the body too");
    await reader.cancel();
  } finally {
    await gw.stop();
  }
}, 60_000);

/**
 * Combo `mix` of two targets that answer 429 with their own Retry-After (s), then `c/gpt-demo`, which
 * serves and refuses a Chat `n: 2`: after a plain request cools the two down, what a request with
 * `n: 2` gets (only the OpenAI API itself takes it).
 */
async function nTwoAfterCooldowns(targets: Array<{ id: string; kind: "anthropic" | "openai"; model: string; retryAfter: number }>): Promise<{ status: number; retryAfter: number; message: string }> {
  const fake = await startFakeUpstream();
  const lines = (f: (t: (typeof targets)[number]) => string) => targets.map(f).join("\n");
  const gw = await startGateway(
    `
providers:
${lines((t) => `  - { id: ${t.id}, kind: ${t.kind}, base_url: "{{FAKE}}/${t.id}${t.kind === "openai" ? "/v1" : ""}" }`)}
  - { id: c, kind: openai-compatible, base_url: "{{FAKE}}/c/v1" }
accounts:
${lines((t) => `  - { id: ${t.id}1, provider: ${t.id}, api_key: env:FAKE_KEY }`)}
  - { id: c1, provider: c, api_key: env:FAKE_KEY }
combos:
  - name: mix
    targets:
${lines((t) => `      - model: ${t.id}/${t.model}`)}
      - model: c/gpt-demo
`,
    { fake },
  );
  const post = (body: Record<string, unknown>) => fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "mix", messages: [{ role: "user", content: "hi" }], ...body }) });
  try {
    fake.handle((r) => {
      const t = targets.find((t) => r.path.startsWith(`/${t.id}/`));
      if (!t) return simpleReply(r.format!, { text: "ok", model: r.model }, r.stream);
      const error = { type: "rate_limit_error", message: "Rate limited" };
      return { status: 429, headers: { "retry-after": String(t.retryAfter) }, json: t.kind === "anthropic" ? { type: "error", error } : { error } };
    });
    expect((await post({})).status).toBe(200); // both cool down; c serves
    const res = await post({ n: 2 });
    const body = (await res.json()) as { error: { message: string } };
    return { status: res.status, retryAfter: Number(res.headers.get("retry-after")), message: body.error.message };
  } finally {
    await gw.stop();
  }
}

test("two targets passed over for capacity, the one that frees up first would refuse the body, the other would take it, a third refuses it: the taker's 429 with its own Retry-After", async () => {
  const got = await nTwoAfterCooldowns([
    { id: "a", kind: "anthropic", model: "claude-x", retryAfter: 20 },
    { id: "o", kind: "openai", model: "gpt-x", retryAfter: 300 },
  ]);
  expect(got.status).toBe(429);
  expect(got.message).toContain("o/gpt-x: cooling down");
  expect(got.retryAfter).toBeGreaterThan(200); // o's, not a's 20 s
}, 60_000);

test("two targets passed over for capacity that would both take the body (the first frees up in 300 s, the second in 20 s), a third refuses it: Retry-After is the earlier of the two", async () => {
  // review27: the first taker's 300 s was sent, though the second takes the body 280 s sooner.
  const got = await nTwoAfterCooldowns([
    { id: "o", kind: "openai", model: "gpt-x", retryAfter: 300 },
    { id: "p", kind: "openai", model: "gpt-x", retryAfter: 20 },
  ]);
  expect(got.status).toBe(429);
  expect(got.message).toContain("o/gpt-x: cooling down");
  expect(got.message).toContain("p/gpt-x: cooling down");
  expect(got.retryAfter).toBeGreaterThan(0);
  expect(got.retryAfter).toBeLessThanOrEqual(20); // p's, not o's 300 s
}, 60_000);
