/**
 * OpenAI's Chat Completions API refuses a function description over 1024 characters (400
 * `string_above_max_length`, test/support/upstream-rules.ts), and Claude Code's and Gemini CLI's tools
 * have longer ones (Agent 3225, Bash 2110; replace 2063): every request of theirs to a kind `openai`
 * provider failed. Such a description is cut to 1024 characters for kind `openai`, with a
 * `changed_field` warning naming the tool; an openai-compatible server gets it as it came.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const long = "Runs a command. " + "Mind the quoting 🙂. ".repeat(120); // > 1024 code points, with astral characters
const body = {
  model: "m",
  max_tokens: 100,
  messages: [{ role: "user", content: "hi" }],
  tools: [
    { name: "Bash", description: long, input_schema: { type: "object", properties: {} } },
    { name: "Read", description: "Reads a file.", input_schema: { type: "object", properties: {} } },
    { name: "Edge", description: "x".repeat(1024), input_schema: { type: "object", properties: {} } },
  ],
};

describe("a function description over 1024 characters to OpenAI's Chat API", () => {
  test("kind openai: cut to 1024 code points ending in …, a changed_field warning names the tool", () => {
    const { body: out, warnings } = translateBody("anthropic-messages", body, "openai-chat", "openai", "gpt-4.1") as any;
    const d: string = out.tools[0].function.description;
    expect([...d].length).toBe(1024);
    expect(d.endsWith("…")).toBe(true);
    expect(long.startsWith(d.slice(0, -1))).toBe(true);
    expect(out.tools[1].function.description).toBe("Reads a file.");
    expect(out.tools[2].function.description).toBe("x".repeat(1024));
    expect(warnings.filter((w: { code: string }) => w.code === "changed_field")).toEqual([
      { code: "changed_field", message: `The description of the tool "Bash" has ${[...long].length} characters; OpenAI's Chat Completions API takes at most 1024, so it was cut to that length.` },
    ]);
  });
  test("kind openai-compatible: the description as it came", () => {
    const { body: out, warnings } = translateBody("anthropic-messages", body, "openai-chat", "openai-compatible", "glm-5") as any;
    expect(out.tools[0].function.description).toBe(long);
    expect(warnings.filter((w: { code: string }) => w.code === "changed_field")).toEqual([]);
  });
});
