/**
 * FOUND (review of session 46's long Chat tool descriptions, formats/openai-chat/long-descriptions.ts
 * `fitDescription` / `boundary`; not fixed here). Severity: low (nothing is lost: the model still gets
 * every code point, split between the tool and the system message).
 *
 * What a user would notice, for a tool description over 1024 characters sent to a kind `openai` Chat
 * provider:
 * 1. A description written without spaces (Japanese, Chinese) is hard-cut in the middle of a word with
 *    "…" although it has sentence ends ("。") in the window: only ". ", "! ", "? " count as sentence
 *    ends. Expected: the cut after the last "。" in the window's second half (as ". " is used for
 *    English). Actual: "…これ… (continued …)" and the section starts "はテストです。".
 * 2. The hard cut counts code points, not user-perceived characters (grapheme clusters): a flag (two
 *    regional indicators) is split, so the tool ends in a lone 🇫 and every flag of the moved rest is
 *    paired wrongly (🇷🇩 🇪🇯 🇵🇫 …, i.e. other, non-existent flags); the same for a ZWJ emoji or a
 *    letter and its combining accent. Expected: the cut at a grapheme boundary (Intl.Segmenter).
 *    Actual: the head's last grapheme is "🇫", the rest's first "🇷🇩".
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const SCHEMA = { type: "object", properties: {} };
function split(description: string): { head: string; rest: string } {
  const { body } = translateBody("anthropic-messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }], tools: [{ name: "T", description, input_schema: SCHEMA }] }, "openai-chat", "openai", "gpt-4.1") as any;
  const tool = body.tools[0].function.description as string;
  const head = tool.slice(0, tool.indexOf(' (continued in the system message under "Tool T")'));
  const sys = body.messages[0].content as string;
  const rest = sys.slice(sys.indexOf("## Tool T (description continued)\n\n") + "## Tool T (description continued)\n\n".length);
  return { head, rest };
}
const graphemes = (s: string) => [...new Intl.Segmenter().segment(s)].map((x) => x.segment);

describe("where a long description is cut", () => {
  test("a Japanese description is cut after a sentence end (。), not inside a word", () => {
    const { head, rest } = split("これはテストです。".repeat(200));
    expect(head.endsWith("。")).toBe(true); // actual: "…これ…"
    expect(rest.startsWith("これは")).toBe(true); // actual: "はテストです。…"
  });

  test("a hard cut does not split a flag (two regional indicators): head and rest keep whole flags", () => {
    const FLAGS = ["🇫🇷", "🇩🇪", "🇯🇵"];
    const { head, rest } = split("x" + FLAGS.join("").repeat(300));
    const headFlags = graphemes(head.replace(/…$/, "")).slice(1);
    expect(headFlags.every((g) => FLAGS.includes(g))).toBe(true); // actual: ends with "🇫"
    expect(graphemes(rest).every((g) => FLAGS.includes(g))).toBe(true); // actual: "🇷🇩", "🇪🇯", …
  });
});
