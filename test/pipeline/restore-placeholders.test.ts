/**
 * SPEC S-3 mapping back, unit level: what a restorer releases per delta (it holds back a possible
 * placeholder prefix and never more), every split point of a text, JSON escaping in tool arguments,
 * unknown placeholders left alone, the held part released at block_stop and before an error, and the
 * redact stage's placeholders round-tripping through it.
 */
import { describe, expect, test } from "bun:test";
import type { HubEvent } from "../../formats/hub.ts";
import { Redactor } from "../../pipeline/redact.ts";
import { EventRestorer, PlaceholderRestorer, restoreText, type Restoration } from "../../pipeline/restore-placeholders.ts";

const EMAIL = "dana.lee@corp.example";
const restoration = (): Restoration => ({
  placeholders: new Map([
    ["[EMAIL_1]", { kind: "email", value: EMAIL }],
    ["[SECRET_1]", { kind: "secret", value: 'pa"ss\nword' }],
  ]),
  counts: {},
});

describe("PlaceholderRestorer", () => {
  test("holds back exactly the possible placeholder prefix at a delta's end", () => {
    const p = new PlaceholderRestorer(restoration(), false);
    expect(p.push("Hi [EM")).toBe("Hi ");
    expect(p.push("AIL_1")).toBe("");
    expect(p.push("] and [")).toBe(`${EMAIL} and `);
    expect(p.push("x] [EMAIL_12]")).toBe("[x] [EMAIL_12]");
    expect(p.push(" [SECRET_")).toBe(" ");
    expect(p.flush()).toBe("[SECRET_");
  });

  test("a `[` that cannot start a placeholder is not held", () => {
    const p = new PlaceholderRestorer(restoration(), false);
    expect(p.push("array[0")).toBe("array[0");
    expect(p.push("] [E")).toBe("] ");
    expect(p.push("X")).toBe("[EX");
  });

  test("every split point (two and three pieces) gives the restored text", () => {
    const text = "To [EMAIL_1], key [SECRET_1].";
    const want = `To ${EMAIL}, key pa"ss\nword.`;
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        const r = restoration();
        const p = new PlaceholderRestorer(r, false);
        const out = p.push(text.slice(0, i)) + p.push(text.slice(i, j)) + p.push(text.slice(j)) + p.flush();
        expect(out).toBe(want);
        expect(r.counts).toEqual({ email: 1, secret: 1 });
      }
    }
  });

  test("inside tool arguments the value is JSON-escaped, so the arguments stay valid JSON", () => {
    const json = JSON.stringify({ to: "[EMAIL_1]", password: "[SECRET_1]" });
    for (let i = 0; i <= json.length; i++) {
      const p = new PlaceholderRestorer(restoration(), true);
      const out = p.push(json.slice(0, i)) + p.push(json.slice(i)) + p.flush();
      expect(JSON.parse(out)).toEqual({ to: EMAIL, password: 'pa"ss\nword' });
    }
  });

  test("the redact stage's placeholders come back as the text first replaced", () => {
    const r = new Redactor();
    const sent = r.redact(`mail Dana.Lee@Corp.example, then dana.lee@corp.example, from 203.0.113.44`);
    expect(sent).toBe("mail [EMAIL_1], then [EMAIL_1], from [IPV4_1]");
    const back = restoreText({ placeholders: r.originals, counts: {} }, "[EMAIL_1] at [IPV4_1]");
    expect(back).toBe("Dana.Lee@Corp.example at 203.0.113.44");
  });
});

describe("EventRestorer", () => {
  const run = (events: HubEvent[], end = true) => {
    const out: HubEvent[] = [];
    const e = new EventRestorer(restoration(), (ev) => out.push(ev));
    for (const ev of events) e.event(ev);
    if (end) e.end();
    return out;
  };

  test("a held prefix is released before block_stop; tool-argument deltas are escaped", () => {
    const out = run([
      { type: "message_start" },
      { type: "block_start", index: 0, block: { type: "text" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "see [EMAI" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "L_1] [" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "c1", name: "f" } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"p":"[SEC' } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: 'RET_1]"}' } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "tool_use" },
    ]);
    expect(out).toEqual([
      { type: "message_start" },
      { type: "block_start", index: 0, block: { type: "text" } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "see " } },
      { type: "block_delta", index: 0, delta: { type: "text", text: `${EMAIL} ` } },
      { type: "block_delta", index: 0, delta: { type: "text", text: "[" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "c1", name: "f" } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"p":"' } },
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: 'pa\\"ss\\nword"}' } },
      { type: "block_stop", index: 1 },
      { type: "finish", reason: "tool_use" },
    ]);
  });

  test("an error that cuts a block off gets the held text first; thinking is left as written", () => {
    const err = { type: "error", error: { kind: "api_error", message: "x", status: 502 } } as HubEvent;
    const out = run([
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "block_delta", index: 0, delta: { type: "thinking", text: "[EMAIL_1]" } },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "text" } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "a [EMAIL_" } },
      err,
    ]);
    expect(out.slice(1, 2)).toEqual([{ type: "block_delta", index: 0, delta: { type: "thinking", text: "[EMAIL_1]" } }]);
    expect(out.slice(4)).toEqual([
      { type: "block_delta", index: 1, delta: { type: "text", text: "a " } },
      { type: "block_delta", index: 1, delta: { type: "text", text: "[EMAIL_" } },
      err,
    ]);
  });
});
