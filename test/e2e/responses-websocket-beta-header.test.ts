/**
 * Found by a tryout with the real Codex CLI 0.171 over the Responses WebSocket (SPEC 2.5): Codex's
 * upgrade request carries `OpenAI-Beta: responses_websockets=2026-02-06`, the flag of the WebSocket
 * transport between Codex and the gateway. The gateway's call upstream is an HTTP `POST …/responses`,
 * yet every frame's request takes the upgrade's headers, `openai-beta` is on the forwarded allow-list
 * of the Responses kinds (src/providers/index.ts), and so the HTTP call carries the WebSocket flag
 * (seen on a native `openai-responses` upstream with the real Codex). For a `codex` provider (the
 * ChatGPT backend) it also takes the place of the `OpenAI-Beta: responses=experimental` the gateway
 * sends when the client sent none (src/providers/codex.ts `codexHeaders`, "never overriding the
 * client's"): the same Codex turn reaches the backend with `responses=experimental` over HTTP and with
 * `responses_websockets=2026-02-06` when Codex used the WebSocket. (Not checked against the real
 * backend: what it does with the WebSocket flag on an HTTP call is not known here.)
 *
 * Where: src/http/responses-socket.ts (HOP_HEADERS: the upgrade's headers that do not belong on the
 * per-frame requests) and src/providers/codex.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import { startFakeVendor } from "../oauth/fake-oauth.ts";
import { startWorld, type SubscriptionWorld } from "../oauth/helpers.ts";
import { connect } from "../support/responses-socket.ts";
import { startGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let w: SubscriptionWorld;
beforeAll(async () => {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  w = await startWorld("", { upstream, vendor });
  const a = vendor.seed({ name: "a", chatgptAccountId: "acct-a", models: ["gpt-5-codex"] });
  await w.call("POST", "/accounts", { provider: "cx", id: "cx-a", credential: { type: "oauth", access_token: a.accessToken, refresh_token: a.refreshToken, expires_at: Date.now() + 3600_000 } });
});
afterAll(async () => {
  await w?.stop();
});

const betaOfLastCall = () => w.vendor.calls.filter((c) => c.path.startsWith("/responses")).at(-1)?.headers["openai-beta"];

test("a Codex turn reaches a codex provider with the same OpenAI-Beta over the WebSocket as over HTTP", async () => {
  const body = { model: "cx/gpt-5-codex", input: "hi", store: false, stream: true };
  const res = await fetch(`${w.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json", originator: "codex_exec" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
  const overHttp = betaOfLastCall();
  expect(overHttp).toBe("responses=experimental");

  const c = await connect(w.gw.url, { "openai-beta": "responses_websockets=2026-02-06", originator: "codex_exec" });
  try {
    c.send({ type: "response.create", ...body });
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
  } finally {
    c.ws.close();
  }
  // Before the fix: "responses_websockets=2026-02-06", the WebSocket's flag, on the backend's HTTP call.
  expect(betaOfLastCall()).toBe(overHttp);
});

test("a native openai-responses upstream gets the upgrade's other OpenAI-Beta flags, never the WebSocket's own", async () => {
  const gw = await startGateway(fakeProviders([["resp", "openai-responses"]]));
  try {
    const cases: [string, string | null][] = [
      ["responses_websockets=2026-02-06", null],
      ["assistants=v2, responses_websockets=2026-02-06", "assistants=v2"],
    ];
    for (const [upgradeBeta, upstreamBeta] of cases) {
      const c = await connect(gw.url, { "openai-beta": upgradeBeta });
      try {
        c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", store: false });
        expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
      } finally {
        c.ws.close();
      }
      const sent: string | null = gw.fake.requests.at(-1)!.headers["openai-beta"] ?? null;
      expect([upgradeBeta, sent] as unknown[]).toEqual([upgradeBeta, upstreamBeta]);
    }
  } finally {
    await gw.stop();
  }
});
