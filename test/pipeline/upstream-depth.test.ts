/**
 * The nesting bound on the reply side (formats/json-depth.ts), through the translating and gathering
 * drivers (pipeline/re-translate.ts) for every pair of formats: a tool call's input or arguments
 * object nesting more than MAX_JSON_DEPTH levels that a hub decoder would serialise (Chat arguments
 * sent as an object, an Anthropic tool_use input sent whole in its start, Gemini `args`), and
 * tool-call arguments text that deep (JSON inside a string) that a client encoder would parse into an
 * object. What the client reads: the reply so far, then the format's one in-band error naming the
 * cause (a streaming client), or an early error and no body (a non-streaming one, before the commit
 * point); never an exception out of the driver (which the reply stream reported as the gateway's own
 * failure, after ~1 s of CPU in `JSON.stringify` at 60,000 levels), never a finished reply. A deep
 * value no decoder walks (a field of a Responses item) is relayed as it came.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { FormatError, type HubError, type WireFormat } from "../../formats/hub.ts";
import { MAX_JSON_DEPTH, upstreamNestedTooDeep } from "../../formats/json-depth.ts";
import { AccumulatedDriver, TranslatedStreamDriver, type ReplyDriver } from "../../pipeline/re-translate.ts";
import type { PassthroughTap } from "../../formats/codec.ts";

const FORMATS: WireFormat[] = ["openai-chat", "anthropic-messages", "openai-responses", "gemini"];
const familyOf = (f: WireFormat) => (f === "anthropic-messages" ? "anthropic" : f === "gemini" ? "gemini" : "openai");
const enc = new TextEncoder();
const options = () => ({ model: "m", includeUsage: true, newId: (p: string) => `${p}1`, now: () => 1_750_000_000_000 });

const nest = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
const DEEP = nest(60_000);

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const chatChunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/**
 * Per upstream format: `head` brings the text "The answer is", `deep(v)` is an event carrying the JSON
 * text `v` where its decoder reads a value (a call's object arguments or input; an item's field), and
 * `tail` finishes the reply.
 */
const streams: Record<WireFormat, { head: string; deep: (v: string) => string; tail: string }> = {
  "openai-chat": {
    head: chatChunk({ role: "assistant", content: "The answer is" }),
    deep: (v) => `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":{"a":${v}}}}]},"finish_reason":null}]}\n\n`,
    tail: chatChunk({}, "tool_calls") + "data: [DONE]\n\n",
  },
  "anthropic-messages": {
    head:
      ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], usage: { input_tokens: 1, output_tokens: 1 } } }) +
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The answer is" } }) +
      ev("content_block_stop", { type: "content_block_stop", index: 0 }),
    deep: (v) => `event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":${v}}}}\n\n`,
    tail:
      ev("content_block_stop", { type: "content_block_stop", index: 1 }) +
      ev("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 3 } }) +
      ev("message_stop", { type: "message_stop" }),
  },
  "openai-responses": {
    head:
      ev("response.created", { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } }) +
      ev("response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", content: [] } }) +
      ev("response.output_text.delta", { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "The answer is" }),
    deep: (v) =>
      `event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"The answer is","annotations":${v}}]}}\n\n`,
    tail: ev("response.completed", { type: "response.completed", response: { id: "resp_1", status: "completed", output: [], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } } }),
  },
  gemini: {
    head: `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "The answer is" }] }, index: 0 }] })}\n\n`,
    deep: (v) => `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":${v}}}}]},"index":0}]}\n\n`,
    tail: `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } })}\n\n`,
  },
};

/** Pushes `reads` through `driver` as the reply stream does: a thrown FormatError ends it with that failure. */
function run(driver: ReplyDriver, reads: string[]): string {
  const out: Uint8Array[] = [];
  try {
    for (const r of reads) out.push(driver.push(enc.encode(r)));
    out.push(driver.end());
  } catch (e) {
    if (!(e instanceof FormatError)) throw e;
    out.push(driver.end(e.error));
  }
  return Buffer.concat(out).toString("utf8");
}

/** The in-band error a client of `format` reads at the end of `text`, and whether a finish came before it. */
function ending(format: WireFormat, text: string): { message: string | undefined; finished: boolean } {
  const events = text.split("\n\n").filter((e) => e.length > 0);
  const datas = events.map((e) => e.split("\n").find((l) => l.startsWith("data: "))?.slice(6) ?? "").filter((d) => d !== "[DONE]");
  const parsed = datas.map((d) => JSON.parse(d));
  const last = parsed.at(-1);
  const message: string | undefined = format === "openai-responses" ? last?.response?.error?.message : last?.error?.message;
  const finished = parsed.some((p) =>
    format === "openai-chat" ? p.choices?.some((c: any) => c.finish_reason) : format === "anthropic-messages" ? p.type === "message_stop" : format === "gemini" ? p.candidates?.some((c: any) => c.finishReason) : p.type === "response.completed",
  );
  return { message, finished };
}

const textSoFar = (format: WireFormat, text: string) => (format === "gemini" ? text.includes('"text":"The answer is"') : text.includes("The answer is"));

const tooDeep: HubError = upstreamNestedTooDeep("tool-call arguments");

describe("a tool call's arguments object nested 60,000 levels deep in an upstream stream event, through a hub decoder", () => {
  for (const up of FORMATS.filter((f) => f !== "openai-responses")) {
    const s = streams[up];
    for (const client of FORMATS.filter((c) => c !== up)) {
      test(`${up} → ${client} stream: the text so far, then one in-band error naming the cause`, () => {
        const driver = new TranslatedStreamDriver(codecFor(up), codecFor(client), { family: familyOf(up) }, options());
        const text = run(driver, [s.head, s.deep(DEEP), s.tail]);
        expect(textSoFar(client, text)).toBe(true);
        expect(ending(client, text)).toEqual({ message: tooDeep.message, finished: false });
        expect(driver.lateError).toEqual(tooDeep);
      });
    }
    test(`${up} → ${up} gathered for a non-streaming client: an early error, no body`, () => {
      const driver = new AccumulatedDriver(codecFor(up), codecFor(up), { family: familyOf(up) }, options());
      expect(run(driver, [s.head + s.deep(DEEP) + s.tail])).toBe("");
      expect(driver.earlyError).toEqual(tooDeep);
    });
    test(`${up}: arguments nesting ${MAX_JSON_DEPTH} levels are read as before`, () => {
      // The arguments object is the first level; `deep` puts the nested arrays under its member `a`.
      const driver = new AccumulatedDriver(codecFor(up), codecFor("openai-chat"), { family: familyOf(up) }, options());
      const out = JSON.parse(run(driver, [s.head + s.deep(nest(MAX_JSON_DEPTH - 1)) + s.tail]));
      expect(driver.earlyError).toBeUndefined();
      expect(out.choices[0].message.content).toBe("The answer is");
      expect(out.choices[0].message.tool_calls[0].function.arguments).toBe(`{"a":${nest(MAX_JSON_DEPTH - 1)}}`);
    });
  }
  test("openai-responses: a deep field no decoder walks (an output text's annotations) is not refused: the reply finishes", () => {
    const s = streams["openai-responses"];
    for (const client of FORMATS.filter((c) => c !== "openai-responses")) {
      const driver = new TranslatedStreamDriver(codecFor("openai-responses"), codecFor(client), { family: "openai" }, options());
      const text = run(driver, [s.head, s.deep(DEEP), s.tail]);
      expect(textSoFar(client, text)).toBe(true);
      expect(ending(client, text)).toEqual({ message: undefined, finished: true });
    }
  });
});

describe("tool-call arguments nested 60,000 levels deep inside a string (Chat upstream)", () => {
  const head = chatChunk({ role: "assistant", content: "The answer is" });
  const call = (args: string) => chatChunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: args } }] });
  const tail = chatChunk({}, "tool_calls") + "data: [DONE]\n\n";

  test("Gemini client, streamed: the text so far, then Gemini's in-band error naming the cause", () => {
    const driver = new TranslatedStreamDriver(codecFor("openai-chat"), codecFor("gemini"), { family: "openai" }, options());
    const text = run(driver, [head, call(`{"a":${DEEP}}`), tail]);
    expect(textSoFar("gemini", text)).toBe(true);
    expect(ending("gemini", text)).toEqual({ message: tooDeep.message, finished: false });
  });
  for (const client of ["gemini", "anthropic-messages"] as WireFormat[]) {
    test(`${client} client, not streamed: an early error, no body`, () => {
      const driver = new AccumulatedDriver(codecFor("openai-chat"), codecFor(client), { family: "openai" }, options());
      driver.push(enc.encode(head + call(`{"a":${DEEP}}`) + tail));
      // The gathered reply's encode throws the FormatError the commit point makes a failed attempt of.
      let thrown: unknown;
      try {
        driver.end();
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(FormatError);
      expect((thrown as FormatError).error).toEqual(tooDeep);
    });
  }
  test(`arguments nesting ${MAX_JSON_DEPTH} levels reach a Gemini client as an object`, () => {
    const args = `{"a":${nest(MAX_JSON_DEPTH - 1)}}`;
    const driver = new AccumulatedDriver(codecFor("openai-chat"), codecFor("gemini"), { family: "openai" }, options());
    const out = JSON.parse(run(driver, [head + call(args) + tail]));
    expect(JSON.stringify(out.candidates[0].content.parts[1].functionCall.args)).toBe(args);
  });
});

/**
 * One upstream stream event longer than 1 MiB that nests more than MAX_JSON_DEPTH levels (formats/sse.ts,
 * formats/json-depth.ts `checkEventDepth`; README "Not done yet" until this was fixed: a whole reply that
 * long was refused before its parse, one event was parsed whatever its depth, ~0.2 µs a level). It is
 * refused before anything parses it, wherever its value sits (a field no decoder reads included), by the
 * hub decoders and by the native taps that would parse it: the text so far, then the format's in-band
 * error naming the event. The same bytes side by side are read as before.
 */
describe("one stream event of 1.2 MB nesting 600,000 levels", () => {
  const HUGE_DEEP = nest(600_000);
  const eventTooDeep = upstreamNestedTooDeep("a stream event");

  /** Pushes `reads` through a native tap as the reply stream does: a thrown FormatError ends it with that failure. */
  function runTap(tap: PassthroughTap, reads: string[]): string {
    const out: Uint8Array[] = [];
    try {
      for (const r of reads) out.push(tap.push(enc.encode(r)));
      out.push(tap.end());
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      out.push(tap.end(e.error));
    }
    return Buffer.concat(out).toString("utf8");
  }

  for (const up of FORMATS) {
    const s = streams[up];
    const client: WireFormat = up === "openai-chat" ? "anthropic-messages" : "openai-chat";
    test(`${up} → ${client} stream (hub decoder): the text so far, then the in-band error naming the event`, () => {
      const driver = new TranslatedStreamDriver(codecFor(up), codecFor(client), { family: familyOf(up) }, options());
      const text = run(driver, [s.head, s.deep(HUGE_DEEP), s.tail]);
      expect(textSoFar(client, text)).toBe(true);
      expect(ending(client, text)).toEqual({ message: eventTooDeep.message, finished: false });
      expect(driver.lateError).toEqual(eventTooDeep);
    });
    test(`${up} native passthrough tap: the text so far, then the in-band error naming the event`, () => {
      const text = runTap(codecFor(up).createTap({ family: familyOf(up), includeUsage: false }), [s.head, s.deep(HUGE_DEEP), s.tail]);
      expect(textSoFar(up, text)).toBe(true);
      expect(text.includes("[[[[")).toBe(false);
      expect(ending(up, text)).toEqual({ message: eventTooDeep.message, finished: false });
    });
  }

  /**
   * Events the Chat and Messages taps forward unread (README "Not done yet" until this was fixed: they
   * went out unchecked): a Chat chunk after the first content with none of the patterns the tap parses
   * for (the value in a member it does not read), whole in one read or straddling reads (read as text);
   * a Messages block's delta (skipped by its name). Refused as the other taps refuse what they read.
   */
  const unread: Array<[string, WireFormat, string]> = [
    ["a Chat chunk forwarded unread", "openai-chat", `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"!","x":${HUGE_DEEP}},"finish_reason":null}]}\n\n`],
    ["a Messages block delta skipped by its name", "anthropic-messages", `event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"!","x":${HUGE_DEEP}}}\n\n`],
  ];
  for (const [what, up, deep] of unread) {
    const s = streams[up];
    const head = up === "anthropic-messages" ? s.head + ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }) : s.head;
    for (const straddling of [false, true]) {
      test(`${what}${straddling ? ", straddling two reads" : ""}: refused, the text so far then the in-band error`, () => {
        const reads = straddling ? [head, deep.slice(0, 1000), deep.slice(1000), s.tail] : [head, deep, s.tail];
        const text = runTap(codecFor(up).createTap({ family: familyOf(up), includeUsage: false }), reads);
        expect(textSoFar(up, text)).toBe(true);
        expect(text.includes("[[[[")).toBe(false);
        expect(ending(up, text)).toEqual({ message: eventTooDeep.message, finished: false });
      });
    }
  }

  test("a Chat event that deep in CRLF framing (read by eventsource-parser, not the splitter) is refused the same way", () => {
    const s = streams["openai-chat"];
    const driver = new TranslatedStreamDriver(codecFor("openai-chat"), codecFor("anthropic-messages"), { family: "openai" }, options());
    const crlf = (t: string) => t.replaceAll("\n", "\r\n");
    const text = run(driver, [crlf(s.head), crlf(s.deep(HUGE_DEEP)), crlf(s.tail)]);
    expect(ending("anthropic-messages", text)).toEqual({ message: eventTooDeep.message, finished: false });
  });

  test("the same 1.2 MB side by side (300,000 arrays in a field no decoder walks) is read as before: the reply finishes", () => {
    const s = streams["openai-responses"];
    const wide = "[" + "[],".repeat(300_000) + "[]]";
    const driver = new TranslatedStreamDriver(codecFor("openai-responses"), codecFor("openai-chat"), { family: "openai" }, options());
    const text = run(driver, [s.head, s.deep(wide), s.tail]);
    expect(ending("openai-chat", text)).toEqual({ message: undefined, finished: true });
  });
});
