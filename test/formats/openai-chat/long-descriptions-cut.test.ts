/**
 * Regression test (found in session 47's review of session 46's long Chat tool descriptions,
 * formats/openai-chat/long-descriptions.ts `fitDescription` / `boundary`; fixed in session 47).
 * Severity was low: nothing was lost, the model still got every code point, split between the tool and
 * the system message.
 *
 * What failed, for a tool description over 1024 characters sent to a kind `openai` Chat provider:
 * 1. A description written without spaces (Japanese, Chinese) was hard-cut in the middle of a word with
 *    "…" although it had sentence ends ("。") in the window: only ". ", "! ", "? " counted as sentence
 *    ends. The tool ended "…これ… (continued …)" and the section started "はテストです。". Now 。 ！ ？
 *    (and ｡ ．) end a sentence too, with the closing brackets after them (`。」`).
 * 2. The hard cut counted code points, not user-perceived characters (grapheme clusters): a flag (two
 *    regional indicators) was split, so the tool ended in a lone 🇫 and every flag of the moved rest was
 *    paired wrongly (🇷🇩 🇪🇯 🇵🇫 …, other, non-existent flags); the same for a ZWJ emoji or a letter and
 *    its combining accent. Now the hard cut ends at the window's last grapheme boundary
 *    (Intl.Segmenter), still at most 1024 code points in the tool.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";
import { ruleViolations } from "../../support/upstream-rules.ts";

const SCHEMA = { type: "object", properties: {} };
const POINTER = ' (continued in the system message under "Tool T")';
const SECTION = "## Tool T (description continued)\n\n";
function translate(description: string, messages: unknown[] = [{ role: "user", content: "hi" }]) {
  return translateBody("anthropic-messages", { model: "m", max_tokens: 10, messages, tools: [{ name: "T", description, input_schema: SCHEMA }] }, "openai-chat", "openai", "gpt-4.1") as any;
}
function split(description: string): { head: string; rest: string; tool: string } {
  const { body } = translate(description);
  expect(ruleViolations("openai-chat-completions", body, "gpt-4.1")).toEqual([]); // ≤ 1024 code points in the tool
  const tool = body.tools[0].function.description as string;
  expect(tool.endsWith(POINTER)).toBe(true);
  const head = tool.slice(0, tool.length - POINTER.length);
  const sys = body.messages[0].content as string;
  const rest = sys.slice(sys.indexOf(SECTION) + SECTION.length);
  return { head, rest, tool };
}
const graphemes = (s: string) => [...new Intl.Segmenter().segment(s)].map((x) => x.segment);

describe("where a long description is cut", () => {
  test("a Japanese description is cut after a sentence end (。), not inside a word; nothing lost", () => {
    const d = "これはテストです。".repeat(200);
    const { head, rest } = split(d);
    expect(head).toBe("これはテストです。".repeat(108)); // 972 code points: the last 。 in the 974 that leave room for the pointer and a …
    expect(rest).toBe("これはテストです。".repeat(92));
  });

  test("Chinese ！ and ？ end sentences, and a closing 」 stays with its sentence", () => {
    const d = "「你好吗？」他问。" + "我们走吧！".repeat(300);
    const { head, rest } = split(d);
    expect(head.endsWith("！")).toBe(true);
    expect(head + rest).toBe(d);
    const quoted = "「これはテストです。」".repeat(150);
    const q = split(quoted);
    expect(q.head.endsWith("。」")).toBe(true);
    expect(q.rest.startsWith("「これは")).toBe(true);
    expect(q.head + q.rest).toBe(quoted);
  });

  test("an English sentence end after the last 。 still wins when it is later", () => {
    const d = "説明です。" + "A sentence here. ".repeat(100);
    const { head, rest } = split(d);
    expect(head.endsWith("here.")).toBe(true);
    expect(rest.startsWith("A sentence")).toBe(true);
  });

  test("a hard cut does not split a flag (two regional indicators): head and rest keep whole flags", () => {
    const FLAGS = ["🇫🇷", "🇩🇪", "🇯🇵"];
    const d = "x" + FLAGS.join("").repeat(300);
    const { head, rest } = split(d);
    expect(head.endsWith("…")).toBe(true);
    const headFlags = graphemes(head.slice(0, -1)).slice(1);
    expect(headFlags.every((g) => FLAGS.includes(g))).toBe(true); // before the fix: ends with "🇫"
    expect(graphemes(rest).every((g) => FLAGS.includes(g))).toBe(true); // before the fix: "🇷🇩", "🇪🇯", …
    expect(head.slice(0, -1) + rest).toBe(d);
  });

  test("a ZWJ family emoji (5 code points) is not split", () => {
    const FAMILY = "👨‍👩‍👧"; // 5 code points
    const fam = split(FAMILY.repeat(300));
    expect(graphemes(fam.head.slice(0, -1)).every((g) => g === FAMILY)).toBe(true);
    expect(graphemes(fam.rest).every((g) => g === FAMILY)).toBe(true);
  });

  test("a letter with a combining accent (e + U+0301) is not split", () => {
    const E = "e\u0301";
    const d = "x" + E.repeat(700); // the 974 code points of room end between an e and its accent
    const acc = split(d);
    expect(graphemes(acc.head.slice(1, -1)).every((g) => g === E)).toBe(true);
    expect(acc.rest.startsWith(E)).toBe(true);
    expect(acc.head.slice(0, -1) + acc.rest).toBe(d);
  });

  test("the tool part and the section are byte-stable across turns", () => {
    const d = "x" + "🇫🇷🇩🇪".repeat(300);
    const turn1 = [{ role: "user", content: "hi" }];
    const turn2 = [...turn1, { role: "assistant", content: "ok" }, { role: "user", content: "again" }];
    const a = translate(d, turn1).body;
    const b = translate(d, turn2).body;
    expect(JSON.stringify(b.tools)).toBe(JSON.stringify(a.tools));
    expect(b.messages[0]).toEqual(a.messages[0]);
  });
});
