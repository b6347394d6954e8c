/**
 * Tryout finding (routing): with the default `max_attempts` (8, SPEC 6.1), same-account retries of a
 * 503 (up to 3 more per account, SPEC 6.2) spend the whole attempt budget on the first two unhealthy
 * targets, and a healthy third target of the combo is never tried: the client gets the 503 although
 * the gateway could have served it (SPEC's opening: "It falls back across accounts and models before
 * the first byte reaches the client"), and the route trace does not say why the third was skipped.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { accountsOf, combosOf, providersAtFakePaths } from "../support/configs.ts";
import { postHi, startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = `
${providersAtFakePaths(["p", "anthropic"], ["q", "anthropic"], ["r", "anthropic"])}
${accountsOf(["a", "p", "KEY_A"], ["b", "q", "KEY_B"], ["c", "r", "KEY_C"])}
${combosOf(["chain", ["p/claude-x", "q/claude-x", "r/claude-x"]])}
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A: "sk-test-aaaaaaaa", KEY_B: "sk-test-bbbbbbbb", KEY_C: "sk-test-cccccccc" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

const unavailable: FakeReply = { status: 503, json: { type: "error", error: { type: "api_error", message: "service unavailable" } } };

test("two targets answering 503 do not use up the attempts before the healthy third target is tried", async () => {
  gw.fake.handle((r: ReceivedRequest) => (r.path.startsWith("/r/") ? simpleReply(r.format!, { text: "served by r", model: r.model }, r.stream) : unavailable));
  const res = await postHi(gw.url, "chain");
  const calls = gw.fake.requests.map((r) => r.path.split("/")[1]);
  expect({ status: res.status, reachedR: calls.includes("r") }).toEqual({ status: 200, reachedR: true });
});
