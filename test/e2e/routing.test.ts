/**
 * Routing end to end (SPEC 5, 2.2 `route`/`accounts status`, 9.3 dry run): a real switchyard with a
 * fake upstream and several accounts. The dry run's order is the order the attempts really take;
 * real requests store the same decisions in their route trace; the CLI shows both.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { RoutePlan } from "../../pipeline/order.ts";
import type { RouteTrace } from "../../pipeline/ports.ts";
import type { AccountsStatus } from "../../src/accounts/status.ts";
import type { ReceivedRequest } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
    models:
      claude-x: { context_window: 200000, images: true }
  - id: q
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
accounts:
  - id: a1
    provider: p
    api_key: env:K1
    priority: 1
  - id: a2
    provider: p
    api_key: env:K2
    priority: 2
  - id: a3
    provider: p
    api_key: env:K3
    priority: 3
  - id: q1
    provider: q
    api_key: env:KQ
combos:
  - name: duo
    targets:
      - model: p/claude-x
      - model: q/glm-x
        when: { expr: { fact: has_tools, op: eq, value: false } }
      - model: q/glm-long
        when: { expr: { fact: target_context_window, op: gte, value: 100000 }, when_unknown: skip }
  - name: spin
    strategy: round-robin
    targets:
      - model: p/claude-x
      - model: q/glm-x
  - name: pinned
    targets:
      - model: p/claude-x
        account: a2
      - model: q/glm-x
`;
const ENV = { K1: "sk-routing-one", K2: "sk-routing-two", K3: "sk-routing-three", KQ: "sk-routing-q" };
const WHO: Record<string, string> = { [ENV.K1]: "a1", [ENV.K2]: "a2", [ENV.K3]: "a3" };
const who = (r: ReceivedRequest) => WHO[r.headers["x-api-key"] ?? ""] ?? (r.headers.authorization === `Bearer ${ENV.KQ}` ? "q1" : "?");
const RATE = { status: 429, headers: { "retry-after": "30" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  gw.fake.reset();
  for (const a of ["a1", "a2", "a3", "q1"]) await gw.app.store.clearCooldown(a);
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
  gw.app.registry.resetCounters();
});

const body = (model: string, text = "hello", extra: Record<string, unknown> = {}) => ({ model, max_tokens: 20, messages: [{ role: "user", content: text }], ...extra });
const send = (b: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(b) });
const admin = async (method: string, path: string, b?: unknown) => {
  const res = await fetch(`${gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: b === undefined ? undefined : JSON.stringify(b) });
  return { status: res.status, json: (await res.json()) as any };
};
const dryRun = async (b: unknown, headers?: Record<string, string>) => {
  const r = await admin("POST", "/dry-run", { request: b, format: "anthropic-messages", headers });
  expect(r.status).toBe(200);
  return r.json as RoutePlan & { accountStrategy: string };
};
/** The dry run's attempt order: target and account of each (a non-streamed request's are also marked notReachedIf: header-timeout-fallback.test.ts). */
const attemptOrder = (plan: RoutePlan) => plan.attempts.map((a) => ({ target: a.target, accountId: a.accountId }));
const traceOf = async (res: Response) => (await admin("GET", `/route-traces/${res.headers.get("x-switchyard-route-id")}`)).json as RouteTrace;

describe("the dry run predicts the real attempts", () => {
  test("three accounts fail with 429: the attempts follow the dry run's order exactly, then the next target", async () => {
    const plan = await dryRun(body("duo"));
    expect(attemptOrder(plan)).toEqual([
      { target: "p/claude-x", accountId: "a1" },
      { target: "p/claude-x", accountId: "a2" },
      { target: "p/claude-x", accountId: "a3" },
      { target: "q/glm-x", accountId: "q1" },
    ]);
    gw.fake.enqueue(RATE, RATE, RATE);
    const res = await send(body("duo"));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    expect(gw.fake.requests.map(who)).toEqual(["a1", "a2", "a3", "q1"]);
    const trace = await traceOf(res);
    expect(trace.attempts.map((a) => ({ target: a.target, accountId: a.accountId }))).toEqual(attemptOrder(plan));
    // the target-level decisions (predicates) are the ones the dry run showed
    for (const d of plan.decisions) expect(trace.decisions).toContainEqual(d);
  });

  test("a target pinned to an account: the dry run's attempts name it as the real trace does, `provider/model` and the account beside it (newuser13 J13)", async () => {
    const plan = await dryRun(body("pinned"));
    expect(plan.targets.map((t) => t.target)).toEqual(["p/claude-x @ a2", "q/glm-x"]);
    expect(attemptOrder(plan)).toEqual([
      { target: "p/claude-x", accountId: "a2" },
      { target: "q/glm-x", accountId: "q1" },
    ]);
    gw.fake.enqueue(RATE);
    const res = await send(body("pinned"));
    expect(res.status).toBe(200);
    expect(gw.fake.requests.map(who)).toEqual(["a2", "q1"]);
    const trace = await traceOf(res);
    expect(trace.attempts.map((a) => ({ target: a.target, accountId: a.accountId }))).toEqual(attemptOrder(plan));
  });

  test("after the failures the dry run shows the cooling accounts out, with reasons and end times, and the next request agrees", async () => {
    gw.fake.enqueue(RATE, RATE);
    await (await send(body("duo", "first"))).text();
    const plan = await dryRun(body("duo", "second"));
    const p = plan.targets[0];
    expect(p.accounts.filter((a) => a.verdict === "out").map((a) => a.accountId).sort()).toEqual(["a1", "a2"]);
    const out = p.accounts.find((a) => a.accountId === "a1")!;
    expect(out.reason).toContain("cooling down");
    expect(out.until).toBeGreaterThan(Date.now() + 20_000);
    expect(plan.attempts[0]).toEqual({ target: "p/claude-x", accountId: "a3" });
    gw.fake.reset();
    const res = await send(body("duo", "second"));
    expect(res.status).toBe(200);
    expect(gw.fake.requests.map(who)).toEqual(["a3"]);
    // a1 and a2 keep their places (a 429 is not counted against their score, only cooled): a3 served in their stead
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
  });

  test("predicates: each target's verdict is explained; a request with tools skips q/glm-x in the dry run and for real", async () => {
    const withTools = body("duo", "hi", { tools: [{ name: "bash", description: "run", input_schema: { type: "object", properties: {} } }] });
    const plan = await dryRun(withTools);
    expect(plan.targets.map((t) => t.target)).toEqual(["p/claude-x"]);
    expect(plan.decisions).toEqual([
      { subject: "q/glm-x", verdict: "out", reason: "predicate: has_tools (true) eq false → false" },
      { subject: "q/glm-long", verdict: "out", reason: "predicate: target_context_window (unknown: no models entry for q/glm-long) gte 100000 → unknown; when_unknown: skip → skipped" },
    ]);
    gw.fake.enqueue(RATE, RATE, RATE);
    const res = await send(withTools);
    expect(res.status).toBe(429); // no other target was allowed
    expect(gw.fake.requests.map(who)).toEqual(["a1", "a2", "a3"]);
    const trace = await traceOf(res);
    for (const d of plan.decisions) expect(trace.decisions).toContainEqual(d);
    expect(res.headers.get("retry-after")).not.toBeNull();
  });

  test("conversation affinity: the dry run and the real request go back to the account that answered", async () => {
    const h = { "x-session-id": "routing-e2e-session" };
    gw.fake.enqueue(RATE);
    await (await send(body("p/claude-x", "one"), h)).text();
    expect(gw.fake.requests.map(who)).toEqual(["a1", "a2"]);
    await gw.app.store.clearCooldown("a1"); // a1 is eligible again
    gw.app.registry.loadState(await gw.app.store.loadAccountState());
    const plan = await dryRun(body("p/claude-x", "a different first message"), h);
    expect(plan.affinity).toBe("session");
    expect(plan.attempts[0].accountId).toBe("a2");
    expect(plan.targets[0].accounts[0].reason).toContain("conversation affinity");
    gw.fake.reset();
    await (await send(body("p/claude-x", "a different first message"), h)).text();
    expect(gw.fake.requests.map(who)).toEqual(["a2"]);
  });

  test("round-robin: the dry run shows the next rotation without consuming it", async () => {
    const heads: string[] = [];
    for (let i = 0; i < 3; i++) {
      const plan = await dryRun(body("spin", `rr ${i}`));
      expect((await dryRun(body("spin", `rr ${i}`))).targets[0].target).toBe(plan.targets[0].target); // dry runs do not rotate
      heads.push(plan.targets[0].target);
      gw.fake.reset();
      await (await send(body("spin", `rr ${i}`))).text();
      expect(gw.fake.requests[0].path).toBe(plan.targets[0].target.startsWith("p/") ? "/v1/messages" : "/v1/chat/completions");
    }
    expect(new Set(heads).size).toBe(2);
  });
});

describe("admin API", () => {
  test("dry run: valibot errors name the field; unknown provider is a 404; the format is guessed when omitted", async () => {
    const bad = await admin("POST", "/dry-run", { request: "not an object" });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("request");
    const badFormat = await admin("POST", "/dry-run", { request: { model: "duo" }, format: "smoke-signals" });
    expect(badFormat.status).toBe(400);
    expect(badFormat.json.error.message).toContain("format");
    const nf = await admin("POST", "/dry-run", { request: { model: "nope/x", messages: [{ role: "user", content: "hi" }] } });
    expect(nf.status).toBe(404);
    const chat = await admin("POST", "/dry-run", { request: { model: "duo", messages: [{ role: "user", content: "hi" }] } });
    expect(chat.json.clientFormat).toBe("openai-chat");
    const resp = await admin("POST", "/dry-run", { request: { model: "duo", input: "hi" } });
    expect(resp.json.clientFormat).toBe("openai-responses");
  });

  test("dry run of a body the endpoint refuses before routing: the endpoint's own refusal, no plan (it planned `messages: 5`)", async () => {
    const cases: Array<[string, "chat" | "messages" | "responses" | "gemini", Record<string, unknown>, string]> = [
      ["/v1/chat/completions", "chat", { model: "duo", messages: 5 }, "messages"],
      ["/v1/messages", "messages", { model: "duo", max_tokens: 20, messages: [] }, "messages"],
      ["/v1/messages", "messages", body("duo", "hi", { stream: "yes" }), "stream"],
      ["/v1/responses", "responses", { model: "duo", input: 5 }, "input"],
      ["/v1beta/models/duo:generateContent", "gemini", { contents: {} }, "contents"],
    ];
    for (const [path, endpoint, request, param] of cases) {
      const real = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
      const realBody = await real.json();
      const dry = await admin("POST", "/dry-run", { request, endpoint, ...(endpoint === "gemini" ? { model: "duo" } : {}) });
      expect(dry.status).toBe(real.status);
      expect(dry.status).toBe(400);
      // the client's own error body, in its format, and the same message in the admin error
      expect(dry.json.error.endpoint_error).toEqual(realBody);
      expect(dry.json.error).toMatchObject({ code: "request_refused", param, refused_status: 400 });
      const realMessage = (realBody as { error: { message: string } }).error.message;
      expect(dry.json.error.message).toBe(`The endpoint would refuse this request (400): ${realMessage}`);
    }
    expect(gw.fake.requests.length).toBe(0);
  });

  test("dry run for a key (by name, or presented in headers as a request presents it): a model outside its allow-list is the guard's 403, as the real request; one inside is routed", async () => {
    const made = await admin("POST", "/keys", { name: "dry-q-only", limits: { models: ["q/*"] } });
    expect(made.status).toBe(201);
    const secret = made.json.secret as string;
    const real = await send(body("p/claude-x"), { "x-api-key": secret });
    expect(real.status).toBe(403);
    const realMessage = ((await real.json()) as { error: { message: string } }).error.message;
    for (const who of [{ key: "dry-q-only" }, { headers: { authorization: `Bearer ${secret}` } }, { headers: { "x-api-key": secret } }]) {
      const refused = await admin("POST", "/dry-run", { request: body("p/claude-x"), format: "anthropic-messages", ...who });
      expect({ status: refused.status, error: refused.json.error }).toEqual({ status: 403, error: { type: "permission_error", code: "model_not_allowed", param: "model", message: realMessage } });
      const routed = await admin("POST", "/dry-run", { request: body("q/glm-x"), format: "anthropic-messages", ...who });
      expect(routed.status).toBe(200);
      expect(routed.json.targets[0].target).toBe("q/glm-x");
    }
    expect(realMessage).toBe('Client key "dry-q-only" may not use the model "p/claude-x"; its models limit allows: q/*.');
    // a secret the gateway does not know is ignored, as from loopback
    expect((await admin("POST", "/dry-run", { request: body("p/claude-x"), format: "anthropic-messages", headers: { authorization: "Bearer sy-not-a-key" } })).status).toBe(200);
    expect(gw.fake.requests).toEqual([]);
  });

  test("the dry run calls no upstream", async () => {
    await dryRun(body("duo"));
    expect(gw.fake.requests).toEqual([]);
  });

  test("GET /admin/api/accounts: eligibility per account and model, cooldown reasons and end times, slots, circuit", async () => {
    gw.fake.enqueue(RATE);
    await (await send(body("p/claude-x", "status"))).text();
    const s = (await admin("GET", "/accounts")).json as AccountsStatus;
    expect(s.strategy).toBe("scored");
    const a1 = s.accounts.find((a) => a.id === "a1")!;
    expect(a1.cooldowns[0]).toMatchObject({ model: "claude-x", reason: expect.any(String) });
    expect(a1.cooldowns[0].until).toBeGreaterThan(Date.now());
    expect(a1.models.find((m) => m.model === "claude-x")).toMatchObject({ eligible: false, reason: expect.stringContaining("cooling down") });
    expect(a1.slots).toEqual({ inUse: 0, limit: null, waiting: 0 });
    expect(a1.circuit.state).toBe("closed");
    expect(s.accounts.find((a) => a.id === "a2")!.bindings).toBe(1);
    expect(JSON.stringify(s)).not.toContain("sk-routing");
  });
});

describe("CLI", () => {
  const cli = async (...args: string[]) => {
    const proc = Bun.spawn(["bun", "run", join(import.meta.dir, "../../src/main.ts"), ...args, "--url", gw.url, "--key", gw.app.adminToken], { stdout: "pipe", stderr: "pipe", env: { ...process.env, SWITCHYARD_HOME: gw.dataDir } });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { out, err, code };
  };

  test("switchyard route MODEL --json equals the admin dry run; the text form lists the order and the reasons", async () => {
    const file = join(gw.dataDir, "req.json");
    await Bun.write(file, JSON.stringify(body("ignored", "hi", { tools: [{ name: "bash", input_schema: { type: "object" } }] })));
    const j = await cli("route", "duo", "--body", file, "--format", "messages", "--json");
    expect(j.code).toBe(0);
    const plan = JSON.parse(j.out) as RoutePlan;
    expect(plan.requestedModel).toBe("duo");
    expect(plan.attempts.map((a) => a.accountId)).toEqual(["a1", "a2", "a3"]);
    const t = await cli("route", "duo", "--body", file, "--format", "messages");
    expect(t.code).toBe(0);
    expect(t.out).toContain("attempt order: p/claude-x @ a1 → p/claude-x @ a2 → p/claude-x @ a3");
    expect(t.out).toContain("out   q/glm-x: predicate: has_tools (true) eq false → false");
  });

  test("switchyard route MODEL --format gemini: the Gemini request as a Gemini client sends it (tools read from functionDeclarations)", async () => {
    const plain = await cli("route", "duo", "--format", "gemini", "--json");
    expect(plain.err).toBe("");
    expect(plain.code).toBe(0);
    const p1 = JSON.parse(plain.out) as RoutePlan;
    expect(p1).toMatchObject({ requestedModel: "duo", clientFormat: "gemini" });
    expect(p1.targets.map((t) => t.target)).toEqual(["p/claude-x", "q/glm-x"]);

    const file = join(gw.dataDir, "gemini-req.json");
    await Bun.write(file, JSON.stringify({ contents: [{ role: "user", parts: [{ text: "run ls" }] }], tools: [{ functionDeclarations: [{ name: "bash", parameters: { type: "object" } }] }] }));
    const t = await cli("route", "models/duo", "--body", file, "--format", "gemini");
    expect(t.code).toBe(0);
    expect(t.out).toStartWith("duo (gemini) via combo duo");
    expect(t.out).toContain("out   q/glm-x: predicate: has_tools (true) eq false → false");
    // Without --format the body's `contents` says Gemini.
    const guessed = JSON.parse((await cli("route", "duo", "--body", file, "--json")).out) as RoutePlan;
    expect(guessed.clientFormat).toBe("gemini");

    const bad = await cli("route", "duo", "--format", "smoke-signals");
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe('--format is one of openai-chat, openai-responses, anthropic-messages, gemini (or the endpoint: chat, responses, messages), not "smoke-signals"');
  });

  test("switchyard route with a mistyped combo (`dou` for `duo`) names the near combo and exits 1: no target can serve it (newuser13's tryout, J10)", async () => {
    const t = await cli("route", "dou");
    expect(t.code).toBe(1);
    expect(t.out).toStartWith('dou (openai-chat) via guess ("dou" is not an alias or combo; did you mean "duo"?)');
    expect(t.out).toContain("attempt order: none");
    expect(t.err.trim()).toBe('no target can serve dou (attempt order: none); did you mean "duo"?');
    const j = await cli("route", "dou", "--json");
    expect(j.code).toBe(1);
    expect((JSON.parse(j.out) as RoutePlan).nearName).toBe("duo");
    // A route that some account serves still exits 0 (the tests above), and so does an exact guess.
    expect((await cli("route", "p/claude-x")).code).toBe(0);
  });

  test("switchyard accounts status [--json]", async () => {
    gw.fake.enqueue(RATE);
    await (await send(body("p/claude-x", "cli status"))).text();
    const j = await cli("accounts", "status", "--json");
    expect(j.code).toBe(0);
    expect((JSON.parse(j.out) as AccountsStatus).accounts.map((a) => a.id)).toEqual(["a1", "a2", "a3", "q1"]);
    const t = await cli("accounts", "status");
    expect(t.out).toContain("cooldown claude-x:");
    expect(t.out).toContain("model claude-x: out: cooling down");
  });
});
