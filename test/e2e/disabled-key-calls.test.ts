/**
 * A disabled client key's refusals are its calls (try18 D19, SPEC O-1 "per request … client key …
 * outcome"): through the real gateway, a request with a disabled key's secret gets the 403
 * `key_disabled`, and `GET /admin/api/calls?key=NAME` lists it (rejected, 403, its requested model),
 * and Usage by key counts it under the key, not as "no valid key".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
providers:
  - id: anth
    kind: anthropic
    base_url: "{{FAKE}}"
accounts:
  - { id: anth-1, provider: anth, api_key: "env:FAKE_KEY" }
`);
});
afterAll(() => gw?.stop());

const api = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${gw.url}/admin/api${path}`, { ...init, headers: { "content-type": "application/json" } });
  return { status: res.status, body: (await res.json()) as any };
};

test("a disabled key's 403 is recorded under the key with its model: Calls by key lists it, Usage by key counts it", async () => {
  const made = await api("/keys", { method: "POST", body: JSON.stringify({ name: "bob" }) });
  expect(made.status).toBe(201);
  const secret: string = made.body.secret ?? made.body.key;
  expect((await api("/keys/bob/disable", { method: "POST" })).status).toBe(200);
  const send = (body: unknown) =>
    fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }, body: JSON.stringify(body) });
  const res = await send({ model: "anth/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
  expect(res.status).toBe(403);
  const answer = (await res.json()) as any;
  expect(answer.error.message).toContain('Client key "bob" is disabled');
  const requestId = res.headers.get("x-request-id");
  // A body that is not JSON gets the same 403 (the key is refused before the body is judged).
  const bad = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }, body: "{not json" });
  expect(bad.status).toBe(403);
  await bad.text();

  // Both refusals recorded (whatever key they carry), then the ones under bob.
  for (let i = 0; i < 200 && (await api("/calls?outcome=rejected")).body.calls.length < 2; i++) await Bun.sleep(100);
  const calls: any[] = (await api("/calls?key=bob")).body.calls;
  expect(calls.map((c) => [c.keyName, c.outcome, c.status, c.requestedModel]).sort()).toEqual([
    ["bob", "rejected", 403, ""],
    ["bob", "rejected", 403, "anth/claude-x"],
  ]);
  expect(calls.some((c) => c.requestId === requestId)).toBe(true);
  expect((await api("/calls?key=bob&outcome=rejected")).body.calls.length).toBe(2);
  const usage = (await api("/usage?since=1h&by=key")).body;
  expect(usage.rows.map((r: any) => [r.group, r.requests])).toEqual([["bob", 2]]);
}, 60_000);
