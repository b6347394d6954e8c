/**
 * A disabled client key's refusals are its calls (try18 D19, SPEC O-1 "per request … client key …
 * outcome"): through the real gateway, a request with a disabled key's secret gets the 403
 * `key_disabled`, and `GET /admin/api/calls?key=NAME` lists it (rejected, 403, its requested model),
 * and Usage by key counts it under the key, not as "no valid key". The 403 does not wait for a body
 * that is slow or stalls (review19 R7): raw sockets, since no HTTP client sends a body that stalls.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
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

/**
 * Sends `head` and `body` on a raw connection and never sends the rest of the body the head announces:
 * what the server answered while the body was still open (status, lower-cased headers, body text), or
 * status 0 when no whole reply came within `waitMs`.
 */
function replyWhileBodyOpen(head: string, body: string, waitMs: number): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = "";
    const done = (status: number, headers: Record<string, string>, body: string) => {
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ status, headers, body });
    };
    const giveUp = setTimeout(() => done(0, {}, text), waitMs);
    socket.on("data", (d: Buffer) => {
      text += d.toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      if (split < 0) return;
      const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const rest = text.slice(split + 4);
      if (rest.length < Number(headers["content-length"] ?? 0)) return;
      done(Number(statusLine.split(" ")[1]), headers, rest);
    });
    socket.on("error", reject);
    socket.on("connect", () => socket.write(head + body));
  });
}

test("a disabled key's 403 goes out while the body is still arriving, with the model its first bytes name (review19 R7: it waited for the whole body, up to server.body_timeout_ms)", async () => {
  const made = await api("/keys", { method: "POST", body: JSON.stringify({ name: "carol" }) });
  expect(made.status).toBe(201);
  const secret: string = made.body.secret ?? made.body.key;
  expect((await api("/keys/carol/disable", { method: "POST" })).status).toBe(200);
  const head = (path: string, framing: string) => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${secret}\r\n${framing}\r\n`;
  // Anthropic, chunked, stalled after its first chunk (body_timeout_ms is the default 120 s).
  const part = '{"model":"anth/claude-x",';
  const messages = await replyWhileBodyOpen(head("/v1/messages", "anthropic-version: 2023-06-01\r\nTransfer-Encoding: chunked\r\n"), `${part.length.toString(16)}\r\n${part}\r\n`, 30_000);
  expect(messages.status).toBe(403);
  expect(JSON.parse(messages.body)).toMatchObject({ type: "error", error: { type: "permission_error" } });
  expect(JSON.parse(messages.body).error.message).toContain('Client key "carol" is disabled');
  // the rest of the body is not read: it must not be taken for a next request
  expect(messages.headers.connection).toBe("close");
  // Chat, a Content-Length larger than what is sent, and not even the model yet.
  const chat = await replyWhileBodyOpen(head("/v1/chat/completions", "Content-Length: 500\r\n"), '{"messages":[', 30_000);
  expect(chat.status).toBe(403);
  expect(JSON.parse(chat.body).error.code).toBe("key_disabled");

  for (let i = 0; i < 300 && (await api("/calls?key=carol")).body.calls.length < 2; i++) await Bun.sleep(100);
  const calls: any[] = (await api("/calls?key=carol")).body.calls;
  expect(calls.map((c) => [c.keyName, c.outcome, c.status, c.requestedModel]).sort()).toEqual([
    ["carol", "rejected", 403, ""],
    ["carol", "rejected", 403, "anth/claude-x"],
  ]);
  expect(gw.fake.requests.length).toBe(0);
}, 90_000);
