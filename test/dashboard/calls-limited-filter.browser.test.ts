/**
 * The Calls page's account filter finds a call by an account that answered one of its attempts with
 * 429, not only by the account that served it (newuser12b's tryout: the filter knew only the account
 * that answered, or was tried last). Real gateway, scriptable fake upstream, one provider with two
 * accounts; real Chromium.
 */
import { expect, test } from "bun:test";
import { simpleReply, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
    priority: 1
  - id: a2
    provider: p
    api_key: env:KEY_A2
    priority: 2
`;
const ENV = { KEY_A1: "sk-test-calls-filter-one", KEY_A2: "sk-test-calls-filter-two" };

const suite = withGatewayAndBrowser(YAML, { env: ENV });

const limited: FakeReply = { status: 429, headers: { "retry-after": "30" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
const who = (r: ReceivedRequest) => (r.headers["x-api-key"] === ENV.KEY_A1 ? "a1" : "a2");
const post = (model: string) =>
  fetch(`${suite.gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });

test("Calls filtered by an account lists the calls it served and those it answered with 429, saying so beside the account that served", async () => {
  const gw = suite.gw;
  // claude-x: a1 answers 429 and a2 serves; then claude-x again: a1 cooling down for it (30 s), a2 serves alone.
  // (Another model, not under the cooldown, would go to a1 first: a 429 is not counted against its score.)
  gw.fake.handle((r) => (who(r) === "a1" ? limited : simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream)));
  expect((await post("p/claude-x")).status).toBe(200);
  expect((await post("p/claude-x")).status).toBe(200);
  expect(gw.fake.requests.map((r) => `${who(r)} ${r.model}`)).toEqual(["a1 claude-x", "a2 claude-x", "a2 claude-x"]);

  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${gw.url}/dashboard/calls?account=a1`);
    const rows = w.page.locator("table.calls tbody tr");
    await rows.first().waitFor({ timeout: 10_000 });
    expect(await rows.count()).toBe(1);
    expect(await rows.first().innerText()).toContain("claude-x");
    expect((await rows.first().locator("td").allInnerTexts()).some((t) => t.trim() === "a2 · a1 answered 429")).toBe(true);
    // by the account that served: both, without the note
    await w.page.goto(`${gw.url}/dashboard/calls?account=a2`);
    await rows.nth(1).waitFor({ timeout: 10_000 });
    expect(await rows.count()).toBe(2);
    expect(await w.page.locator(".limited-by").count()).toBe(0);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
