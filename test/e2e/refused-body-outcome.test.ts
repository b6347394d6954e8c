/**
 * A client's own bad request that the translation refuses before any call (SPEC O-1 "outcome"; the
 * new-user tryout's `content: 123` on scripts/demo's combo) is the gateway's refusal, as the guard's
 * are: its usage row has outcome `rejected` and no model, so Usage by model does not count it as an
 * error of the combo's last model, which was never called, and the Overview's error rate (the usage
 * series' errors) leaves it out. Through the real gateway with scripts/demo's configuration.
 *
 * A combo whose first target was passed over for capacity (its only account cooling down, its
 * provider's circuit open: no call made) and whose other target refused the body: when the first would
 * have taken the body, the client hears the capacity failure (429/503 with Retry-After, outcome error of
 * the first target), not the refusal's 400 that says "do not send this again"; when the first would
 * refuse it too, the 400 stands and the row is the gateway's refusal, as when every target refused it.
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

test("a first target skipped for want of a free account that would refuse the body too, and a second refusing it: the 400, recorded as the gateway's refusal", async () => {
  // The rows this test makes are those not listed now (the first test's are; this test also runs alone, with -t).
  gw.app.settle();
  const before = new Set(((await api("/calls")).calls as any[]).map((c) => c.requestId));
  // The combo's first target (demo-anthropic) is rate-limited for 100 s: its only account cools down.
  gw.fake.handle((r) => (r.path.endsWith("/messages") ? { status: 429, headers: { "retry-after": "100" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } } : simpleReply(r.format!, { text: "ok", model: r.model }, r.stream)));
  expect((await post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: "hi" }] })).status).toBe(200); // served by demo-chat
  const res = await post("/v1/chat/completions", { model: "demo", messages: [{ role: "user", content: 123 }] });
  expect(res.status).toBe(400); // demo-anthropic's translation refuses `content: 123` too: the body is at fault
  expect(((await res.json()) as any).error.message).toContain("messages[0].content");
  expect(res.headers.get("retry-after")).toBeNull();
  expect(res.headers.get("x-switchyard-fallback")).toBeNull();
  gw.app.settle();
  const calls = ((await api("/calls")).calls as any[]).filter((c) => !before.has(c.requestId));
  expect(calls.filter((c) => c.requestedModel === "demo" && c.status === 400).map((c) => [c.outcome, c.attempts, c.model ?? null])).toEqual([["rejected", 0, null]]);
  expect(calls.filter((c) => c.outcome === "error")).toEqual([]);
  // The route trace says why the cooling target was not the answer.
  const trace = await api(`/route-traces/${res.headers.get("x-switchyard-route-id")}`);
  expect(JSON.stringify(trace.decisions)).toContain("demo-anthropic/claude-demo");
  expect(JSON.stringify(trace.decisions)).toContain("not called; its translation would refuse the body too");
}, 30_000);

/**
 * A config whose combo `mix` is `first` (provider `first.id` of `first.kind` at `{{FAKE}}/<id>`, with
 * `first.accounts` API-key accounts) then `c/gpt-demo`, an `openai-compatible` provider with one
 * account: normalised through the hub, it refuses a Chat `n: 2` and a `content` that is a number.
 */
function mixYaml(first: { id: string; kind: string; path: string; model: string; accounts: number }): string {
  return `
providers:
  - { id: ${first.id}, kind: ${first.kind}, base_url: "{{FAKE}}/${first.id}${first.path}" }
  - { id: c, kind: openai-compatible, base_url: "{{FAKE}}/c/v1" }
accounts:
${Array.from({ length: first.accounts }, (_, i) => `  - { id: ${first.id}${i + 1}, provider: ${first.id}, api_key: env:FAKE_KEY }`).join("\n")}
  - { id: c1, provider: c, api_key: env:FAKE_KEY }
combos:
  - name: mix
    targets:
      - model: ${first.id}/${first.model}
      - model: c/gpt-demo
`;
}

/** What {@link withMix} hands a test: its gateway, a Chat request for `mix` and the admin API. */
interface Mix {
  own: TestGateway;
  /** POSTs `{model: "mix", messages: [{role: "user", content: "hi"}], ...extra}` to /v1/chat/completions. */
  ask(extra?: Record<string, unknown>): Promise<Response>;
  /** GETs /admin/api<path> with the admin token; the JSON answer. */
  admin(path: string): Promise<any>;
  /** The circuit state of provider `id`. */
  circuit(id: string): Promise<string>;
}

/** Starts a gateway of its own on `yaml` and a fake upstream, runs `body`, then stops it. */
async function withMix(yaml: string, body: (mix: Mix) => Promise<void>): Promise<void> {
  const own = await startGateway(yaml, { fake: await startFakeUpstream() });
  const admin = async (path: string) => (await (await fetch(`${own.url}/admin/api${path}`, { headers: { authorization: `Bearer ${own.app.adminToken}` } })).json()) as any;
  try {
    await body({
      own,
      ask: (extra = {}) => fetch(`${own.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "mix", messages: [{ role: "user", content: "hi" }], ...extra }) }),
      admin,
      circuit: async (id) => (await admin("/providers")).providers.find((p: any) => p.id === id).circuit.state,
    });
  } finally {
    await own.stop();
  }
}

/** The fake upstream's answer: `failure` for requests under `/<prefix>/`, a short reply for the rest. */
const failingUnder = (prefix: string, failure: Record<string, unknown>) => (r: any) => (r.path.startsWith(`/${prefix}/`) ? failure : simpleReply(r.format!, { text: "ok", model: r.model }, r.stream));

test("a first target skipped for want of a free account that would take the body, and a second refusing it: the first's 429 with Retry-After, an error of the first target", async () => {
  await withMix(mixYaml({ id: "o", kind: "openai", path: "/v1", model: "gpt-x", accounts: 1 }), async ({ own, ask, admin }) => {
    // o's only account is rate-limited for 100 s; c serves meanwhile.
    own.fake.handle(failingUnder("o", { status: 429, headers: { "retry-after": "100" }, json: { error: { type: "rate_limit_error", message: "Rate limited" } } }));
    expect((await ask()).status).toBe(200); // served by c
    const seen = own.fake.requests.length;
    // n=2 is served only by the OpenAI API itself (o, a native pair); c, normalised through the hub, refuses it.
    const res = await ask({ n: 2 });
    const body = (await res.json()) as any;
    expect([res.status, body.error.code]).toEqual([429, "no_account"]);
    expect(body.error.message).toContain("No account of o can serve gpt-x");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(90);
    expect(own.fake.requests.length).toBe(seen); // no call was made
    own.app.settle();
    const calls: any[] = (await admin("/calls")).calls;
    expect(calls.filter((c) => c.status !== 200).map((c) => [c.outcome, c.status, c.attempts, c.providerId, c.fallback])).toEqual([["error", 429, 0, "o", false]]);
  });
}, 60_000);

test("a first target skipped for its open circuit that would refuse the body too, and a second refusing it: the 400, recorded as the gateway's refusal", async () => {
  // SPEC 6.3: 10 consecutive 5xx open a provider's circuit; ten accounts, so one request makes them all.
  await withMix(mixYaml({ id: "r", kind: "anthropic", path: "", model: "claude-x", accounts: 10 }), async ({ own, ask, admin, circuit }) => {
    own.fake.handle(failingUnder("r", { status: 500, json: { type: "error", error: { type: "api_error", message: "boom" } } }));
    for (let i = 0; i < 3 && (await circuit("r")) !== "open"; i++) expect([200, 500]).toContain((await ask()).status); // c serves, or the attempts ran out on r
    expect(await circuit("r")).toBe("open");
    const res = await ask({ messages: [{ role: "user", content: 123 }] });
    expect(res.status).toBe(400);
    own.app.settle();
    const calls: any[] = (await admin("/calls")).calls;
    expect(calls.filter((c) => c.status === 400).map((c) => [c.outcome, c.attempts, c.model ?? null])).toEqual([["rejected", 0, null]]);
  });
}, 60_000);

test("a first target skipped for its open circuit that would take the body, and a second refusing it: the circuit's 503 with Retry-After, an error of the first target", async () => {
  await withMix(mixYaml({ id: "o", kind: "openai", path: "/v1", model: "gpt-x", accounts: 10 }), async ({ own, ask, admin, circuit }) => {
    own.fake.handle(failingUnder("o", { status: 500, json: { error: { type: "server_error", message: "boom" } } }));
    for (let i = 0; i < 3 && (await circuit("o")) !== "open"; i++) expect([200, 500]).toContain((await ask()).status);
    expect(await circuit("o")).toBe("open");
    own.app.settle();
    const before = ((await admin("/calls")).calls as any[]).length;
    const res = await ask({ n: 2 });
    const body = (await res.json()) as any;
    expect([res.status, body.error.code]).toEqual([503, "circuit_open"]);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    own.app.settle();
    const calls: any[] = (await admin("/calls")).calls;
    expect(calls.length).toBe(before + 1);
    const row = calls.find((c) => c.status === 503);
    expect([row?.outcome, row?.attempts, row?.providerId]).toEqual(["error", 0, "o"]);
  });
}, 60_000);

test("a first target called and failing (a 5xx), and a second refusing the body: the first's failure, not the refusal's 400", async () => {
  await withMix(mixYaml({ id: "o", kind: "openai", path: "/v1", model: "gpt-x", accounts: 1 }), async ({ own, ask, admin }) => {
    own.fake.handle(failingUnder("o", { status: 500, json: { error: { type: "server_error", message: "boom" } } }));
    // n=2: o (the OpenAI API itself) takes the body and fails with a 500; c refuses it before any call.
    const res = await ask({ n: 2 });
    const body = (await res.json()) as any;
    expect(res.status).toBeGreaterThanOrEqual(500); // retryable: the body was fine for o
    expect(body.error.message).toContain("boom"); // the upstream's own error, passed on
    expect(own.fake.requests.filter((r) => r.path.startsWith("/o/")).length).toBeGreaterThan(0);
    expect(own.fake.requests.filter((r) => r.path.startsWith("/c/")).length).toBe(0);
    own.app.settle();
    const calls: any[] = (await admin("/calls")).calls;
    expect(calls.map((c) => [c.outcome, c.status, c.providerId])).toEqual([["error", res.status, "o"]]);
  });
}, 60_000);
