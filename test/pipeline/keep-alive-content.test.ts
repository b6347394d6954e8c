/**
 * What a committed stream's reads count as content for the keep-alive bound (pipeline/keep-alive-bound.ts:
 * a read that made the driver's `contentEvents` grow), read by read, on the native passthrough taps
 * (TapState.contentEvents; README "Not done yet" until this was fixed: they counted bytes, so an
 * upstream repeating empty events kept its stream alive), which look only when asked (TapState.looking) and on the decoded lanes for what the hub
 * leaves out (StreamDecoder.progress: a server tool's events are the upstream at work, not silence).
 * The sweep itself is tested through the gateway (test/e2e/pings-after-commit.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { PassthroughTap } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { passthroughDriver, TranslatedStreamDriver, type ReplyDriver } from "../../pipeline/re-translate.ts";

const enc = new TextEncoder();
const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const crlf = (s: string) => s.replaceAll("\n", "\r\n");

/**
 * Pushes each read through `driver` and says, per read, whether it counted as content; a passthrough's
 * tap is asked to look at every read (as the keep-alive bound asks it after each sweep that saw content).
 */
function counted(driver: ReplyDriver<unknown>, reads: string[]): boolean[] {
  const tapped = driver as { tapState?: { looking: boolean } };
  return reads.map((r) => {
    if (tapped.tapState) tapped.tapState.looking = true;
    const before = driver.contentEvents;
    driver.push(enc.encode(r));
    return driver.contentEvents !== before;
  });
}

const tap = (format: WireFormat, includeUsage = false): ReplyDriver => passthroughDriver(codecFor(format).createTap({ family: "openai", includeUsage }) as PassthroughTap);

/** Reads of a Messages stream and whether each is content. */
const PING = 'event: ping\ndata: {"type": "ping"}\n\n';
const delta = (d: Record<string, unknown>, index = 0) => ev("content_block_delta", { type: "content_block_delta", index, delta: d });
const MESSAGES: Array<[string, boolean]> = [
  [ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], usage: { input_tokens: 1, output_tokens: 1 } } }), false],
  [ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }), true],
  [PING, false],
  [delta({ type: "thinking_delta", thinking: "" }), false],
  [PING + delta({ type: "thinking_delta", thinking: "" }) + PING, false],
  [delta({ type: "thinking_delta", thinking: "Hmm." }), true],
  [PING + delta({ type: "thinking_delta", thinking: "" }) + delta({ type: "thinking_delta", thinking: 'say "' }), true],
  [delta({ type: "signature_delta", signature: "c2ln" }), true],
  [ev("content_block_stop", { type: "content_block_stop", index: 0 }), false],
  [ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }), true],
  [delta({ type: "text_delta", text: "" }, 1), false],
  [delta({ type: "text_delta", text: '"' }, 1), true],
  [ev("content_block_stop", { type: "content_block_stop", index: 1 }), false],
  [ev("content_block_start", { type: "content_block_start", index: 2, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } }), true],
  [delta({ type: "input_json_delta", partial_json: "" }, 2), false],
  [delta({ type: "input_json_delta", partial_json: '{"query":"x"}' }, 2), true],
  [ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }), true],
];

/** Reads of a Chat stream (the first chunk brings content) and whether each is content. */
const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const call = (fn: Record<string, unknown>, id?: string) => chunk({ tool_calls: [{ index: 0, ...(id ? { id, type: "function" } : {}), function: fn }] });
const CHAT: Array<[string, boolean]> = [
  [chunk({ role: "assistant", content: "Hi" }), true],
  [chunk({}), false],
  [chunk({ content: "" }), false],
  [chunk({ content: null }) + chunk({ content: "" }) + chunk({}), false],
  [`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: null })}\n\n`, false],
  [chunk({ content: "" }) + chunk({ content: "!" }), true],
  [chunk({ content: null, reasoning_content: "think" }), true],
  [chunk({ reasoning: "think" }), true],
  [chunk({ refusal: "no" }), true],
  [chunk({ content: [{ type: "text", text: "x" }] }), true],
  [chunk({ audio: { id: "a", data: "AAAA" } }), true],
  [call({ name: "f", arguments: "" }, "call_1"), true],
  [call({ arguments: "" }), false],
  [call({ arguments: '{"a"' }), true],
  [chunk({}, "tool_calls"), true],
];

/** Reads of a Responses stream and whether each is content. */
let seq = 0;
const rev = (type: string, data: Record<string, unknown> = {}) => ev(type, { type, sequence_number: seq++, ...data });
const RESP = { id: "resp_1", object: "response", status: "in_progress", model: "m", output: [] };
const RESPONSES: Array<[string, boolean]> = [
  [rev("response.created", { response: RESP }) + rev("response.in_progress", { response: RESP }), false],
  [rev("response.output_item.added", { output_index: 0, item: { type: "web_search_call", id: "ws_1", status: "in_progress" } }), true],
  [rev("keepalive"), false],
  [rev("response.web_search_call.searching", { output_index: 0, item_id: "ws_1" }), true],
  [rev("response.in_progress", { response: RESP }) + rev("keepalive"), false],
  [rev("response.output_item.done", { output_index: 0, item: { type: "web_search_call", id: "ws_1", status: "completed" } }), true],
  [rev("response.output_item.added", { output_index: 1, item: { type: "message", id: "msg_1", role: "assistant", content: [] } }), true],
  [rev("response.content_part.added", { item_id: "msg_1", output_index: 1, content_index: 0, part: { type: "output_text", text: "" } }), false],
  [rev("response.output_text.delta", { item_id: "msg_1", output_index: 1, content_index: 0, delta: "" }), false],
  [rev("keepalive") + rev("response.output_text.delta", { item_id: "msg_1", output_index: 1, content_index: 0, delta: "Hi" }), true],
  [rev("response.completed", { response: { ...RESP, status: "completed", usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } } }), true],
];

/** Reads of a Gemini stream and whether each is content. */
const gem = (parts: unknown[] | undefined, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ candidates: [{ content: { role: "model", ...(parts ? { parts } : {}) }, index: 0, ...extra }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } })}\n\n`;
const GEMINI: Array<[string, boolean]> = [
  [gem([{ text: "Hi" }]), true],
  [gem([{ text: "" }]), false],
  [gem(undefined), false],
  ['data: {"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "index": 0}]}\n\n', false],
  ['data: {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}, "index": 0}]}\n\n', true],
  [gem([{ executableCode: { language: "PYTHON", code: "print(1)" } }]), true],
  [gem([{ functionCall: { name: "f", args: {} } }]), true],
  // a streamed call's arguments (Vertex streamFunctionCallArguments): its continuation chunks name no
  // call, yet bring its arguments (the tap counts any functionCall part)
  [gem([{ functionCall: { name: "write", partialArgs: [{ jsonPath: "$.text", stringValue: "a" }], willContinue: true } }]), true],
  [gem([{ functionCall: { partialArgs: [{ jsonPath: "$.text", stringValue: "long " }], willContinue: true } }]), true],
  [gem([{ functionCall: {} }]), true],
  [gem([{ text: "" }], { finishReason: "STOP" }), true],
];

describe("native passthrough taps: a read counts as content when it brought an event with content, not for pings or empty events", () => {
  const cases: Array<[WireFormat, Array<[string, boolean]>]> = [
    ["anthropic-messages", MESSAGES],
    ["openai-chat", CHAT],
    ["openai-responses", RESPONSES],
    ["gemini", GEMINI],
  ];
  for (const [format, reads] of cases) {
    test(`${format}, LF framing`, () => {
      expect(counted(tap(format), reads.map((r) => r[0]))).toEqual(reads.map((r) => r[1]));
    });
    test(`${format}, CRLF framing`, () => {
      expect(counted(tap(format), reads.map((r) => crlf(r[0])))).toEqual(reads.map((r) => r[1]));
    });
  }

  test("anthropic-messages: a delta in another member order than Anthropic's counts by what it holds (it counted as content, empty or not)", () => {
    const start = MESSAGES[0]![0] + MESSAGES[1]![0];
    const reads: Array<[string, boolean]> = [
      [start, true],
      [delta({ text: "", type: "text_delta" }), false],
      [ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "" }, type: "content_block_delta" }), false],
      [ev("content_block_delta", { delta: { partial_json: "", type: "input_json_delta" }, index: 0, type: "content_block_delta" }), false],
      ['event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": ""} }\n\n', false],
      [PING + delta({ signature: "", type: "signature_delta" }) + PING, false],
      [delta({ text: "Hi", type: "text_delta" }), true],
      [ev("content_block_delta", { delta: { type: "text_delta", text: "Hi" }, index: 0, type: "content_block_delta" }), true],
      [delta({ type: "text_delta", text: "see text_delta" }), true],
      [delta({ type: "citations_delta", citation: { type: "web_search_result_location", url: "https://example.com", title: "x", encrypted_index: "e", cited_text: "c" } }), true],
    ];
    expect(counted(tap("anthropic-messages"), reads.map((r) => r[0]))).toEqual(reads.map((r) => r[1]));
    expect(counted(tap("anthropic-messages"), reads.map((r) => crlf(r[0])))).toEqual(reads.map((r) => r[1]));
  });

  test("the Responses event tap (the WebSocket's) counts the same", () => {
    const driver = passthroughDriver(codecFor("openai-responses").createEventTap!({ family: "openai", includeUsage: false }));
    expect(counted(driver, RESPONSES.map((r) => r[0]))).toEqual(RESPONSES.map((r) => r[1]));
  });

  test("a tap looks only when asked: after it counted one, later reads are not looked at until the reader asks again", () => {
    const driver = tap("openai-chat") as ReplyDriver & { tapState: { looking: boolean } };
    driver.push(enc.encode(CHAT[0]![0]));
    expect([driver.contentEvents, driver.tapState.looking]).toEqual([1, false]);
    driver.push(enc.encode(chunk({ content: "more" })));
    expect(driver.contentEvents).toBe(1);
    driver.tapState.looking = true;
    driver.push(enc.encode(chunk({ content: "more" })));
    expect([driver.contentEvents, driver.tapState.looking]).toEqual([2, false]);
  });

  test("an event that straddles reads counts at the read that completes it, as it is (Chat's text path, Messages)", () => {
    const chat = chunk({ content: "" }) + chunk({ content: "later" });
    expect(counted(tap("openai-chat"), [CHAT[0]![0], chat.slice(0, 60), chat.slice(60)])).toEqual([true, false, true]);
    expect(counted(tap("openai-chat"), [CHAT[0]![0], chunk({}).slice(0, 30), chunk({}).slice(30)])).toEqual([true, false, false]);
    const start = MESSAGES[0]![0] + MESSAGES[1]![0];
    const empty = delta({ type: "text_delta", text: "" });
    expect(counted(tap("anthropic-messages"), [start, empty.slice(0, 40), empty.slice(40)])).toEqual([true, false, false]);
  });
});

describe("decoded lanes: the events of what the hub leaves out that show the upstream at work count as content", () => {
  test("Anthropic's server tool blocks (a web search) and citations, through a translating driver", () => {
    const driver = new TranslatedStreamDriver(codecFor("anthropic-messages"), codecFor("openai-chat"), { family: "anthropic" }, { model: "m" });
    const reads = [
      MESSAGES[0]![0] + ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) + delta({ type: "text_delta", text: "Searching." }),
      ev("content_block_stop", { type: "content_block_stop", index: 0 }),
      ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } }),
      PING + delta({ type: "input_json_delta", partial_json: '{"query":' }, 1),
      PING,
      ev("content_block_stop", { type: "content_block_stop", index: 1 }),
      ev("content_block_start", { type: "content_block_start", index: 2, content_block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] } }),
      delta({ type: "citations_delta", citation: { type: "web_search_result_location", url: "https://example.com", title: "x", cited_text: "y" } }, 3),
    ];
    expect(counted(driver, reads)).toEqual([true, false, true, true, false, true, true, true]);
  });

  test("a Responses hosted web search: its item and its progress events, not keepalive or lifecycle events", () => {
    seq = 0;
    const driver = new TranslatedStreamDriver(codecFor("openai-responses"), codecFor("anthropic-messages"), { family: "openai" }, { model: "m" });
    const reads = [
      rev("response.created", { response: RESP }),
      rev("response.output_item.added", { output_index: 0, item: { type: "web_search_call", id: "ws_1", status: "in_progress" } }),
      rev("response.web_search_call.in_progress", { output_index: 0, item_id: "ws_1" }),
      rev("keepalive"),
      rev("response.web_search_call.searching", { output_index: 0, item_id: "ws_1" }),
      rev("response.in_progress", { response: RESP }),
      rev("response.output_item.done", { output_index: 0, item: { type: "web_search_call", id: "ws_1", status: "completed" } }),
    ];
    expect(counted(driver, reads)).toEqual([false, true, true, false, true, false, true]);
  });

  test("Gemini's streamed call arguments: each continuation chunk that brings arguments (no event until the call ends) is the upstream at work", () => {
    const driver = new TranslatedStreamDriver(codecFor("gemini"), codecFor("openai-chat"), { family: "gemini" }, { model: "m" });
    const part = (fc: Record<string, unknown>) => gem([{ functionCall: fc }]);
    expect(
      counted(driver, [
        part({ name: "write", partialArgs: [{ jsonPath: "$.text", stringValue: "a" }], willContinue: true }),
        part({ partialArgs: [{ jsonPath: "$.text", stringValue: "long " }], willContinue: true }),
        part({ partialArgs: [{ jsonPath: "$.text", stringValue: "text" }], willContinue: true }),
        part({ willContinue: true }),
        part({}),
      ]),
    ).toEqual([true, true, true, false, true]);
  });

  test("Gemini's code execution parts", () => {
    const driver = new TranslatedStreamDriver(codecFor("gemini"), codecFor("openai-chat"), { family: "gemini" }, { model: "m" });
    expect(counted(driver, [gem([{ text: "Running." }]), gem([{ executableCode: { language: "PYTHON", code: "print(1)" } }]), gem([{ codeExecutionResult: { outcome: "OUTCOME_OK", output: "1" } }]), gem([{ text: "" }])])).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});

/**
 * Whether the driver says a server tool is in flight after each read (ReplyDriver.serverToolRunning: the
 * keep-alive bound then lets pings keep the stream alive longer; README "Not done yet" until this was
 * fixed: a web search that only pinged was cut at the idle timeout).
 */
function running(driver: ReplyDriver<unknown>, reads: string[]): boolean[] {
  return reads.map((r) => {
    driver.push(enc.encode(r));
    return driver.serverToolRunning === true;
  });
}

/** An Anthropic reply with a web search: text, the search's call, pings, its result, the answer; and whether a server tool is in flight after each read. */
const blockStart = (index: number, block: Record<string, unknown>) => ev("content_block_start", { type: "content_block_start", index, content_block: block });
const blockStop = (index: number) => ev("content_block_stop", { type: "content_block_stop", index });
const SEARCH: Array<[string, boolean]> = [
  [MESSAGES[0]![0] + blockStart(0, { type: "text", text: "" }) + delta({ type: "text_delta", text: "Let me search." }), false],
  [blockStop(0) + blockStart(1, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }), true],
  [delta({ type: "input_json_delta", partial_json: '{"query":"bun release"}' }, 1) + blockStop(1), true],
  [PING, true],
  [PING + PING, true],
  [blockStart(2, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.com", title: "my_tool_use", encrypted_content: "e" }] }) + blockStop(2), false],
  [blockStart(3, { type: "tool_use", id: "toolu_1", name: "get_tool_use", input: {} }), false],
  [blockStop(3) + blockStart(4, { type: "mcp_tool_use", id: "mcptoolu_1", name: "f", server_name: "s", input: {} }) + blockStop(4), true],
  [PING, true],
  [blockStart(5, { type: "mcp_tool_result", tool_use_id: "mcptoolu_1", content: [] }) + blockStop(5), false],
  [ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }), false],
];

/** A Responses reply with a hosted web search and `keepalive` events while it works. */
function responsesSearch(): Array<[string, boolean]> {
  seq = 0;
  return [
    [rev("response.created", { response: RESP }) + rev("response.output_item.added", { output_index: 0, item: { id: "msg_0", type: "message", status: "in_progress", content: [], role: "assistant" } }), false],
    [rev("response.output_item.done", { output_index: 0, item: { id: "msg_0", type: "message", status: "completed", content: [{ type: "output_text", text: "Searching.", annotations: [] }], role: "assistant" } }), false],
    [rev("response.output_item.added", { output_index: 1, item: { id: "ws_1", type: "web_search_call", status: "in_progress" } }), true],
    [rev("response.web_search_call.searching", { output_index: 1, item_id: "ws_1" }), true],
    [rev("keepalive"), true],
    [rev("keepalive") + ": keep-alive\n\n", true],
    [rev("response.output_item.done", { output_index: 1, item: { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "x" } } }), false],
    // another member order than OpenAI's (the type after the status)
    [rev("response.output_item.added", { output_index: 2, item: { status: "in_progress", id: "ig_1", type: "image_generation_call" } }), true],
    [rev("response.output_item.done", { output_index: 2, item: { status: "completed", id: "ig_1", type: "image_generation_call", result: "AAAA" } }), false],
    [rev("response.output_item.added", { output_index: 3, item: { id: "fc_1", type: "function_call", status: "in_progress", arguments: "", call_id: "call_1", name: "web_search_call" } }), false],
  ];
}

describe("a server tool in flight: the driver says so from its call's start until its result arrives, on every lane", () => {
  test("Anthropic passthrough tap, LF and CRLF framing", () => {
    expect(running(tap("anthropic-messages"), SEARCH.map((r) => r[0]))).toEqual(SEARCH.map((r) => r[1]));
    expect(running(tap("anthropic-messages"), SEARCH.map((r) => crlf(r[0])))).toEqual(SEARCH.map((r) => r[1]));
  });

  test("Anthropic passthrough tap: a search that is the reply's first block (read by the SSE reader, not skipped)", () => {
    const reads = [MESSAGES[0]![0] + blockStart(0, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }), PING, blockStart(1, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] })];
    expect(running(tap("anthropic-messages"), reads)).toEqual([true, true, false]);
  });

  test("Anthropic decoded (translated to Chat)", () => {
    const driver = new TranslatedStreamDriver(codecFor("anthropic-messages"), codecFor("openai-chat"), { family: "anthropic" }, { model: "m" });
    expect(running(driver, SEARCH.map((r) => r[0]))).toEqual(SEARCH.map((r) => r[1]));
  });

  test("Responses passthrough tap, its event tap (the WebSocket's) and the decoded lane (translated to Messages)", () => {
    const reads = responsesSearch();
    expect(running(tap("openai-responses"), reads.map((r) => r[0]))).toEqual(reads.map((r) => r[1]));
    expect(running(tap("openai-responses"), responsesSearch().map((r) => crlf(r[0])))).toEqual(reads.map((r) => r[1]));
    const events = passthroughDriver(codecFor("openai-responses").createEventTap!({ family: "openai", includeUsage: false }));
    expect(running(events, responsesSearch().map((r) => r[0]))).toEqual(reads.map((r) => r[1]));
    const decoded = new TranslatedStreamDriver(codecFor("openai-responses"), codecFor("anthropic-messages"), { family: "openai" }, { model: "m" });
    expect(running(decoded, responsesSearch().map((r) => r[0]))).toEqual(reads.map((r) => r[1]));
  });
});
