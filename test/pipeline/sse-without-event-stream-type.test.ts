/**
 * Found by a provider tryout (session 45; fixed that session): a streamed reply whose Content-Type is not
 * `text/event-stream` (`text/plain`, `application/octet-stream`: what some OpenAI-compatible servers
 * and corporate proxies send) is refused although its body is well-formed SSE. pipeline/commit.ts
 * `replyDriverFor` decides "is this SSE" from the Content-Type alone, so the body is read as one JSON
 * document: the client gets 502 "The upstream reply was not valid JSON." after 4 attempts on the same
 * account (3 same-account retries), and the account cools down. The official OpenAI and Anthropic SDKs
 * read the same reply straight from that server without complaint (they parse the stream whatever its
 * Content-Type), so putting switchyard in front turns a working server into a broken one.
 *
 * Expected: a request that asked for a stream, answered 200 with a body that is SSE, is read as SSE —
 * the client gets the text, and the upstream is called once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { mayBeUnlabelledSse, startsLikeSse } from "../../pipeline/sse-sniff.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["oai", "openai"], ["anth", "anthropic"]]));
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

async function chatStream(model: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: res.status, text: await res.text() };
}

/** The `delta.content` pieces of a Chat stream, joined. */
function chatText(sse: string): string {
  let out = "";
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const j = JSON.parse(line.slice(6));
    out += j.choices?.[0]?.delta?.content ?? "";
  }
  return out;
}

describe("a streamed reply that is SSE but not labelled text/event-stream", () => {
  for (const type of ["text/plain; charset=utf-8", "application/octet-stream"]) {
    test(`Chat client → openai provider, Content-Type ${type}: the text arrives, one upstream call`, async () => {
      gw.fake.reset();
      const reply = simpleReply("openai-chat", { text: "Hello from a plain server.", model: "m" }, true);
      gw.fake.handle(() => ({ ...reply, headers: { "content-type": type } }));
      const r = await chatStream(`oai/m-${type.split(";")[0]!.replace("/", "-")}`);
      expect([r.status, r.text.slice(0, 200)]).toEqual([200, expect.stringContaining("data: ")]);
      expect(chatText(r.text)).toBe("Hello from a plain server.");
      expect(gw.fake.requests.length).toBe(1);
    });
  }

  test("Chat client → anthropic provider (translated), Content-Type text/plain: the text arrives, one upstream call", async () => {
    gw.fake.reset();
    const reply = simpleReply("anthropic-messages", { text: "Hello from a plain proxy.", model: "m" }, true);
    gw.fake.handle(() => ({ ...reply, headers: { "content-type": "text/plain" } }));
    const r = await chatStream("anth/m");
    expect([r.status, r.text.slice(0, 200)]).toEqual([200, expect.stringContaining("data: ")]);
    expect(chatText(r.text)).toBe("Hello from a plain proxy.");
    expect(gw.fake.requests.length).toBe(1);
  });

  test("a BOM and blank lines before the first field, the body split in one-byte reads: still read as SSE", async () => {
    gw.fake.reset();
    const reply = simpleReply("openai-chat", { text: "After a BOM.", model: "m" }, true);
    const sse = "\ufeff\n\r\n" + reply.sse!;
    gw.fake.handle(() => ({ sse, headers: { "content-type": "application/octet-stream" }, split_at: [1, 2, 3, 4, 5, 6] }));
    const r = await chatStream("oai/m-bom");
    expect(r.status).toBe(200);
    expect(chatText(r.text)).toBe("After a BOM.");
    expect(gw.fake.requests.length).toBe(1);
  });

  test("a JSON body labelled text/plain answering a streamed request keeps the whole-body lane (replayed as a stream)", async () => {
    gw.fake.reset();
    const reply = simpleReply("openai-chat", { text: "Whole JSON.", model: "m" }, false);
    gw.fake.handle(() => ({ text: JSON.stringify(reply.json), headers: { "content-type": "text/plain" } }));
    const r = await chatStream("oai/m-json");
    expect(r.status).toBe(200);
    expect(chatText(r.text)).toBe("Whole JSON.");
    expect(gw.fake.requests.length).toBe(1);
  });
});

describe("telling an unlabelled stream (pipeline/sse-sniff.ts)", () => {
  test("startsLikeSse: fields, comments, BOM and blank lines; undefined until a field can be told", () => {
    expect(["data: x", ": ping", "event: a", "id: 1", "retry: 5", "\ufeff\r\ndata: {}", "data\n"].map(startsLikeSse)).toEqual([true, true, true, true, true, true, true]);
    expect(['{"id":1}', "<html>", "hello", "dat x"].map(startsLikeSse)).toEqual([false, false, false, false]);
    expect(["", "\ufeff", "\n\n", "da", "eve"].map(startsLikeSse)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  test("mayBeUnlabelledSse: no Content-Type, text/plain, octet-stream, for a streamed request only", () => {
    const reply = (type?: string) => ({ status: 200, headers: new Headers(type === undefined ? {} : { "content-type": type }), body: new ReadableStream<Uint8Array>() });
    expect([undefined, "text/plain; charset=utf-8", "application/octet-stream", "text/event-stream", "application/json", "text/html"].map((t) => mayBeUnlabelledSse(reply(t), true))).toEqual([true, true, true, false, false, false]);
    expect(mayBeUnlabelledSse(reply(undefined), false)).toBe(false);
  });
});
