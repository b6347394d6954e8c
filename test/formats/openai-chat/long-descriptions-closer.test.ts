/**
 * Regression test: a long Chat tool description whose window (the first characters the tool keeps)
 * ends right on a CJK sentence end whose closing bracket lies just past the window (`…。」`) was cut
 * after the "。" (until 2026-12-08): the tool ended "…ああ。" and the moved section in the system message
 * started with the orphaned "」" ("## Tool T (description continued)\n\n」次の文です。…"), since
 * formats/openai-chat/long-descriptions.ts `boundary` took the closers after a CJK sentence end only up
 * to the window's end. Now the closer stays with its sentence: one closer past the window takes the
 * character kept for a "…" (still at most 1024 code points); a sentence whose closers reach further is
 * left whole for the rest, cut at the sentence end before it. The same bytes every turn.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const SCHEMA = { type: "object", properties: {} };
const POINTER = ' (continued in the system message under "Tool T")';
const SECTION = "## Tool T (description continued)\n\n";
// the window: 1024 code points less the pointer and the one kept for a "…"
const room = 1024 - [...POINTER].length - 1;

/** The tool's description as sent and the moved section's text (after its heading). */
function sent(description: string): { tool: string; rest: string } {
  const { body } = translateBody("anthropic-messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }], tools: [{ name: "T", description, input_schema: SCHEMA }] }, "openai-chat", "openai", "gpt-4.1") as any;
  const sys = body.messages[0].content as string;
  return { tool: body.tools[0].function.description, rest: sys.slice(sys.indexOf(SECTION) + SECTION.length) };
}

test("a closing bracket after 。 just past the window stays with its sentence", () => {
  // the window's last character is the 。; its 」 is the first character past the window
  const head = "これはテストです。".repeat(3) + "あ".repeat(room - 28) + "。";
  expect([...head].length).toBe(room);
  const description = head + "」次の文です。".repeat(50);
  const { tool, rest } = sent(description);
  // before: the tool ended "…あ。" and the rest was "」次の文です。」次の…"
  expect(tool).toBe(`${head}」${POINTER}`);
  expect([...tool].length).toBe(1024);
  expect(rest.slice(0, 8)).toBe("次の文です。」次");
  expect(sent(description)).toEqual({ tool, rest });
});

test("a sentence whose closers do not fit is cut before the sentence", () => {
  // two closers past the window (。』」): the kept part ends at the sentence end before, in the window's second half
  const first = "あ".repeat(600) + "。";
  const second = "「" + "い".repeat(room - 603) + "。";
  expect([...(first + second)].length).toBe(room);
  const description = first + second + "』」" + "次の文です。".repeat(50);
  const { tool, rest } = sent(description);
  // before: the tool ended "…い。" and the rest was "』」次の文…"
  expect(tool).toBe(`${first}${POINTER}`);
  expect(rest.startsWith(`${second}』」次の文です。`)).toBe(true);
  expect(sent(description)).toEqual({ tool, rest });
});
