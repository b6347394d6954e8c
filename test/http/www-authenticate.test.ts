/**
 * Every 401 the gateway answers carries `WWW-Authenticate: Bearer realm="switchyard"` (RFC 9110
 * 15.5.2: a 401 MUST carry a challenge; the OpenAPI document declares `bearer`; every route takes
 * `Authorization: Bearer KEY`): the admin API's, `/metrics`', the dashboard sign-in's and the API
 * endpoints' in each client format (OpenAI, Anthropic's `x-api-key` clients, Gemini's
 * `x-goog-api-key`, the model lists). Found in an admin-API tryout (2026-12-07): none carried one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { providersAtFake } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
server:
  require_api_key: true
${providersAtFake(["oai", "openai"])}
accounts:
  - id: oai-1
    provider: oai
    api_key: env:FAKE_KEY
`);
});
afterAll(async () => {
  await gw?.stop();
});

const CHALLENGE = 'Bearer realm="switchyard"';

/** Status, the error's type (Gemini's `status`) and the challenge of an answer. */
async function seen(res: Response) {
  const body = (await res.json()) as { error: { type?: string; status?: string } };
  return { status: res.status, type: body.error.type ?? body.error.status, challenge: res.headers.get("www-authenticate") };
}

test("a 401 of the admin API names the Bearer scheme in WWW-Authenticate", async () => {
  for (const headers of [{}, { authorization: "Bearer not-a-key" }] as Record<string, string>[]) {
    const res = await fetch(`${gw.url}/admin/api/keys`, { headers });
    expect(await seen(res)).toEqual({ status: 401, type: "authentication_error", challenge: CHALLENGE });
  }
});

test("the API endpoints' 401 carries the challenge in every client format", async () => {
  const json = { "content-type": "application/json" };
  const calls: Record<string, [string, RequestInit]> = {
    "openai chat, no key": ["/v1/chat/completions", { method: "POST", headers: json, body: JSON.stringify({ model: "oai/m", messages: [{ role: "user", content: "hi" }] }) }],
    "responses, wrong Bearer": ["/v1/responses", { method: "POST", headers: { ...json, authorization: "Bearer wrong-key-1" }, body: JSON.stringify({ model: "oai/m", input: "hi" }) }],
    "anthropic, wrong x-api-key": ["/v1/messages", { method: "POST", headers: { ...json, "x-api-key": "wrong-key-2" }, body: JSON.stringify({ model: "oai/m", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) }],
    "gemini, wrong x-goog-api-key": ["/v1beta/models/m:generateContent", { method: "POST", headers: { ...json, "x-goog-api-key": "wrong-key-3" }, body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }) }],
    "model list, no key": ["/v1/models", {}],
    "gemini model list, no key": ["/v1beta/models", {}],
  };
  const out: Record<string, unknown> = {};
  for (const [name, [path, init]] of Object.entries(calls)) out[name] = await seen(await fetch(`${gw.url}${path}`, init));
  const auth = { status: 401, type: "authentication_error", challenge: CHALLENGE };
  expect(out).toEqual({
    "openai chat, no key": auth,
    "responses, wrong Bearer": auth,
    "anthropic, wrong x-api-key": auth,
    "gemini, wrong x-goog-api-key": { status: 401, type: "UNAUTHENTICATED", challenge: CHALLENGE },
    "model list, no key": auth,
    "gemini model list, no key": { status: 401, type: "UNAUTHENTICATED", challenge: CHALLENGE },
  });
});

test("/metrics' and the dashboard sign-in's 401 carry it too; a 403 does not", async () => {
  const metrics = await fetch(`${gw.url}/metrics`, { headers: { authorization: "Bearer wrong-key-4", "x-forwarded-for": "203.0.113.9" } });
  const signIn = await fetch(`${gw.url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key: "wrong-key-5" }) });
  const made = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${gw.app.adminToken}` }, body: JSON.stringify({ name: "plain" }) });
  const { secret } = (await made.json()) as { secret: string };
  const forbidden = await fetch(`${gw.url}/admin/api/keys`, { headers: { authorization: `Bearer ${secret}` } });
  expect({ metrics: await seen(metrics), signIn: await seen(signIn), forbidden: await seen(forbidden) }).toEqual({
    metrics: { status: 401, type: "authentication_error", challenge: CHALLENGE },
    signIn: { status: 401, type: "authentication_error", challenge: CHALLENGE },
    forbidden: { status: 403, type: "permission_error", challenge: null },
  });
});
