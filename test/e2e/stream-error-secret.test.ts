/**
 * An in-band error event after content is scrubbed (SPEC 2.4): a streamed reply that already sent some
 * text and then gets the upstream's error event (Anthropic `event: error`, a Chat `{"error": …}` chunk,
 * a Responses `error` event, a Gemini error object) whose message echoes the account's key reaches the
 * client with `[redacted]` in its place, on a native lane (the tap's bytes or events) and a translated
 * one (the hub's error, written by the client's encoder), over HTTP and Codex's Responses WebSocket.
 * Everything else the client gets is what it would get had the upstream itself written `[redacted]`:
 * the text before the error, the error event in its place and shape, the stream's end.
 *
 * The key has no credential shape (no `sk-` prefix): only the exact match of the instance's own secret
 * catches it, so these fail unless the instance's secrets reach the reply drivers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";
import type { FakeFormat } from "../support/fake-upstream.ts";
import { connect } from "../support/responses-socket.ts";
import { ACCOUNT_KEY, anthropicBrokenOff, piecesIn } from "../support/echoed-key.ts";

/** The upstream's words: `who` is the account key (the leak), or `[redacted]` (what the client must get instead). */
const said = (who: string) => `Overloaded right now; request made with key ${who}, try again`;

/** An upstream stream in `format`: two text deltas, then an in-band error event whose message is {@link said}(`who`). */
function lateError(format: FakeFormat, who: string): string {
  const sse = (event: string | undefined, data: unknown) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
  if (format === "anthropic-messages") return anthropicBrokenOff(["partial ", "answer"], JSON.stringify({ type: "error", error: { type: "overloaded_error", message: said(who) } }));
  if (format === "openai-chat") {
    const chunk = (delta: unknown) => sse(undefined, { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1750000000, model: "gpt-x", choices: [{ index: 0, delta, finish_reason: null }] });
    return chunk({ role: "assistant", content: "" }) + chunk({ content: "partial " }) + chunk({ content: "answer" }) + sse(undefined, { error: { message: said(who), type: "server_error", param: null, code: "overloaded" } });
  }
  if (format === "openai-responses") {
    let seq = 0;
    const ev = (data: Record<string, unknown>) => sse(data.type as string, { type: data.type, sequence_number: seq++, ...data });
    const response = { id: "resp_1", object: "response", created_at: 1750000000, status: "in_progress", model: "gpt-x", output: [], usage: null, error: null, incomplete_details: null };
    return (
      ev({ type: "response.created", response }) +
      ev({ type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] } }) +
      ev({ type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }) +
      ev({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "partial ", logprobs: [] }) +
      ev({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "answer", logprobs: [] }) +
      ev({ type: "error", code: "server_error", message: said(who), param: null })
    );
  }
  const chunk = (text: string) => sse(undefined, { candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }], modelVersion: "gemini-x" });
  return chunk("partial ") + chunk("answer") + sse(undefined, { error: { code: 503, message: said(who), status: "UNAVAILABLE" } });
}

/** {@link lateError} of Anthropic whose error event's data is not JSON: the upstream's words as they are. */
const plainLateError = (who: string) => lateError("anthropic-messages", who).replace(/event: error\ndata: .*\n\n$/, `event: error\ndata: upstream failure: ${said(who)}\n\n`);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `
${providersAtFake(["oa", "openai"], ["an", "anthropic"], ["rs", "openai-responses"], ["gm", "gemini"])}
accounts:
  - { id: oa-1, provider: oa, api_key: env:ACCOUNT_KEY }
  - { id: an-1, provider: an, api_key: env:ACCOUNT_KEY }
  - { id: rs-1, provider: rs, api_key: env:ACCOUNT_KEY }
  - { id: gm-1, provider: gm, api_key: env:ACCOUNT_KEY }
settings:
  max_attempts: 1
`,
    { env: { ACCOUNT_KEY } },
  );
  // A request whose text holds `LEAK` gets the stream with the key, any other the same stream with
  // `[redacted]`; with `CUT` too, in three reads: up to the error event, up to the key's middle, the rest.
  gw.fake.handle((req) => {
    const text = JSON.stringify(req.body ?? {});
    const who = text.includes("LEAK") ? ACCOUNT_KEY : "[redacted]";
    const sse = text.includes("PLAIN") ? plainLateError(who) : lateError(req.format!, who);
    if (!text.includes("CUT")) return { sse };
    const error = sse.lastIndexOf(said(who)) - 40;
    return { sse, split_at: [error, sse.lastIndexOf(who) + 5], delay_ms: 40 };
  });
});
afterAll(async () => {
  await gw?.stop();
});

/** What differs between two replies of a translated lane: the ids and times the gateway mints. */
const minted = (text: string) =>
  text
    .replace(/(chatcmpl|resp|msg)[-_][A-Za-z0-9]+/g, "$1_x")
    .replace(/"(created|created_at)":\d+/g, '"$1":0');

/**
 * POSTs `body(word)` to `path` with `word` = LEAK (the upstream echoes the key) and = SAME (it says
 * [redacted]); both bodies. With `cut`, the upstream sends the error event in later reads, the key cut
 * in two: the reply is streamed on after the commit point, and the tap holds the torn event.
 */
async function both(path: string, body: (word: string) => unknown, cut = false): Promise<{ leak: string; same: string }> {
  const send = async (word: string) => {
    const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body(word)) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    return await res.text();
  };
  const tail = cut ? " CUT" : "";
  return { leak: await send(`LEAK${tail}`), same: await send(`SAME${tail}`) };
}

const messages = (model: string, more = "") => (word: string) => ({ model, max_tokens: 50, stream: true, messages: [{ role: "user", content: `${word} ${more}` }] });
const chat = (model: string) => (word: string) => ({ model, stream: true, messages: [{ role: "user", content: word }] });

describe("a streamed reply broken off by an error event echoing the account key: the client gets [redacted]", () => {
  for (const cut of [false, true]) {
    const when = cut ? " (the error in later reads, the key cut in two)" : "";
    test(`Anthropic client, Anthropic upstream (native passthrough): the upstream's bytes, the key [redacted]${when}`, async () => {
      const { leak, same } = await both("/v1/messages", messages("an/claude-x"), cut);
      expect(piecesIn(leak)).toEqual([]);
      expect(leak).toBe(lateError("anthropic-messages", "[redacted]"));
      expect(leak).toBe(same);
      expect(leak).toContain('"text":"partial "');
      expect(leak).toEndWith(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: said("[redacted]") } })}\n\n`);
    });

    test(`Anthropic client, Anthropic upstream (native passthrough), an error event that is not JSON: its text [redacted]${when}`, async () => {
      const { leak, same } = await both("/v1/messages", messages("an/claude-x", "PLAIN"), cut);
      expect(piecesIn(leak)).toEqual([]);
      expect(leak).toBe(same);
      expect(leak).toBe(plainLateError("[redacted]"));
      expect(leak).toEndWith(`event: error\ndata: upstream failure: ${said("[redacted]")}\n\n`);
    });

    test(`OpenAI Chat client, OpenAI upstream (native passthrough): the error chunk [redacted], then [DONE]${when}`, async () => {
      const { leak, same } = await both("/v1/chat/completions", chat("oa/gpt-x"), cut);
      expect(piecesIn(leak)).toEqual([]);
      expect(leak).toBe(same);
      expect(leak).toBe(lateError("openai-chat", "[redacted]") + "data: [DONE]\n\n");
    });

    test(`OpenAI Chat client, Anthropic upstream (translated): the text, the error chunk [redacted], the same end${when}`, async () => {
      const { leak, same } = await both("/v1/chat/completions", chat("an/claude-x"), cut);
      expect(piecesIn(leak)).toEqual([]);
      expect(minted(leak)).toBe(minted(same));
      expect(leak).toContain('"content":"partial "');
      const datas = leak.split("\n\n").filter((e) => e.startsWith("data: ")).map((e) => e.slice(6));
      const error = datas.map((d) => (d === "[DONE]" ? d : JSON.parse(d))).find((d) => d.error);
      expect(error.error.message).toBe(said("[redacted]"));
    });

    test(`OpenAI Chat client, Gemini upstream (translated): the Gemini error object's message [redacted]${when}`, async () => {
      const { leak, same } = await both("/v1/chat/completions", chat("gm/gemini-x"), cut);
      expect(piecesIn(leak)).toEqual([]);
      expect(minted(leak)).toBe(minted(same));
      expect(leak).toContain('"content":"partial "');
      expect(leak).toContain(JSON.stringify(said("[redacted]")));
    });

    test(`Gemini client, Gemini upstream (native passthrough): the error object [redacted]${when}`, async () => {
      const { leak, same } = await both("/v1beta/models/gm/gemini-x:streamGenerateContent?alt=sse", (word) => ({ contents: [{ role: "user", parts: [{ text: word }] }] }), cut);
      expect(piecesIn(leak)).toEqual([]);
      expect(leak).toBe(same);
      expect(leak).toBe(lateError("gemini", "[redacted]"));
    });

    test(`Responses client, Responses upstream (native passthrough): the error event and the response.failed after it [redacted]${when}`, async () => {
      const { leak, same } = await both("/v1/responses", (word) => ({ model: "rs/gpt-x", stream: true, input: word }), cut);
      expect(piecesIn(leak)).toEqual([]);
      expect(leak).toBe(same);
      expect(leak).toStartWith(lateError("openai-responses", "[redacted]"));
      expect(leak).toContain("event: response.failed\n");
    });
  }
});

describe("over Codex's Responses WebSocket: the frames carry [redacted]", () => {
  /** The frames of one `response.create` whose input is `word`, through `model`, as received (text). */
  async function frames(model: string, word: string): Promise<string[]> {
    const c = await connect(gw.url);
    c.send({ type: "response.create", model, input: [{ type: "message", role: "user", content: [{ type: "input_text", text: word }] }], store: false });
    await c.untilTerminal();
    c.ws.close();
    return c.raw;
  }

  for (const [lane, model, word] of [
    ["native (Responses upstream: the event tap)", "rs/gpt-x", ""],
    ["translated (Anthropic upstream: the event encoder)", "an/claude-x", ""],
    ["native, the error in later reads", "rs/gpt-x", " CUT"],
    ["translated, the error in later reads", "an/claude-x", " CUT"],
  ] as const) {
    test(lane, async () => {
      const leak = await frames(model, `LEAK${word}`);
      const same = await frames(model, `SAME${word}`);
      expect(piecesIn(leak.join("\n"))).toEqual([]);
      expect(leak.map(minted)).toEqual(same.map(minted));
      expect(leak.some((f) => f.includes('"partial "'))).toBe(true);
      expect(JSON.parse(leak.at(-1)!).type).toBe("response.failed");
      expect(leak.at(-1)).toContain(said("[redacted]"));
    });
  }
});
