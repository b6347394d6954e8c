/**
 * REPORT ONLY (cost46 tryout; fails now; severity low, the lead decides what SPEC 9.6's "requests"
 * means): token counts (`POST /v1/messages/count_tokens`, Gemini's `:countTokens`) count against a client
 * key's `rpm`, though they make no usage row, cost nothing and are not listed by `switchyard usage`,
 * `GET /admin/api/usage` or the calls list.
 *
 * What a user would notice: a key with `rpm: 2` whose client counted tokens twice (Claude Code and the
 * Gemini SDK call these) gets its first real message refused, "Client key … is over its limit of 2
 * requests per minute (rpm); retry in 60 s", though token counts leave no usage row (README), so usage
 * lists none of the requests that used up its minute. Anthropic's own API rate-limits token counting apart from
 * message creation.
 *
 * Expected: after two count_tokens calls, the key's first /v1/messages is served (200) and `GET
 * /admin/api/keys` `use.minute.requests.used` is 1. Actual: 429 with Retry-After 60 (rpm), and `used`
 * was already 2 before it. Likely pipeline/key-limits.ts `checkKeyLimits`, called by the guard for
 * every model route, count_tokens included (pipeline/count-tokens.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const ADMIN = "sy-test-count-rpm-admin00001";
const KEY = "sy-test-count-rpm-client0001";
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`${providersAtFake(["anth", "anthropic"])}
accounts:
  - { id: anth-1, provider: anth, api_key: env:FAKE_KEY }
server: { require_api_key: true }
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
  - { name: counted, key: ${KEY}, limits: { rpm: 2 } }
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
