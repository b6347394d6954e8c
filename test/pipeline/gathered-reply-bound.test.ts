/**
 * The bound of a streamed reply gathered for a non-streaming client (AccumulatedDriver,
 * pipeline/whole-reply-bound.ts gatheredChars): it counts the reply's content (text, reasoning, tool
 * arguments), not its SSE framing; a reply at the bound is served, one character more is the 502
 * `upstream_reply_too_large` the commit point makes a failed attempt.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { FormatError } from "../../formats/hub.ts";
import { AccumulatedDriver } from "../../pipeline/re-translate.ts";

const enc = new TextEncoder();
const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** A Chat stream of `text` (in 10-character deltas) and one tool call with `args`. */
const stream = (text: string, args: string) =>
  chunk({ role: "assistant", content: "" }) +
  (text.match(/.{1,10}/g) ?? []).map((t) => chunk({ content: t })).join("") +
  chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: args } }] }) +
  chunk({}, "tool_calls") +
  "data: [DONE]\n\n";

/** Gathers `sse` for a Chat JSON client with a bound of `max` characters; the JSON reply, or the error thrown. */
function gather(sse: string, max: number): { reply?: any; error?: FormatError } {
  const chat = codecFor("openai-chat");
  const d = new AccumulatedDriver(chat, chat, { family: "openai" }, { model: "m" }, undefined, max);
  try {
    d.push(enc.encode(sse));
    return { reply: JSON.parse(new TextDecoder().decode(d.end())) };
  } catch (e) {
    return { error: e as FormatError };
  }
}

describe("a gathered reply's bound", () => {
  const text = "0123456789".repeat(30);
  const args = '{"path":"a.ts"}';
  const content = text.length + args.length;

  test("a reply whose content is at the bound is served whole, though its SSE bytes are many times more", () => {
    expect(stream(text, args).length).toBeGreaterThan(content * 5);
    const { reply, error } = gather(stream(text, args), content);
    expect(error).toBeUndefined();
    expect(reply.choices[0].message.content).toBe(text);
    expect(reply.choices[0].message.tool_calls[0].function.arguments).toBe(args);
  });

  test("one character more is a 502 upstream_reply_too_large", () => {
    const { reply, error } = gather(stream(text, args), content - 1);
    expect(reply).toBeUndefined();
    expect(error).toBeInstanceOf(FormatError);
    expect(error!.error).toMatchObject({ status: 502, code: "upstream_reply_too_large" });
    expect(error!.error.message).toContain(`more than ${content - 1} characters`);
  });
});
