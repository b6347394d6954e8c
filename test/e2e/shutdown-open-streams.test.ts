/**
 * SPEC D-3 with SPEC 6.4: a stream still open when a shutdown's grace period is over ends with the
 * client format's in-band error (the upstream call aborted), never a cut connection that a client could
 * take for a finished reply; that error, its log line and its usage row say the gateway is stopping
 * (`gateway_stopping`, outcome `error`), not that the upstream failed. A request still waiting
 * on its upstream then (for a whole reply) gets a 503 in its own format, its upstream call aborted, and
 * leaves its usage row and log line.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { join } from "node:path";
import { startGateway } from "../support/gateway.ts";
import { simpleReply, type FakeReply } from "../support/fake-upstream.ts";

/** The streams a grace period of 300 ms does not see the end of: headers and the first content event, then silence. */
const streams: Array<{ client: string; path: string; body: object; upstream: "openai-chat" | "anthropic-messages" | "gemini"; error: (frames: string[]) => { message: string } }> = [
  {
    client: "Chat",
    path: "/v1/chat/completions",
    body: { model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] },
    upstream: "openai-chat",
    error: (frames) => {
      expect(frames.at(-1)).toBe("data: [DONE]");
      const b = JSON.parse(frames.at(-2)!.slice("data: ".length));
      expect(b.error.code).toBe("gateway_stopping"); // before the fix: upstream_connection_lost
      expect(frames.join("\n")).not.toContain('"finish_reason":"stop"');
      return b.error;
    },
  },
  {
    client: "Anthropic Messages",
    path: "/v1/messages",
    body: { model: "anth/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] },
    upstream: "anthropic-messages",
    error: (frames) => {
      const last = frames.at(-1)!;
      expect(last).toStartWith("event: error\n");
      const b = JSON.parse(last.slice(last.indexOf("data: ") + "data: ".length));
      expect(b.error.type).toBe("overloaded_error"); // before the fix: api_error
      return b.error;
    },
  },
  {
    client: "Gemini",
    path: "/v1beta/models/gem/gemini-x:streamGenerateContent?alt=sse",
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    upstream: "gemini",
    error: (frames) => {
      const b = JSON.parse(frames.at(-1)!.slice("data: ".length));
      expect(b.error).toMatchObject({ code: 503, status: "UNAVAILABLE" }); // before the fix: 502 INTERNAL
      return b.error;
    },
  },
];

for (const s of streams) {
  test(`${s.client} client: a stream open past the grace period ends with the format's in-band error saying the gateway is stopping (not the upstream), outcome error / gateway_stopping in its log line and usage row`, async () => {
    const gw = await startGateway();
    try {
      const sse = simpleReply(s.upstream, { text: "one two three four five" }, true).sse!;
      // Headers and the first content event, then silence (the upstream holds the stream open).
      const firstEnd = /\r?\n\r?\n/.exec(sse.slice(sse.indexOf("one")))!;
      gw.fake.handle(() => ({ sse, stall_after_bytes: sse.indexOf("one") + firstEnd.index + firstEnd[0].length }));
      const res = await fetch(`${gw.url}${s.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(s.body) });
      expect(res.status).toBe(200);
      const requestId = res.headers.get("x-request-id")!;
      const reader = res.body!.getReader();
      let seen = "";
      while (!seen.includes("one")) seen += new TextDecoder().decode((await reader.read()).value);
      const stopped = gw.app.shutdown(300);
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        seen += new TextDecoder().decode(r.value);
      }
      expect(await stopped).toBe(true);
      const frames = seen.split(/\r?\n\r?\n/).filter((f) => f.trim().length > 0);
      const error = s.error(frames);
      expect(error.message).toContain("The gateway is shutting down");
      expect(error.message).not.toContain("upstream connection");
      expect(gw.fake.aborted).toBe(1); // the gateway cancelled its upstream call
      const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.requestId === requestId);
      expect(line).toMatchObject({ outcome: "error", status: 200, code: "gateway_stopping" }); // before: upstream_error, no code
      expect(usageRows(gw.dataDir).find((r) => r.request_id === requestId)).toMatchObject({ outcome: "error", status: 200 });
    } finally {
      await gw.stop(); // the shutdown above already ran: this stops the fake and removes the data directory
    }
  });
}

test("an open dashboard's event stream does not hold a stop for the grace period: it gets `event: shutdown` and ends at once", async () => {
  const gw = await startGateway();
  try {
    const res = await fetch(`${gw.url}/admin/api/events`, { headers: { authorization: `Bearer ${gw.app.adminToken}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = new TextDecoder().decode((await reader.read()).value);
    expect(seen).toStartWith("event: hello\n");
    // A 60 s grace period: before the fix the stop waited all of it (the stream counted as a request in
    // flight), and this test's 20 s timeout ran out first.
    const stopped = gw.app.shutdown(60_000);
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      seen += new TextDecoder().decode(r.value);
    }
    const frames = seen.split("\n\n").filter((f) => f.trim().length > 0);
    expect(frames.at(-1)).toMatch(/^event: shutdown\ndata: \{"at":\d+\}$/);
    await stopped; // within this test's timeout, not the 60 s grace period
  } finally {
    await gw.stop();
  }
}, 20_000);

/** The usage rows the stopped gateway left in its SQLite database. */
function usageRows(dataDir: string): Array<{ request_id: string; outcome: string; status: number }> {
  const db = new Database(join(dataDir, "switchyard.db"), { readonly: true });
  try {
    return db.query("SELECT request_id, outcome, status FROM usage").all() as never;
  } finally {
    db.close();
  }
}

const jsonReply = simpleReply("openai-chat", { text: "never seen" }, false).json;
/** The whole replies a grace period of 300 ms does not see the end of: no headers at all, or headers and part of the body. */
const waits: Array<{ client: string; path: string; body: object; upstream: string; reply: FakeReply; error: (b: any) => { message: string } }> = [
  {
    client: "Anthropic Messages",
    path: "/v1/messages",
    body: { model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] },
    upstream: "no response headers",
    reply: { hang_before_headers: true },
    error: (b) => {
      expect(b.type).toBe("error");
      expect(b.error.type).toBe("overloaded_error");
      return b.error;
    },
  },
  {
    client: "OpenAI Chat",
    path: "/v1/chat/completions",
    body: { model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] },
    upstream: "headers and half the JSON body",
    reply: { text: JSON.stringify(jsonReply), stall_after_bytes: Math.floor(JSON.stringify(jsonReply).length / 2) },
    error: (b) => {
      expect(b.error.code).toBe("gateway_stopping");
      return b.error;
    },
  },
  {
    client: "Gemini",
    path: "/v1beta/models/gem/gemini-x:generateContent",
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    upstream: "no response headers",
    reply: { hang_before_headers: true },
    error: (b) => {
      expect(b.error).toMatchObject({ code: 503, status: "UNAVAILABLE" });
      return b.error;
    },
  },
];

for (const w of waits) {
  test(`${w.client} client waiting for a whole reply (upstream sent ${w.upstream}) past the grace period: a 503 in its format, upstream call aborted, usage row and log line`, async () => {
    const gw = await startGateway();
    try {
      gw.fake.enqueue(w.reply);
      const pending = fetch(`${gw.url}${w.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(w.body) });
      while (gw.fake.requests.length === 0) await Bun.sleep(10); // the upstream has the request
      const stopped = gw.app.shutdown(300);
      const res = await pending; // before the change: "The socket connection was closed unexpectedly"
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toContain("application/json");
      const requestId = res.headers.get("x-request-id")!;
      const error = w.error(await res.json());
      expect(error.message).toContain("The gateway is shutting down");
      expect(await stopped).toBe(true);
      expect(gw.fake.aborted).toBe(1); // the gateway cancelled its upstream call
      const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.requestId === requestId);
      expect(line).toMatchObject({ outcome: "error", status: 503, code: "gateway_stopping" });
      expect(usageRows(gw.dataDir).find((r) => r.request_id === requestId)).toMatchObject({ outcome: "error", status: 503 });
      // The route trace says the gateway's stop cut the call: no upstream failure, no cooldown.
      const store = openSqliteStore({ path: join(gw.dataDir, "switchyard.db") });
      try {
        const trace = (await store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
        expect(trace.attempts).toHaveLength(1);
        expect(trace.attempts[0]).toMatchObject({ classification: "gateway_stopping" });
        expect(trace.attempts[0]!.effect).not.toContain("cooldown");
      } finally {
        store.close();
      }
    } finally {
      await gw.stop();
    }
  });
}
