/**
 * A request whose client went away while its attempt was still waiting on the upstream (before the
 * commit point: headers and a message_start came, then the upstream stalled) is counted under the model
 * and account that attempt had reached. Before, its usage row had neither: `switchyard usage` and
 * `usage --by account` counted it under "(none)", and the calls list and the dashboard's Calls page
 * showed Served by and Account as "–", though `calls inspect` named the attempt's account (a
 * new-user tryout with real agents). Real gateway, scriptable fake upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream } from "../support/fake-upstream.ts";
import { usageLines } from "../../src/cli/usage-table.ts";
import { table } from "../../src/cli/table.ts";
import { providersAtFake } from "../support/configs.ts";
import { until } from "../support/until.ts";

const YAML = `
${providersAtFake(["anth", "anthropic"])}
accounts:
  - { id: anth-1, provider: anth, api_key: env:KEY_A1 }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A1: "sk-test-client-closed" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

test("a client that leaves while the upstream stalls before the first content: usage row, usage by account and the calls list name the attempt's model and account", async () => {
  const sse = simpleReply("anthropic-messages", { text: "never reaches the client", model: "claude-fake" }, true).sse!;
  // headers and the message_start (~200 bytes), then silence: no content, so no commit
  gw.fake.enqueue({ sse, stall_after_bytes: sse.indexOf("event: content_block_start") });
  const client = new AbortController();
  const pending = fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "anth/claude-fake", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
    signal: client.signal,
  }).catch((e: unknown) => e);
  await until(() => gw.fake.requests.length === 1, 10_000, "the upstream call");
  client.abort();
  expect(await pending).toBeInstanceOf(Error);
  // the gateway aborts its upstream call when the client goes
  await until(() => gw.fake.aborted === 1, 15_000, "the upstream call aborted");

  type Calls = { calls: Array<{ outcome: string; providerId?: string; model?: string; accountId?: string; requestedModel: string }> };
  let calls: Calls = { calls: [] };
  await until(
    async () => {
      calls = (await (await fetch(`${gw.url}/admin/api/calls`)).json()) as Calls;
      return calls.calls.length === 1;
    },
    10_000,
    "the call in the calls list",
  );
  expect(calls.calls.map((c) => [c.requestedModel, c.outcome, c.providerId, c.model, c.accountId])).toEqual([["anth/claude-fake", "client_closed", "anth", "claude-fake", "anth-1"]]);

  const byAccount = (await (await fetch(`${gw.url}/admin/api/usage?by=account`)).json()) as { rows: Array<{ group: string | null; requests: number; clientClosed?: number; inputTokens: number; outputTokens: number }> };
  expect(byAccount.rows.map((r) => [r.group, r.requests])).toEqual([["anth-1", 1]]);
  // The tokens the upstream's message_start reported (11 in, 1 out) count, as the provider bills a
  // stream it began (since session 46 a failed or abandoned attempt's reported usage is recorded; before,
  // this row had no tokens and its cost read "-").
  expect(byAccount.rows.map((r) => [r.inputTokens, r.outputTokens])).toEqual([[11, 1]]);
  const lines = usageLines(byAccount.rows as never, "account", table).flatMap((l) => l.split("\n"));
  expect(lines.some((l) => l.startsWith("(none)"))).toBe(false);
  // one request of a model with no price: its cost reads "unpriced", not "$0.00"
  expect(lines.find((l) => l.startsWith("anth-1 "))).toMatch(/^anth-1\s+1\s.*\sunpriced$/);

  const byModel = (await (await fetch(`${gw.url}/admin/api/usage?by=model`)).json()) as { rows: Array<{ group: string | null; requests: number }> };
  expect(byModel.rows.map((r) => [r.group, r.requests])).toEqual([["anth/claude-fake", 1]]);
});
