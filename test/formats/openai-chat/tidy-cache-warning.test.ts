/**
 * On the openai-compatible Chat → Chat lane (tidy.ts) a Chat client's own `cache_control` markers were
 * removed without a warning, while the translated lanes name them `dropped_cache_control`. Now each
 * place a marker can sit (top level, a message, a content part, a tool, its function) gives the
 * warning once; a body without markers, or with `cache_control: null`, gives none.
 */
import { expect, test } from "bun:test";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import type { BuildTarget } from "../../../formats/codec.ts";

const TARGET: BuildTarget = { model: "up-model", kind: "openai-compatible", family: "provider:x", stream: false };
const MARK = { type: "ephemeral" };
const WARNING = {
  code: "dropped_cache_control",
  message: "Chat Completions has no per-block prompt-cache markers (OpenAI-compatible servers may refuse them); cache_control was not sent.",
};
const TOOL = { type: "function", function: { name: "f", parameters: { type: "object" } } };

const tidy = (body: Record<string, unknown>) => openaiChat.tidyRequest!(body, TARGET);

test("a marker at each place is removed and named once", () => {
  const cases: Record<string, Record<string, unknown>> = {
    top: { model: "m", cache_control: MARK, messages: [{ role: "user", content: "hi" }] },
    message: { model: "m", messages: [{ role: "user", content: "hi", cache_control: MARK }] },
    part: { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b", cache_control: MARK }] }] },
    tool: { model: "m", messages: [{ role: "user", content: "hi" }], tools: [{ ...TOOL, cache_control: MARK }] },
    function: { model: "m", messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { ...TOOL.function, cache_control: MARK } }] },
    all: {
      model: "m",
      cache_control: MARK,
      messages: [{ role: "user", content: [{ type: "text", text: "a", cache_control: MARK }], cache_control: MARK }],
      tools: [{ type: "function", function: { ...TOOL.function, cache_control: MARK }, cache_control: MARK }],
    },
  };
  for (const [place, body] of Object.entries(cases)) {
    const built = tidy(body);
    expect(JSON.stringify(built.body), place).not.toContain("cache_control");
    expect(built.warnings, place).toEqual([WARNING]);
  }
});

test("no marker, or a null one, gives no warning", () => {
  expect(tidy({ model: "m", messages: [{ role: "user", content: [{ type: "text", text: "a" }] }], tools: [TOOL] }).warnings).toEqual([]);
  const nulls = tidy({ model: "m", cache_control: null, messages: [{ role: "user", content: [{ type: "text", text: "a", cache_control: null }], cache_control: null }] });
  expect(JSON.stringify(nulls.body)).not.toContain("cache_control");
  expect(nulls.warnings).toEqual([]);
});
