import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { FormatError, type HubResponse } from "../../../formats/hub.ts";
import { FIXTURES } from "../../support/fixtures.ts";

const recordedJson = (file: string) => Bun.file(`${FIXTURES}/recorded/anthropic-messages/${file}`).json();
const decode = (body: unknown) => anthropicMessages.decodeResponse(body, { family: "anthropic" });
const OPTS = { model: "client-model", newId: (p: string) => `${p}minted` };

describe("decodeResponse accepts the recorded replies", () => {
  test("text.json", async () => {
    const body = await recordedJson("text.json");
    const r = decode(body);
    expect(r.content).toEqual([{ type: "text", text: body.content[0].text }]);
    expect(r.stopReason).toBe("end_turn");
    expect(r.usage).toEqual({ inputTokens: 12, outputTokens: 29, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 });
    expect([r.id, r.model, r.stopSequence]).toEqual([body.id, body.model, null]);
  });

  test("thinking-signature.json: thinking with the family-stamped signature, then text", async () => {
    const body = await recordedJson("thinking-signature.json");
    const r = decode(body);
    expect(r.content).toEqual([
      { type: "thinking", text: "925 divided by 5 = 185", signature: { family: "anthropic", value: body.content[0].signature } },
      { type: "text", text: "925 ÷ 5 = 185" },
    ]);
  });

  test("tool-call-no-args.json: input {} becomes arguments \"{}\", stop tool_use", async () => {
    const r = decode(await recordedJson("tool-call-no-args.json"));
    expect(r.content[1]).toEqual({ type: "tool_call", id: "toolu_01LRmxn9vGM1d2DZSDBowdZ1", name: "updateIssueList", arguments: "{}" });
    expect(r.stopReason).toBe("tool_use");
  });

  test("refusal.json: empty content, stop refusal", async () => {
    const r = decode(await recordedJson("refusal.json"));
    expect(r.content).toEqual([]);
    expect([r.stopReason, r.rawStopReason]).toEqual(["refusal", "refusal"]);
  });

  test("an error body throws FormatError carrying that error; a foreign body throws api_error 502", async () => {
    const err = await recordedJson("error-invalid-request.json");
    expect(() => decode(err)).toThrow(FormatError);
    try {
      decode(err);
    } catch (e) {
      expect((e as FormatError).error.kind).toBe("invalid_request");
    }
    try {
      decode({ choices: [] });
      throw new Error("expected a FormatError");
    } catch (e) {
      expect((e as FormatError).error).toMatchObject({ kind: "api_error", status: 502 });
    }
  });
});

describe("encodeResponse", () => {
  test("a full reply: thinking, text, tool call; stop promoted to tool_use; usage; SDK-typed shape", () => {
    const resp: HubResponse = {
      id: "chatcmpl-1",
      content: [
        { type: "thinking", text: "plan", signature: { family: "gemini", value: "G" } },
        { type: "text", text: "" },
        { type: "text", text: "Checking." },
        { type: "tool_call", id: "call_1", name: "get", arguments: '{"a":1}' },
        { type: "tool_call", id: "call_2", name: "ls", arguments: "" },
      ],
      stopReason: "end_turn",
      usage: { inputTokens: 20, cacheReadTokens: 100, outputTokens: 30 },
    };
    const body = anthropicMessages.encodeResponse!(resp, OPTS) as Anthropic.Message;
    expect(body).toEqual({
      id: "msg_minted",
      type: "message",
      role: "assistant",
      model: "client-model",
      content: [
        { type: "thinking", thinking: "plan", signature: "sy|gemini|G" },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_1", name: "get", input: { a: 1 } },
        { type: "tool_use", id: "call_2", name: "ls", input: {} },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 30 },
    } as never);
  });

  test("decode(encode(x)) keeps content, stop reason and usage for the recorded replies", async () => {
    for (const f of ["text.json", "thinking-signature.json", "tool-call-no-args.json", "refusal.json"]) {
      const r = decode(await recordedJson(f));
      const again = decode(anthropicMessages.encodeResponse!(r, OPTS));
      expect(again.content).toEqual(r.content);
      expect(again.stopReason).toBe(r.stopReason);
      expect(again.usage).toEqual(r.usage);
    }
  });

  test("context_window_exceeded → model_context_window_exceeded; a reply with no stop reason keeps null", () => {
    const mk = (stopReason: HubResponse["stopReason"]) =>
      anthropicMessages.encodeResponse!({ content: [{ type: "text", text: "x" }], stopReason, usage: {} }, OPTS) as any;
    expect(mk("context_window_exceeded").stop_reason).toBe("model_context_window_exceeded");
    expect(mk(null).stop_reason).toBeNull();
  });
});

describe("responseWarnings: what encodeResponse writes as input {}", () => {
  const reply = (args: string[], stopReason: HubResponse["stopReason"]): HubResponse => ({
    content: [{ type: "text", text: "Checking." }, ...args.map((a, i) => ({ type: "tool_call" as const, id: `call_${i}`, name: `t${i}`, arguments: a }))],
    stopReason,
    usage: {},
  });
  const warn = (r: HubResponse) => anthropicMessages.responseWarnings!(r);

  test("the last call cut by the output token limit or the context window: tool_arguments_cut, naming the tool and the characters left out", () => {
    const cut = reply(['{"city":"Pa'], "max_tokens");
    expect((anthropicMessages.encodeResponse!(cut, OPTS) as Anthropic.Message).content[1]).toEqual({ type: "tool_use", id: "call_0", name: "t0", input: {} } as never);
    expect(warn(cut)).toEqual([
      {
        code: "tool_arguments_cut",
        message:
          "The upstream's output token limit cut the arguments of a call to t0 (11 characters so far, not complete JSON); a reply that is not streamed carries a call's input only as a JSON object, so its input is {}. Allow more output tokens, or stream the request to get the arguments so far.",
      },
    ]);
    expect(warn(reply(['{"a":', '{"b":1'], "context_window_exceeded")).map((w) => [w.code, w.message.slice(0, 50)])).toEqual([
      ["tool_arguments_invalid", "The arguments of a call to t0 from the upstream (5"],
      ["tool_arguments_cut", "The upstream's context window cut the arguments of"],
    ]);
  });

  test("broken arguments at any other finish are tool_arguments_invalid; whole, empty or cut-after-name arguments warn of nothing", () => {
    expect(warn(reply(['{"a":'], "tool_use")).map((w) => w.code)).toEqual(["tool_arguments_invalid"]);
    expect(warn(reply(['{"a":1}', "", "  "], "max_tokens"))).toEqual([]);
  });
});
