/**
 * Rate-limited attempts counted against the account that was hit (newuser12b H9): a request whose
 * first account answered 429 and whose second served was known only under the second, so Usage by
 * account (the admin API, `switchyard usage --by account`, the dashboard) showed no sign of the first
 * account's limits. Real gateway, scriptable fake upstream, one provider with two accounts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { usageLines } from "../../src/cli/usage-table.ts";
import { table } from "../../src/cli/table.ts";
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
const ENV = { KEY_A1: "sk-test-limited-one", KEY_A2: "sk-test-limited-two" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

const limited: FakeReply = { status: 429, headers: { "retry-after": "30" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
const who = (r: ReceivedRequest) => (r.headers["x-api-key"] === ENV.KEY_A1 ? "a1" : "a2");
const post = (model: string) =>
  fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });

test("usage by account counts each 429 against the account that answered it, in the admin API, the CLI's table and the calls", async () => {
  // claude-x: a1 answers 429, a2 serves; then a1 cools down and a2 serves alone.
  // claude-y: both answer 429, the client gets the 429.
  gw.fake.handle((r) => (r.model === "claude-y" || (who(r) === "a1" && r.model === "claude-x") ? limited : simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream)));
  expect((await post("p/claude-x")).status).toBe(200);
  expect((await post("p/claude-x")).status).toBe(200);
  expect((await post("p/claude-y")).status).toBe(429);
  // (claude-y: the scored strategy may put a2 first once a1 has failed)
  expect(gw.fake.requests.map((r) => `${who(r)} ${r.model}`).sort()).toEqual(["a1 claude-x", "a1 claude-y", "a2 claude-x", "a2 claude-x", "a2 claude-y"]);

  const usage = (await (await fetch(`${gw.url}/admin/api/usage?by=account`)).json()) as { rows: Array<{ group: string | null; requests: number; rateLimited?: number }> };
  // The failed request is counted under the account tried last (as before); each 429 under the account that answered it.
  const lastY = who(gw.fake.requests.at(-1)!);
  const byAccount = Object.fromEntries(usage.rows.map((r) => [r.group ?? "(none)", [r.requests, r.rateLimited]]));
  expect(byAccount).toEqual(lastY === "a1" ? { a2: [2, 1], a1: [1, 2] } : { a2: [3, 1], a1: [0, 2] });
  // The account filter names the account that was hit.
  const a1 = (await (await fetch(`${gw.url}/admin/api/usage?by=account&account=a1`)).json()) as typeof usage;
  expect(a1.rows.map((r) => [r.group, r.requests, r.rateLimited])).toEqual([["a1", lastY === "a1" ? 1 : 0, 2]]);

  const lines = usageLines(usage.rows, "account", table).flatMap((l) => l.split("\n"));
  expect(lines[0]).toMatch(/^account\s+requests\s+errors\s+refused\s+rate_limited\s+input/);
  expect(lines.find((l) => l.startsWith("a1 "))).toMatch(new RegExp(`^a1\\s+${lastY === "a1" ? 1 : 0}\\s+${lastY === "a1" ? 1 : 0}\\s+0\\s+2\\s`));
  expect(lines.some((l) => l.startsWith("rate_limited: attempts the account answered with 429"))).toBe(true);

  const calls = (await (await fetch(`${gw.url}/admin/api/calls`)).json()) as { calls: Array<{ accountId?: string; status: number; rateLimited?: string[] }> };
  expect(calls.calls.map((c) => [c.accountId ?? null, c.status, (c.rateLimited ?? []).sort()])).toEqual([
    [lastY, 429, ["a1", "a2"]],
    ["a2", 200, []],
    ["a2", 200, ["a1"]],
  ]);
  // The calls' account filter finds a call by an account that answered an attempt with 429 too, not only by the one that
  // served (it found a1's one only when a1 was tried last); a page at a time as well.
  type Calls = typeof calls & { older?: string };
  const byA1 = (await (await fetch(`${gw.url}/admin/api/calls?account=a1`)).json()) as Calls;
  expect(byA1.calls.map((c) => [c.accountId ?? null, c.status, (c.rateLimited ?? []).sort()])).toEqual([
    [lastY, 429, ["a1", "a2"]],
    ["a2", 200, ["a1"]],
  ]);
  const first = (await (await fetch(`${gw.url}/admin/api/calls?account=a1&limit=1`)).json()) as Calls;
  expect(first.calls.map((c) => c.status)).toEqual([429]);
  const next = (await (await fetch(`${gw.url}/admin/api/calls?account=a1&limit=1&before=${encodeURIComponent(first.older!)}`)).json()) as Calls;
  expect([next.calls.map((c) => [c.accountId, c.status]), next.older]).toEqual([[["a2", 200]], undefined]);
  // served by a2 alone (a1 cooling down): found by a2, not by a1
  const byA2 = (await (await fetch(`${gw.url}/admin/api/calls?account=a2&outcome=ok`)).json()) as Calls;
  expect(byA2.calls.map((c) => [c.accountId, (c.rateLimited ?? []).sort()])).toEqual([
    ["a2", []],
    ["a2", ["a1"]],
  ]);
});
