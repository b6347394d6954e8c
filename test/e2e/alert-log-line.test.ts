/**
 * An alert is also a log line (SPEC 9.7, O-4): an upstream 401 locks the provider's accounts, and the
 * instance's log says so in a JSON line per alert (`alert account_locked account:ID`, level warn, the
 * lock's reason and advice in `detail`), with no account key in it. Before, the log held only the
 * request's own line, so an operator reading it never learned of the lock (newuser12a's tryout, G7).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { alertLogLine } from "../../src/alerts/alert-log.ts";
import { providersAtFake } from "../support/configs.ts";

const KEY = "sk-test-alertlog-aaaaaaaaaaaa";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
${providersAtFake(["p", "anthropic"])}
    models: { claude-x: {} }
accounts:
  - { id: pa1, provider: p, api_key: "${KEY}" }
`);
  gw.fake.handle(() => ({ status: 401, json: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${KEY}` } } }));
});
afterAll(async () => {
  await gw?.stop();
});

test("an account locked by an upstream 401 is a warn line in the log, its detail scrubbed of the account's key", async () => {
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(503);
  await res.text();
  let line: any;
  for (const end = Date.now() + 5_000; !line && Date.now() < end; await Bun.sleep(20)) {
    line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.event === "account_locked");
  }
  expect({ level: line.level, msg: line.msg, subject: line.subject, reason: line.detail.reason, advice: typeof line.detail.advice }).toEqual({
    level: "warn",
    msg: "alert account_locked account:pa1",
    subject: "account:pa1",
    reason: "401 unauthorized",
    advice: "string",
  });
  expect(Number.isInteger(line.time)).toBe(true);
  expect(gw.logs.join("\n")).not.toContain(KEY);
});

test("a threshold crossing and a circuit closing are info; a secret anywhere in the detail is replaced", () => {
  const at = 1_796_446_018_488;
  const info = JSON.parse(alertLogLine({ type: "alert", event: "circuit_closed", at, subject: "provider:p", detail: {} }));
  expect([info.level, info.msg]).toEqual(["info", "alert circuit_closed provider:p"]);
  const warn = JSON.parse(alertLogLine({ type: "alert", event: "account_quarantined", at, subject: "account:a", detail: { reason: "refresh failed for tok-secret-1" } }, ["tok-secret-1"]));
  expect(warn.level).toBe("warn");
  expect(JSON.stringify(warn)).not.toContain("tok-secret-1");
});
