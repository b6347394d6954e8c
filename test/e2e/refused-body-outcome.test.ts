/**
 * A client's own bad request that the translation refuses before any call (SPEC O-1 "outcome"; the
 * new-user tryout's `content: 123` on scripts/demo's combo) is the gateway's refusal, as the guard's
 * are: its usage row has outcome `rejected` and no model, so Usage by model does not count it as an
 * error of the combo's last model, which was never called, and the Overview's error rate (the usage
 * series' errors) leaves it out. Through the real gateway with scripts/demo's configuration.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { simpleReply, startFakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  const fake = await startFakeUpstream();
  gw = await startGateway(demoConfigYaml(fake.url), { fake });
});
afterAll(() => gw?.stop());

const api = async (path: string) => (await (await fetch(`${gw.url}/admin/api${path}`)).json()) as any;
const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("a body every target of the combo refuses is recorded as refused with no model, not as the last model's error", async () => {
  for (let i = 0; i < 3; i++) {
    const res = await post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: 123 }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toContain("messages[0].content");
    expect(res.headers.get("x-switchyard-fallback")).toBeNull(); // nothing served, so no fallback served either
  }
  // One that is served, so the model has a row of its own.
  expect((await post("/v1/chat/completions", { model: "demo-chat/gpt-demo", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
  gw.app.settle();

  const calls: any[] = (await api("/calls")).calls;
  const refused = ((await api("/calls?outcome=rejected")).calls as any[]).filter((c) => c.requestedModel === "demo");
  expect(refused.map((c) => [c.outcome, c.status, c.attempts, c.model ?? null, c.providerId ?? null, c.fallback])).toEqual(Array(3).fill(["rejected", 400, 0, null, null, false]));
  expect(calls.filter((c) => c.outcome === "error")).toEqual([]);

  const byModel: any[] = (await api("/usage?since=1h&by=model")).rows;
  const row = (g: string | null) => byModel.find((r) => r.group === g);
  expect([row("demo-chat/gpt-demo")?.requests, row("demo-chat/gpt-demo")?.errors]).toEqual([1, 0]);
  expect([row(null)?.requests, row(null)?.errors, row(null)?.refused]).toEqual([3, 0, 3]);
  // The dashboard's Overview reads its error rate from the series: refused, not errors.
  const buckets: any[] = (await api("/usage?since=1h")).series.buckets;
  const sum = (k: string) => buckets.reduce((n, b) => n + b[k], 0);
  expect([sum("requests"), sum("errors"), sum("refused")]).toEqual([4, 0, 3]);
}, 30_000);

test("a first target skipped for want of a free account and a second refusing the body: a failure (outcome error), not the gateway's refusal", async () => {
  // The combo's first target (demo-anthropic) is rate-limited for 100 s: its only account cools down.
  gw.fake.handle((r) => (r.path.endsWith("/messages") ? { status: 429, headers: { "retry-after": "100" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } } : simpleReply(r.format!, { text: "ok", model: r.model }, r.stream)));
  expect((await post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "hi" }] })).status).toBe(200); // served by demo-chat
  const res = await post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: 123 }] });
  expect(res.status).toBe(400);
  gw.app.settle();
  const last = ((await api("/calls")).calls as any[]).find((c) => c.requestedModel === "demo" && c.status === 400 && c.outcome !== "rejected");
  expect([last?.outcome, last?.attempts]).toEqual(["error", 0]);
  expect(((await api("/calls?outcome=rejected")).calls as any[]).filter((c) => c.requestedModel === "demo")).toHaveLength(3); // the first test's only
}, 30_000);

test("a first target skipped for its open circuit and a second refusing the body: a failure (outcome error), not the gateway's refusal", async () => {
  // SPEC 6.3: 10 consecutive 5xx open a provider's circuit; ten accounts, so one request makes them all.
  const yaml = `
providers:
  - { id: r, kind: anthropic, base_url: "{{FAKE}}/r" }
  - { id: c, kind: openai-compatible, base_url: "{{FAKE}}/v1" }
accounts:
${Array.from({ length: 10 }, (_, i) => `  - { id: r${i + 1}, provider: r, api_key: env:FAKE_KEY }`).join("\n")}
combos:
  - name: mix
    targets:
      - model: r/claude-x
      - model: c/gpt-demo
`;
  const own = await startGateway(yaml, { fake: await startFakeUpstream() });
  try {
    own.fake.handle((r) => (r.path.startsWith("/r/") ? { status: 500, json: { type: "error", error: { type: "api_error", message: "boom" } } } : simpleReply(r.format!, { text: "ok", model: r.model }, r.stream)));
    const ask = (content: unknown) => fetch(`${own.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "mix", messages: [{ role: "user", content }] }) });
    const state = async () => ((await (await fetch(`${own.url}/admin/api/providers`, { headers: { authorization: `Bearer ${own.app.adminToken}` } })).json()) as any).providers.find((p: any) => p.id === "r").circuit.state;
    for (let i = 0; i < 3 && (await state()) !== "open"; i++) expect([200, 500]).toContain((await ask("hi")).status); // c serves, or the attempts ran out on r
    expect(await state()).toBe("open");
    const res = await ask(123);
    expect(res.status).toBe(400);
    own.app.settle();
    const calls: any[] = ((await (await fetch(`${own.url}/admin/api/calls`, { headers: { authorization: `Bearer ${own.app.adminToken}` } })).json()) as any).calls;
    expect(calls.filter((c) => c.status === 400).map((c) => [c.outcome, c.attempts])).toEqual([["error", 0]]);
  } finally {
    await own.stop();
  }
}, 60_000);
