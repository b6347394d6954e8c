/**
 * Found by a provider tryout (session 45; fixed that session): an upstream that answers a redirect (301/307: a base URL
 * on http:// that the server moves to https://, a path the server wants with a trailing slash, a proxy
 * sending to its login host) is not followed (right: the call carries the account's key, which must not
 * go to another host; src/providers/index.ts fetches with `redirect: "manual"`), but what the client is
 * told is wrong:
 * - through an `anthropic` provider the client gets the redirect's own status, 301 or 307, with an
 *   error body and no Location (formats/anthropic-messages/errors.ts `parseError` keeps the upstream
 *   status as the error's status, and nothing maps a 3xx to a gateway error). A 3xx is not an error
 *   status an SDK expects: the OpenAI and Anthropic SDKs' fetch follows a redirect, and with no
 *   Location it surfaces a 3xx "error";
 * - through a `gemini` provider the message says "Gemini returned HTTP 500." for a 301 or 307
 *   (formats/gemini/errors.ts `errorFromStatus` takes 500 for any status below 400).
 *
 * Expected: a gateway error status (502) in the client's format whose message names the status the
 * upstream sent; where it redirected to (usually a base_url to correct) is in the attempt's route trace,
 * for the operator, not in the client's message (the client of a gateway is not its operator: review19 R4).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["anth", "anthropic"], ["gem", "gemini"], ["oai", "openai"], ["chat", "openai-compatible"], ["resp", "openai-responses"], ["anthc", "anthropic-compatible"]]));
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

async function post(path: string, body: unknown): Promise<{ status: number; json: any; routeId: string }> {
  const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), redirect: "manual" });
  return { status: res.status, json: await res.json(), routeId: res.headers.get("x-switchyard-route-id")! };
}

/** The attempts' errors of the route trace of `routeId` from the admin API (the operator's view), once saved. */
async function traceErrors(routeId: string): Promise<string[]> {
  for (let i = 0; ; i++) {
    const res = await fetch(`${gw.url}/admin/api/route-traces/${routeId}`);
    if (res.ok || i >= 200) return ((await res.json()) as { attempts: Array<{ error?: string }> }).attempts.map((a) => a.error ?? "");
    await res.arrayBuffer();
    await Bun.sleep(50);
  }
}

describe("an upstream redirect", () => {
  for (const status of [301, 307]) {
    test(`anthropic provider answers ${status}: the Anthropic client gets a gateway error (not a ${status}) naming ${status}`, async () => {
      gw.fake.handle(() => ({ status, headers: { location: "https://api.example.invalid/v1/messages" }, text: "" }));
      const r = await post("/v1/messages", { model: `anth/claude-test-${status}`, max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
      expect(r.status).toBe(502);
      expect(r.json.error?.message).toContain(String(status));
    });

    test(`gemini provider answers ${status}: the message names ${status}, not 500`, async () => {
      gw.fake.handle(() => ({ status, headers: { location: "https://generativelanguage.example.invalid/" }, text: "" }));
      const r = await post(`/v1beta/models/gem/gemini-test-${status}:generateContent`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
      expect(r.json.error?.message).toContain(String(status));
      expect(r.json.error?.message).not.toContain("HTTP 500");
    });
  }

  for (const [provider, path, body, messageOf] of [
    ["oai", "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }, (j: any) => j.error?.message],
    ["chat", "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }, (j: any) => j.error?.message],
    ["resp", "/v1/responses", { input: "hi" }, (j: any) => j.error?.message],
    ["anthc", "/v1/messages", { max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, (j: any) => j.type === "error" && j.error?.message],
    ["gem", "/v1/messages", { max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, (j: any) => j.type === "error" && j.error?.message],
  ] as const) {
    test(`${provider} answers 308 (${path}): 502 in the client's format naming the status, the Location (without its query) in the route trace only; one call; the account is not cooled down`, async () => {
      gw.fake.reset();
      gw.fake.handle(() => ({ status: 308, headers: { location: "https://api.example.invalid/v2/?token=sk-query-secret-123" }, text: "" }));
      const model = `${provider}/m-308-${path.length}`;
      const r = await post(path, { model, ...body });
      expect(r.status).toBe(502);
      const message = String(messageOf(r.json));
      expect(message).toContain("HTTP 308");
      expect(message).toContain(`providers[].base_url of ${provider}`);
      expect(message).not.toContain("example.invalid");
      const [traced] = await traceErrors(r.routeId);
      expect(traced).toStartWith("Redirect to https://api.example.invalid/v2/ — ");
      expect(traced).not.toContain("token");
      expect(traced).not.toContain("sk-query-secret");
      expect(gw.fake.requests.length).toBe(1);
      // no cooldown: the same account serves the same model at once once the upstream answers
      gw.fake.handle((req) => simpleReply(req.format!, { text: "Served after the redirect.", model: req.model }, req.stream));
      const again = await post(path, { model, ...body });
      expect(again.status).toBe(200);
      expect(gw.fake.requests.length).toBe(2);
    });
  }
});
