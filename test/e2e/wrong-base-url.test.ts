/**
 * A provider whose `base_url` is wrong (try19 D7), through the real gateway: the URL switchyard calls
 * answers a web server's 404 page (HTML, or no body) rather than the provider's error JSON. That is the
 * server row of SPEC 6.3 for this account (the next account or target; a short cooldown), not "404 model
 * not found": no account/model pairing is removed, and the client's error names the provider and
 * `providers[].base_url` but not the URL (the client of a gateway is not its operator: review19 R4),
 * which the attempt's route trace keeps for the operator. A JSON "model not found" 404 still removes the
 * pairing; a reload that changes the provider's base_url lifts its removals and cooldowns (as it resets
 * its circuit): the first request after the fix is served, not refused for the wrong URL's 30 s cooldown.
 * Until 2026-12-06 the HTML 404 removed the model from the account for 24 h — through the operator's fix
 * of the base_url — and the client read only "Upstream returned HTTP 404.", and then (until review19 R4)
 * the URL's path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import type { GatewayEvent } from "../../src/events/bus.ts";
import { MISDIRECTED_404_REASON } from "../../pipeline/classify.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const yaml = (hBase: string) => `
providers:
  - id: h
    kind: anthropic-compatible
    base_url: "${hBase}"
  - id: q
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
accounts:
  - { id: h1, provider: h, api_key: env:FAKE_KEY }
  - { id: q1, provider: q, api_key: env:FAKE_KEY }
combos:
  - name: duo
    targets:
      - model: h/claude-d
      - model: q/glm-x
`;

let gw: TestGateway;
const events: GatewayEvent[] = [];
/** What the wrong path (`/nope/…`) answers next: the fake's web server page by default. */
let wrongPath: FakeReply = { status: 404, headers: { "content-type": "text/html" }, text: "<h1>404 Not Found</h1>" };

beforeAll(async () => {
  gw = await startGateway(yaml("{{FAKE}}/nope"));
  gw.app.bus.subscribe((e) => void events.push(e));
  gw.fake.handle((r: ReceivedRequest): FakeReply => (r.path.startsWith("/nope/") ? wrongPath : simpleReply(r.format!, { text: "ok", model: r.model }, r.stream)));
});
afterAll(async () => {
  await gw?.stop();
});

const admin = { authorization: "" };
const ask = async (model: string, stream = false) => {
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 16, stream, messages: [{ role: "user", content: "hi" }] }),
  });
  const text = await res.text();
  return { status: res.status, text, routeId: res.headers.get("x-switchyard-route-id")! };
};
/** The route trace of `routeId` from the admin API (the operator's view), once the request's report saved it. */
const traceOf = async (routeId: string) => {
  for (let i = 0; ; i++) {
    const res = await fetch(`${gw.url}/admin/api/route-traces/${routeId}`, { headers: admin });
    if (res.ok || i >= 200) return (await res.json()) as { error?: { message: string }; attempts: Array<{ error?: string }> };
    await res.arrayBuffer();
    await Bun.sleep(50);
  }
};
const removed = async () => {
  const res = await fetch(`${gw.url}/admin/api/accounts`, { headers: admin });
  const body = (await res.json()) as { accounts: Array<{ id: string; removedModels: Array<{ model: string }> }> };
  return body.accounts.find((a) => a.id === "h1")!.removedModels.map((r) => r.model);
};

describe("a provider whose base_url is wrong (a web server's 404)", () => {
  test("an HTML 404 is a 502 naming the provider and providers[].base_url, not the URL, which the operator's trace names; no pairing is removed", async () => {
    admin.authorization = `Bearer ${gw.app.adminToken}`;
    const r = await ask("h/claude-x");
    expect(r.status).toBe(502);
    const err = (JSON.parse(r.text) as { error: { type: string; message: string } }).error;
    const clientMessage =
      "Upstream h answered HTTP 404 with an HTML page, so the URL the gateway called there is not an API endpoint: the gateway's provider configuration (providers[].base_url of h) is probably wrong, not the model. The gateway's operator finds that URL in this request's route trace.";
    expect(err.message).toBe(clientMessage);
    // The client of a gateway is not its operator: a hosted upstream's path carries the operator's data.
    expect(r.text).not.toContain("/nope");
    expect(r.text).not.toContain("127.0.0.1");
    expect(r.text).not.toContain("sk-fake-upstream-secret");
    // The operator reads the URL called (no query) in the attempt's route trace; the trace's error is what the client got.
    const trace = await traceOf(r.routeId);
    expect(trace.attempts.map((a) => a.error)).toEqual([
      `URL called (query left out): ${gw.fake.url}/nope/v1/messages — upstream h answered HTTP 404 with an HTML page: that URL is not an API endpoint there, so providers[].base_url of h is probably wrong (not the model).`,
    ]);
    expect(trace.error?.message).toBe(clientMessage);
    expect(await removed()).toEqual([]);
    expect(gw.fake.requests.filter((q) => q.path.startsWith("/nope/"))).toHaveLength(1);
  });

  test("a 404 with no body says so; a streamed request gets the same 502", async () => {
    wrongPath = { status: 404, text: "" };
    const r = await ask("h/claude-y", true);
    expect(r.status).toBe(502);
    expect(r.text).toContain("Upstream h answered HTTP 404 with no body, so the URL the gateway called there is not an API endpoint: the gateway's provider configuration (providers[].base_url of h) is probably wrong");
    expect(r.text).not.toContain("/nope");
    expect((await traceOf(r.routeId)).attempts.at(-1)!.error).toStartWith(`URL called (query left out): ${gw.fake.url}/nope/v1/messages — `);
    expect(await removed()).toEqual([]);
  });

  test("a combo moves on to its next target after the HTML 404, as after a server error", async () => {
    wrongPath = { status: 404, headers: { "content-type": "text/html" }, text: "<!DOCTYPE html><html><body>Not Found</body></html>" };
    const before = gw.fake.requests.length;
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "duo", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    await res.arrayBuffer();
    expect(gw.fake.requests.slice(before).map((q) => q.path)).toEqual(["/nope/v1/messages", "/v1/chat/completions"]);
    expect(await removed()).toEqual([]);
  });

  test("the provider's JSON 404 model not found still removes the pairing", async () => {
    wrongPath = { status: 404, json: { type: "error", error: { type: "not_found_error", message: "model: claude-j" } } };
    const r = await ask("h/claude-j");
    expect(r.status).toBe(404);
    expect(await removed()).toContain("claude-j");
  });

  test("a reload that changes the provider's base_url lifts its removed pairings: the model is served again", async () => {
    expect(await ask("h/claude-j")).toMatchObject({ status: 404 });
    writeFileSync(gw.configPath, yaml(gw.fake.url).replaceAll("{{FAKE}}", gw.fake.url));
    const res = await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST", headers: admin });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await removed()).toEqual([]);
    // The store re-read the reload starts must not bring the removal back.
    await Bun.sleep(500);
    expect(await removed()).toEqual([]);
    expect((await gw.app.store.loadAccountState()).removedModels).toEqual([]);
    const r = await ask("h/claude-j");
    expect(r.status).toBe(200);
    expect(gw.fake.requests.at(-1)!.path).toBe("/v1/messages");
    const restored = events.filter((e) => e.type === "account_state" && e.change === "model_restored");
    expect(restored.map((e) => [(e as { model?: string }).model, (e as { reason?: string }).reason])).toEqual([
      ["claude-j", "removal (404 model not found) lifted: the provider's base_url or kind changed"],
    ]);
  });

  test("a reload that fixes the base_url lifts the wrong URL's cooldown: the very next request is served", async () => {
    const reload = async (hBase: string) => {
      writeFileSync(gw.configPath, yaml(hBase).replaceAll("{{FAKE}}", gw.fake.url));
      const res = await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST", headers: admin });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    await reload("{{FAKE}}/nope");
    wrongPath = { status: 404, headers: { "content-type": "text/html" }, text: "<h1>404 Not Found</h1>" };
    expect(await ask("h/claude-k")).toMatchObject({ status: 502 });
    const cooled = (await gw.app.store.loadAccountState()).cooldowns.filter((c) => c.accountId === "h1" && c.model === "claude-k");
    expect(cooled.map((c) => c.reason)).toEqual([MISDIRECTED_404_REASON]);
    // The operator fixes the base_url; the next request, at once, reaches the right URL and is served.
    await reload("{{FAKE}}");
    const before = gw.fake.requests.length;
    const r = await ask("h/claude-k");
    expect(r.status).toBe(200);
    expect(gw.fake.requests.slice(before).map((q) => q.path)).toEqual(["/v1/messages"]);
    expect((await gw.app.store.loadAccountState()).cooldowns.filter((c) => c.accountId === "h1")).toEqual([]);
    const ended = events.filter((e) => e.type === "account_state" && e.change === "cooldown_end" && (e as { model?: string }).model === "claude-k");
    expect(ended.map((e) => (e as { reason?: string }).reason)).toEqual([`cooldown (${MISDIRECTED_404_REASON}) lifted: the provider's base_url or kind changed`]);
  });
});
