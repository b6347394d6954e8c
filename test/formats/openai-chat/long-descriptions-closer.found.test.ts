/**
 * FOUND (report only, low): a long Chat tool description whose window (the first characters the tool
 * keeps) ends right on a CJK sentence end whose closing bracket lies just past the window (`…。」`) is
 * cut after the "。": the tool ends "…ああ。" and the moved section in the system message starts with
 * the orphaned "」" ("## Tool T (description continued)\n\n」次の文です。…"). formats/openai-chat/
 * long-descriptions.ts `boundary` takes the closers after a CJK sentence end only up to the window's end.
 * Expected: the quote stays with its sentence (the cut at an earlier sentence end whose closers fit, or
 * the section not starting with a closing bracket). Actual: the section starts with "」".
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const SCHEMA = { type: "object", properties: {} };
const POINTER = ' (continued in the system message under "Tool T")';
const SECTION = "## Tool T (description continued)\n\n";

test("a closing bracket after 。 is not cut from its sentence", () => {
  // the window's last character is the 。; its 」 is the first character past the window
  const room = 1024 - [...POINTER].length - 1;
  const description = "これはテストです。".repeat(3) + "あ".repeat(room - 28) + "。" + "」次の文です。".repeat(50);
  const { body } = translateBody("anthropic-messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }], tools: [{ name: "T", description, input_schema: SCHEMA }] }, "openai-chat", "openai", "gpt-4.1") as any;
  const sys = body.messages[0].content as string;
  const rest = sys.slice(sys.indexOf(SECTION) + SECTION.length);
  // actual: "」次の文です。」次の"
  expect(rest.startsWith("」")).toBe(false);
});
