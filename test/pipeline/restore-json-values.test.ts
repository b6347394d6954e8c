/**
 * SPEC S-3 mapping back inside tool-call arguments (JSON text), as the model writes them:
 * a placeholder inside a JSON document written in a string value (`{"body": "{\"pw\": \"[SECRET_1]\"}"}`)
 * gets its value escaped once per level, so the inner document still parses to the original (escaped
 * once, `JSON.parse(o.body)` threw); a placeholder that stood for a JSON number (a PIN under
 * `passcode`) and is a whole string value comes back as that number, unquoted (it came back as a
 * string, which a tool with an integer schema may reject). Whole texts, every split point of a stream,
 * and the redact stage's own placeholders.
 */
import { describe, expect, test } from "bun:test";
import type { RequestContext } from "../../pipeline/context.ts";
import { redact } from "../../pipeline/redact.ts";
import { PlaceholderRestorer, restoreText, type Restoration } from "../../pipeline/restore-placeholders.ts";
import { guardedContext } from "../support/context.ts";

/** The Chat request's context after the redact stage, with one assistant tool call whose arguments are `args`. */
function chatRedacted(args: unknown): { ctx: RequestContext; sent: string } {
  const ctx = guardedContext("chat", {
    model: "m",
    messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: JSON.stringify(args) } }] }],
  });
  redact(ctx, { enabled: true });
  return { ctx, sent: JSON.parse(new TextDecoder().decode(ctx.rawBody)).messages[0].tool_calls[0].function.arguments };
}

/** `text` restored as a stream split at every point into two pieces, each result; and whole. */
function everySplit(r: () => Restoration, text: string): string[] {
  const outs = [restoreText(r(), text, true)];
  for (let i = 0; i <= text.length; i++) {
    const p = new PlaceholderRestorer(r(), true);
    outs.push(p.push(text.slice(0, i)) + p.push(text.slice(i)) + p.flush());
  }
  return outs;
}

const PW = 'P@ss"word\\1!';

describe("a placeholder inside a JSON document inside a string value", () => {
  test("the brief's case: the inner document parses to the original value", () => {
    const { ctx, sent } = chatRedacted({ password: PW });
    expect(JSON.parse(sent)).toEqual({ password: "[SECRET_1]" });
    const reply = JSON.stringify({ body: JSON.stringify({ pw: "[SECRET_1]" }) });
    for (const out of everySplit(() => ({ ...ctx.restoration!, counts: {} }), reply)) {
      const o = JSON.parse(out);
      expect(JSON.parse(o.body)).toEqual({ pw: PW });
    }
  });

  test("three levels deep, next to one level, beside plain text that only looks like a document", () => {
    const r = (): Restoration => ({ placeholders: new Map([["[SECRET_1]", { kind: "secret", value: PW }]]), counts: {} });
    const reply = JSON.stringify({
      a: "[SECRET_1]",
      b: JSON.stringify([JSON.stringify({ x: "[SECRET_1]" }), "[SECRET_1]"]),
      note: '[see] "[SECRET_1]"',
      link: "{x} [SECRET_1]",
    });
    for (const out of everySplit(r, reply)) {
      const o = JSON.parse(out);
      expect(o.a).toBe(PW);
      const b = JSON.parse(o.b);
      expect(JSON.parse(b[0])).toEqual({ x: PW });
      expect(b[1]).toBe(PW);
      expect(o.note).toBe(`[see] "${PW}"`);
      expect(o.link).toBe(`{x} ${PW}`);
    }
  });
});

describe("a placeholder that stood for a number", () => {
  test("comes back as the number where it is a whole string value; as text inside a longer one, and as a key", () => {
    const { ctx, sent } = chatRedacted({ passcode: 4321, password: 12345678, user: "bob" });
    expect(JSON.parse(sent)).toEqual({ passcode: "[SECRET_1]", password: "[SECRET_2]", user: "bob" });
    const reply = '{"passcode": "[SECRET_1]", "password":"[SECRET_2]", "list": ["[SECRET_1]"], "note": "pin [SECRET_1]", "[SECRET_2]": 1}';
    for (const out of everySplit(() => ({ ...ctx.restoration!, counts: {} }), reply)) {
      expect(out).toBe('{"passcode": 4321, "password":12345678, "list": [4321], "note": "pin 4321", "12345678": 1}');
    }
    // a string value stays a string ("password": "12345678" was text, not a number)
    const text = chatRedacted({ password: "12345678" });
    expect(restoreText(text.ctx.restoration!, '{"password": "[SECRET_1]"}', true)).toBe('{"password": "12345678"}');
  });

  test("the same value sent as a number and as a string gets a placeholder for each, each restored in its own type", () => {
    // number first, then string; and string first, then number (one placeholder restored unquoted in both places)
    for (const [args, want] of [
      [{ password: 12345678, confirm_password: "12345678" }, '{"password": 12345678, "confirm_password": "12345678"}'],
      [{ confirm_password: "12345678", password: 12345678 }, '{"confirm_password": "12345678", "password": 12345678}'],
    ] as const) {
      const { ctx, sent } = chatRedacted(args);
      const names = Object.keys(args);
      expect(JSON.parse(sent)).toEqual({ [names[0]]: "[SECRET_1]", [names[1]]: "[SECRET_2]" });
      const reply = `{"${names[0]}": "[SECRET_1]", "${names[1]}": "[SECRET_2]"}`;
      for (const out of everySplit(() => ({ ...ctx.restoration!, counts: {} }), reply)) expect(out).toBe(want);
      expect(JSON.parse(restoreText(ctx.restoration!, reply, true))).toEqual(args);
    }
    // a structured tool input (Anthropic) as well
    const ctx = guardedContext("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: { pin: { passcode: 4321 }, passcode: "4321" } }] }] });
    redact(ctx, { enabled: true });
    expect(JSON.parse(new TextDecoder().decode(ctx.rawBody)).messages[0].content[0].input).toEqual({ pin: { passcode: "[SECRET_1]" }, passcode: "[SECRET_2]" });
    expect(restoreText(ctx.restoration!, '{"pin":{"passcode":"[SECRET_1]"},"passcode":"[SECRET_2]"}', true)).toBe('{"pin":{"passcode":4321},"passcode":"4321"}');
  });

  test("a number under a secret-named member of a structured tool input (Anthropic) comes back as the number too", () => {
    const ctx = guardedContext("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: { passcode: 4321 } }] }] });
    redact(ctx, { enabled: true });
    expect(restoreText(ctx.restoration!, '{"passcode":"[SECRET_1]"}', true)).toBe('{"passcode":4321}');
    expect(restoreText(ctx.restoration!, "PIN [SECRET_1]")).toBe("PIN 4321");
  });
});
