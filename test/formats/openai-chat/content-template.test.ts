/**
 * The Chat decoder's content-delta shortcut (formats/openai-chat/content-template.ts): events read
 * through a learned template must decode to exactly what a full parse of each event says, and every
 * event that is not a plain repeat of the template (a finish, usage, another field, invalid JSON, a
 * different obfuscation layout) must still take the full path.
 */
import { describe, expect, test } from "bun:test";
import { ContentTemplate } from "../../../formats/openai-chat/content-template.ts";
import type { HubEvent } from "../../../formats/hub.ts";
import { decodeChat } from "../../support/openai-chat-helpers.ts";

const utf8 = new TextEncoder();
const sse = (...datas: string[]) => utf8.encode(datas.map((d) => `data: ${d}\n\n`).join(""));
/** A content chunk as OpenAI-compatible servers send it (compact JSON). */
const chunk = (content: string, extra = "") =>
  `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]${extra}}`;
/** OpenAI's own layout: `obfuscation` padding of random length after the choices. */
const obfuscated = (content: string, pad: string) =>
  `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":null}],"obfuscation":${JSON.stringify(pad)}}`;
const texts = (evs: HubEvent[]) => evs.flatMap((e) => (e.type === "block_delta" && e.delta.type === "text" ? [e.delta.text] : []));

describe("Chat content-delta template", () => {
  test("text with quotes, backslashes, escapes, control characters and non-ASCII comes out as a full parse reads it", () => {
    const contents = ["Hello", ' say "hi"', "a\\b", "tab\there", "line\nbreak", "\u0001", "π ≈ 3.14 🎉", '"},"finish_reason":"stop"}]}', "\\", '"', ""];
    const events = decodeChat([sse(...contents.map((c) => chunk(c)), chunk("!", "").replace('"finish_reason":null', '"finish_reason":"stop"'))]);
    expect(texts(events)).toEqual(contents.filter((c) => c.length > 0).concat("!"));
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "end_turn" });
  });

  test("escapes written differently from JSON.stringify (\\u0041, \\/) are read as their characters", () => {
    const raw = (lit: string) => `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${lit}},"finish_reason":null}]}`;
    expect(texts(decodeChat([sse(raw('"x"'), raw('"\\u0041\\/B"'), raw('"y"'))]))).toEqual(["x", "A/B", "y"]);
  });

  test("an event matching the template but for a raw control character in its text fails the stream, as a full parse does", () => {
    const bad = chunk("ok").replace('"ok"', '"a\tb"');
    const events = decodeChat([sse(chunk("one"), chunk("two"), bad, chunk("never"))]);
    expect(texts(events)).toEqual(["one", "two"]);
    expect(events.at(-1)).toMatchObject({ type: "error", error: { code: "upstream_invalid_event" } });
  });

  test("two string literals in the content hole are not taken as one text", () => {
    const twisted = chunk("ok").replace('"ok"', '"a","content":"b"');
    const events = decodeChat([sse(chunk("one"), chunk("two"), twisted)]);
    // A full parse reads the duplicate key's last value.
    expect(texts(events)).toEqual(["one", "two", "b"]);
  });

  test("usage, a finish, a tool call or a different field after the template go through the full path", () => {
    const usage = chunk("u", ',"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}');
    const tool = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"t","tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`;
    const finish = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"z"},"finish_reason":"length"}]}`;
    const events = decodeChat([sse(chunk("a"), chunk("b"), usage, chunk("c", ',"system_fingerprint":"fp"'), tool, finish, chunk("after the finish"))]);
    expect(texts(events)).toEqual(["a", "b", "u", "c", "t", "z"]);
    expect(events.filter((e) => e.type === "usage")).toEqual([{ type: "usage", usage: { inputTokens: 3, outputTokens: 4 } }]);
    expect(events.some((e) => e.type === "block_start" && e.block.type === "tool_call")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "finish", reason: "max_tokens" });
  });

  test("OpenAI's obfuscation padding of any length is skipped, and an invalid padding still fails", () => {
    const pads = ["x", "abcdefghij", "", "Q9"];
    expect(texts(decodeChat([sse(...pads.map((p, i) => obfuscated(`w${i}`, p)))]))).toEqual(["w0", "w1", "w2", "w3"]);
    const bad = obfuscated("b", "p").replace('"obfuscation":"p"', '"obfuscation":"p\tq"');
    const events = decodeChat([sse(obfuscated("a", "p"), obfuscated("a2", "pp"), bad)]);
    expect(texts(events)).toEqual(["a", "a2"]);
    expect(events.at(-1)).toMatchObject({ type: "error" });
  });

  test("an event named `error` that matches the template is an error, not text", () => {
    const bytes = utf8.encode(`data: ${chunk("a")}\n\ndata: ${chunk("b")}\n\nevent: error\ndata: ${chunk("c")}\n\n`);
    const events = decodeChat([bytes]);
    expect(texts(events)).toEqual(["a", "b"]);
    expect(events.at(-1)).toMatchObject({ type: "error" });
  });

  test("learning checks that the hole is the chosen choice's content", () => {
    // `"content":` first appears in another object: the hole found there is not delta.content.
    const data = `{"meta":{"content":"zz"},"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`;
    expect(ContentTemplate.learn(data, JSON.parse(data))).toBeUndefined();
    const ok = chunk("a");
    const t = ContentTemplate.learn(ok, JSON.parse(ok))!;
    expect(t.match(chunk("b"))).toBe("b");
    expect(t.match(chunk("b", ","))).toBeUndefined();
    expect(t.match(chunk("b").replace('"model":"m"', '"model":"n"'))).toBeUndefined();
  });
});
