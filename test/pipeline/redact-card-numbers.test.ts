/**
 * SPEC R-1, S-3: a card number written as a JSON number is replaced in every client format's tool
 * payloads, under any member name (pipeline/redact-numbers.ts). Chat and Responses arguments (JSON text)
 * always had it; Anthropic `tool_use.input` and Gemini `functionCall.args` / `functionResponse.response`
 * (objects) looked at numbers under secret-named members only, and `{"card": 4111111111111111}` went
 * upstream in clear. The placeholder stands for the number: a reply that writes it as a whole string
 * value of its tool-call arguments gets the number back, unquoted.
 */
import { describe, expect, test } from "bun:test";
import type { Endpoint, RequestContext } from "../../pipeline/context.ts";
import { redact } from "../../pipeline/redact.ts";
import { cardNumber } from "../../pipeline/redact-numbers.ts";
import { restoreText } from "../../pipeline/restore-placeholders.ts";
import { guardedContext } from "../support/context.ts";

const CARD = 4111111111111111;
const ARGS = { card: CARD, note: "card 4111 1111 1111 1111" };

function run(endpoint: Endpoint, body: Record<string, unknown>): { ctx: RequestContext; raw: string } {
  const ctx = guardedContext(endpoint, body);
  redact(ctx, { enabled: true });
  return { ctx, raw: ctx.rawBody ? new TextDecoder().decode(ctx.rawBody) : JSON.stringify(ctx.body) };
}

/** Each client format's tool payload holding `args`, redacted: the payload as sent (parsed), and the context. */
function payloads(args: Record<string, unknown>): Array<{ where: string; sent: unknown; raw: string; ctx: RequestContext }> {
  const json = JSON.stringify(args);
  const chat = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: json } }] }] });
  const responses = run("responses", { model: "m", input: [{ type: "function_call", call_id: "c1", name: "f", arguments: json }] });
  const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: structuredClone(args) }] }] });
  const call = run("gemini", { contents: [{ role: "model", parts: [{ functionCall: { name: "f", args: structuredClone(args) } }] }] });
  const result = run("gemini", { contents: [{ role: "user", parts: [{ functionResponse: { name: "f", response: structuredClone(args) } }] }] });
  return [
    { where: "Chat arguments", sent: JSON.parse(JSON.parse(chat.raw).messages[0].tool_calls[0].function.arguments), raw: chat.raw, ctx: chat.ctx },
    { where: "Responses arguments", sent: JSON.parse(JSON.parse(responses.raw).input[0].arguments), raw: responses.raw, ctx: responses.ctx },
    { where: "Anthropic tool_use.input", sent: JSON.parse(anthropic.raw).messages[0].content[0].input, raw: anthropic.raw, ctx: anthropic.ctx },
    { where: "Gemini functionCall.args", sent: JSON.parse(call.raw).contents[0].parts[0].functionCall.args, raw: call.raw, ctx: call.ctx },
    { where: "Gemini functionResponse.response", sent: JSON.parse(result.raw).contents[0].parts[0].functionResponse.response, raw: result.raw, ctx: result.ctx },
  ];
}

describe("a card number written as a JSON number", () => {
  test("is its placeholder in every format's tool payload, as in Chat arguments; the same digits as text get one of their own", () => {
    for (const p of payloads(ARGS)) {
      expect({ where: p.where, sent: p.sent }).toEqual({ where: p.where, sent: { card: "[CARD_1]", note: "card [CARD_2]" } });
      expect(p.raw).not.toContain("4111111111111111");
      expect(p.raw).not.toContain("4111 1111");
      expect(p.ctx.trace.redactions).toEqual({ card: 2 });
    }
  });

  test("under any name, nested, and as an array item; numbers that are not card numbers stay as they are", () => {
    const args = {
      order: { payment: { number: 5555555555554444 }, id: 1234567890123, total: 4111111111111112 },
      cards: [378282246310005, 42, [6011111111111117]],
      ts: 1765100000000,
      negative: -4111111111111111,
    };
    const want = {
      order: { payment: { number: "[CARD_1]" }, id: 1234567890123, total: 4111111111111112 },
      cards: ["[CARD_2]", 42, ["[CARD_3]"]],
      ts: 1765100000000,
      negative: -4111111111111111,
    };
    for (const p of payloads(args)) {
      expect({ where: p.where, sent: p.sent }).toEqual({ where: p.where, sent: want });
      for (const v of ["5555555555554444", "378282246310005", "6011111111111117"]) expect(p.raw).not.toContain(v);
    }
  });

  test("a reply that writes the placeholder as a whole string value of its arguments gets the number back, unquoted", () => {
    const reply = '{"card":"[CARD_1]","note":"card [CARD_2]","again":"[CARD_1] on file"}';
    for (const p of payloads(ARGS)) {
      const out = restoreText(p.ctx.restoration!, reply, true);
      expect({ where: p.where, out }).toEqual({ where: p.where, out: '{"card":4111111111111111,"note":"card 4111 1111 1111 1111","again":"4111111111111111 on file"}' });
      expect(JSON.parse(out).card).toBe(CARD);
    }
  });

  test("under a secret-named member it is a secret whole, as before", () => {
    for (const p of payloads({ password: CARD })) expect({ where: p.where, sent: p.sent }).toEqual({ where: p.where, sent: { password: "[SECRET_1]" } });
  });

  test("cardNumber takes what the text rule takes: 13 to 19 digits, a network's prefix, the Luhn check", () => {
    expect([4111111111111111, 5555555555554444, 378282246310005, 4222222222222].map(cardNumber)).toEqual([true, true, true, true]);
    expect([4111111111111112, 1234567890123456, 411111111111, -4111111111111111, 4111111111111111.5, 1765100000000].map(cardNumber)).toEqual([false, false, false, false, false, false]);
  });
});
