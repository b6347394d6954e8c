/**
 * A Chat client's own `custom` (freeform) tools on the hub lane to a Chat provider
 * (formats/openai-chat/custom-calls.ts): a name OpenAI's function-name rule refuses
 * (`^[a-zA-Z0-9_-]{1,64}$`) goes through the request's tool name map as function names do (declared,
 * in history, in a custom tool_choice), and the provider's call of it reaches the client under the name
 * it declared, as a custom call with the raw input, streamed and whole. A custom call in the client's
 * history is read (until 2026-12-07 every lane but the native one refused it with a 400 naming
 * `tool_calls[0].function`), and the custom tool itself was sent under the refused name.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../../formats/index.ts";
import { EventNormalizer } from "../../../formats/normalize.ts";
import type { HubEvent } from "../../../formats/hub.ts";
import { translateBody } from "../../support/translate-body.ts";

const SCHEMA = { type: "object", properties: { q: { type: "string" } } };

/** A Chat client turn: a custom tool named with a dot, a function, and a custom call of it answered in history. */
const body = {
  model: "gpt-5",
  messages: [
    { role: "user", content: "run it" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "custom", custom: { name: "code.exec", input: "print(1)" } }] },
    { role: "tool", tool_call_id: "call_1", content: "1" },
  ],
  tools: [
    { type: "custom", custom: { name: "code.exec", description: "Runs Python.", format: { type: "text" } } },
    { type: "function", function: { name: "lookup", parameters: SCHEMA } },
  ],
  tool_choice: { type: "custom", custom: { name: "code.exec" } },
};

describe("a Chat client's custom tool named against OpenAI's rule", () => {
  test("declared, called in history and chosen under the name the map gives, with a renamed_tool warning and the reverse map", () => {
    const built = translateBody("openai-chat", body, "openai-chat", "openai");
    const b = built.body as any;
    expect(b.tools[0]).toEqual({ type: "custom", custom: { name: "code_exec", description: "Runs Python.", format: { type: "text" } } });
    expect(b.tools[1].function.name).toBe("lookup");
    expect(b.messages[1].tool_calls).toEqual([{ id: "call_1", type: "custom", custom: { name: "code_exec", input: "print(1)" } }]);
    expect(b.tool_choice).toEqual({ type: "custom", custom: { name: "code_exec" } });
    expect(built.warnings.filter((w) => w.code === "renamed_tool").map((w) => w.message)).toEqual([
      'The tool name "code.exec" is not a valid OpenAI tool name; sent as "code_exec".',
    ]);
    expect(built.decoderHints?.toolNames).toEqual({ code_exec: "code.exec" });
  });

  test("a custom call in history is read on the tidy lane too, not refused", () => {
    const t = codecFor("openai-chat").tidyRequest!(body, { model: "m", kind: "openai-compatible", family: "provider:x", stream: false });
    expect((t.body as any).messages[1].tool_calls).toEqual(body.messages[1]!.tool_calls);
  });

  test("a tool call with neither function nor custom is still a 400 naming its function", () => {
    const bad = { ...body, messages: [{ role: "user", content: "x" }, { role: "assistant", tool_calls: [{ id: "c", type: "function" }] }] };
    let err: any;
    try {
      codecFor("openai-chat").parseRequest!(bad);
    } catch (e) {
      err = e;
    }
    expect(err?.error?.status).toBe(400);
    expect(err?.error?.param).toBe("messages[1].tool_calls[0].function");
  });

  /** The decoder's options for the request's first turn (no history). */
  const opts = () => ({ family: "openai" as const, ...translateBody("openai-chat", { ...body, messages: [body.messages[0]] }, "openai-chat", "openai").decoderHints });
  const enc = { model: "gpt-5", customTools: new Set(["code.exec"]), newId: () => "chatcmpl-1", now: () => 1_700_000_000_000 };

  test("whole: the provider's custom call reaches the client under its own name with the raw input", () => {
    const reply = {
      id: "chatcmpl-up", object: "chat.completion", created: 1, model: "up",
      choices: [{
        index: 0, finish_reason: "tool_calls",
        message: { role: "assistant", content: null, tool_calls: [
          { id: "call_9", type: "custom", custom: { name: "code_exec", input: 'print("a\\nb")' } },
          { id: "call_8", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
        ] },
      }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
    const resp = codecFor("openai-chat").decodeResponse(reply, opts());
    const out = codecFor("openai-chat").encodeResponse!(resp, enc) as any;
    expect(out.choices[0].message.tool_calls).toEqual([
      { id: "call_9", type: "custom", custom: { name: "code.exec", input: 'print("a\\nb")' } },
      { id: "call_8", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
    ]);
    expect(out.choices[0].finish_reason).toBe("tool_calls");
  });

  test("streamed: the custom call's input pieces reach the client as one custom call under its own name", () => {
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 1, model: "up", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const sse = [
      chunk({ role: "assistant", content: null }),
      chunk({ tool_calls: [{ index: 0, id: "call_9", type: "custom", custom: { name: "code_exec", input: 'print("a' } }] }),
      chunk({ tool_calls: [{ index: 0, custom: { input: '\\nb")' } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_8", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }] }),
      chunk({}, "tool_calls"),
      "data: [DONE]\n\n",
    ].join("");
    let text = "";
    const encoder = codecFor("openai-chat").createEncoder!(enc, (s) => (text += s));
    const norm = new EventNormalizer((e: HubEvent) => encoder.event(e));
    const dec = codecFor("openai-chat").createDecoder(opts(), (e) => norm.event(e));
    dec.push(new TextEncoder().encode(sse));
    dec.end();
    norm.end();
    encoder.end();
    const deltas = text.split("\n\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta).filter((d) => d?.tool_calls);
    const calls = deltas.flatMap((d: any) => d.tool_calls);
    expect(calls.filter((c: any) => c.type === "custom")).toEqual([{ index: 0, id: "call_9", type: "custom", custom: { name: "code.exec", input: 'print("a\\nb")' } }]);
    expect(calls.filter((c: any) => c.index === 1).map((c: any) => c.function.name ?? "").join("")).toBe("lookup");
  });
});
