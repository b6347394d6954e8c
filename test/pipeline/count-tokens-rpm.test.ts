/**
 * Token counts (`POST /v1/messages/count_tokens`, Gemini's `:countTokens`) call no model and cost
 * nothing (Anthropic rate-limits token counting apart from message creation), and they make no usage
 * row: since 2026-12-07 they are neither counted by nor refused for a client key's rpm, tpm, budgets or
 * concurrency (pipeline/key-limits.ts checkKeyLimits); the key itself and its `models` allow-list still
 * apply. Before, a key with `rpm: 2` whose client counted tokens twice (Claude Code and the Gemini SDK
 * call these) got its first real message refused, "Client key … is over its limit of 2 requests per
 * minute (rpm); retry in 60 s", with no usage row listing what used up its minute.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const ADMIN = "sy-test-count-rpm-admin00001";
const KEY = "sy-test-count-rpm-client0001";
const SPENT = "sy-test-count-rpm-spent00001";
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`${providersAtFake(["anth", "anthropic"])}
accounts:
  - { id: anth-1, provider: anth, api_key: env:FAKE_KEY }
server: { require_api_key: true }
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
  - { name: counted, key: ${KEY}, limits: { rpm: 2 } }
  - { name: spent, key: ${SPENT}, limits: { rpm: 1, models: ["anth/*"] } }
`);
  gw.fake.handle((req) => (req.path.endsWith("/count_tokens") ? { json: { input_tokens: 42 } } : simpleReply(req.format!, { text: "ok", model: req.model }, req.stream)));
});
afterAll(async () => {
  await gw?.stop();
});

const post = (path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });

test("two token counts, then a message: the message is served and the key's minute shows one request", async () => {
  for (let i = 0; i < 2; i++) {
    const r = await post("/v1/messages/count_tokens", { model: "anth/claude-x", messages: [{ role: "user", content: "hi" }] });
    expect(await r.json()).toEqual({ input_tokens: 42 });
  }
  const r = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
  const text = await r.text();
  const keys = (await (await fetch(`${gw.url}/admin/api/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { keys: { name: string; use: any }[] };
  expect({ status: r.status, retryAfter: r.headers.get("retry-after"), refusal: r.status === 429 ? JSON.parse(text).error.message : undefined, minuteRequests: keys.keys.find((k) => k.name === "counted")!.use.minute.requests.used }).toEqual({
    status: 200,
    retryAfter: null,
    refusal: undefined,
    minuteRequests: 1,
  });
});

test("a key whose minute is used up still counts tokens; its models allow-list still applies to token counts", async () => {
  const as = (path: string, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${SPENT}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  expect((await as("/v1/messages", { model: "anth/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
  const refused = await as("/v1/messages", { model: "anth/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
  expect(refused.status).toBe(429);
  // one request, singular (it read "1 requests per minute")
  expect(((await refused.json()) as { error: { message: string } }).error.message).toStartWith('Client key "spent" is over its limit of 1 request per minute (rpm); retry in ');
  const counted = await as("/v1/messages/count_tokens", { model: "anth/claude-x", messages: [{ role: "user", content: "hi" }] });
  expect({ status: counted.status, body: await counted.json() }).toEqual({ status: 200, body: { input_tokens: 42 } });
  const other = await as("/v1/messages/count_tokens", { model: "other/claude-x", messages: [{ role: "user", content: "hi" }] });
  expect({ status: other.status, message: ((await other.json()) as { error: { message: string } }).error.message }).toEqual({
    status: 403,
    message: 'Client key "spent" may not use the model "other/claude-x"; its models limit allows: anth/*.',
  });
});
