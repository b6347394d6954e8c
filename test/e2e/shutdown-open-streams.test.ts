/**
 * SPEC D-3 with SPEC 6.4: a stream still open when a shutdown's grace period is over ends with the
 * client format's in-band error (the upstream call aborted), never a cut connection that a client could
 * take for a finished reply, and its usage row says the upstream side failed.
 */
import { expect, test } from "bun:test";
import { startGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";

test("Chat client: a stream open past the grace period gets the error frame then [DONE]", async () => {
  const gw = await startGateway();
  try {
    const sse = simpleReply("openai-chat", { text: "one two three four five" }, true).sse!;
    // Headers and the first content event, then silence (the upstream holds the stream open).
    gw.fake.handle(() => ({ sse, stall_after_bytes: sse.indexOf("\n\n", sse.indexOf("one")) + 2 }));
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("one");
    const stopped = gw.app.shutdown(300);
    let rest = "";
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      rest += new TextDecoder().decode(r.value);
    }
    await stopped;
    const frames = rest.split("\n\n").filter((f) => f.trim().length > 0);
    expect(frames.at(-1)).toBe("data: [DONE]");
    const error = JSON.parse(frames.at(-2)!.slice("data: ".length));
    expect(error.error.message).toContain("shutting down");
    expect(rest).not.toContain('"finish_reason":"stop"');
    const requestLine = gw.logs.map((l) => JSON.parse(l)).find((l) => l.outcome !== undefined);
    expect(requestLine?.outcome).toBe("upstream_error");
  } finally {
    await gw.stop(); // the shutdown above already ran: this stops the fake and removes the data directory
  }
});

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
