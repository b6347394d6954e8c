/**
 * Validation messages a client reads for a wrong-typed body (SPEC G-4: a clear error): when a field
 * may be one of several shapes (a string or an array of parts), the message names what is wrong
 * inside the value the client sent, not only that the union as a whole did not match ("Expected
 * (string | Array) but received Array" said nothing about the array's bad element).
 */
import { describe, expect, test } from "bun:test";
import { parseRequest as parseChat } from "../../formats/openai-chat/parse.ts";
import { parseRequest as parseResponses } from "../../formats/openai-responses/parse.ts";
import { openAiParam, specificIssue } from "../../formats/schema-issues.ts";
import { FormatError } from "../../formats/hub.ts";

const messageOf = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("no error");
};

describe("a union that did not match names the failure inside the client's value", () => {
  test("Responses: an input array with a number in it", () => {
    const m = messageOf(() => parseResponses({ model: "x", input: [5] }));
    expect(m).not.toContain("received Array");
    expect(m).toContain("'input[0]'");
    expect(m).toContain("received 5");
  });

  test("Chat: a content part whose image_url is a number", () => {
    const m = messageOf(() => parseChat({ model: "x", messages: [{ role: "user", content: [{ type: "image_url", image_url: 5 }] }] }));
    expect(m).not.toContain("received Array");
    expect(m).toContain("messages[0].content[0].image_url");
    expect(m).toContain("received 5");
  });

  test("a failure that is already the most specific is kept as it is", () => {
    expect(messageOf(() => parseChat({ model: "x", messages: [{ role: "user", content: 5 }] }))).toBe(
      "Invalid request at messages[0].content: Invalid type: Expected (string | Array) but received 5",
    );
    const flat = { message: "top", path: [{ key: "a" }], issues: [{ message: "on the value itself" }, { message: "also", path: [] }] };
    expect(specificIssue(flat)).toBe(flat);
  });
});

describe("Chat and Responses name a field as OpenAI does: `messages[1].content[0].type`, one style for the schema and the checks", () => {
  const paramOf = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(FormatError);
      return (e as FormatError).error.param;
    }
    throw new Error("no error");
  };

  test("Chat: the schema's paths read like the hand checks' (it was messages.0.role beside messages[1].tool_call_id)", () => {
    const chat = (messages: unknown[]) => () => parseChat({ model: "x", messages });
    expect(paramOf(chat([{ role: "robot", content: "x" }]))).toBe("messages[0].role");
    expect(paramOf(chat([{ role: "user", content: "a" }, { role: "user", content: [{ type: "image_url", image_url: 5 }] }]))).toBe("messages[1].content[0].image_url");
    expect(paramOf(chat([{ role: "user", content: "a" }, { role: "tool", content: "x" }]))).toBe("messages[1].tool_call_id");
    expect(paramOf(() => parseChat({ model: "x", messages: [], max_tokens: "many" }))).toBe("max_tokens");
  });

  test("Responses: a nested failure inside an item is in brackets too, and the body's own fields carry no prefix", () => {
    const bad = { model: "x", input: [{ type: "message", role: "user", content: "hi" }, { type: "message", role: "user", content: [{ type: "input_text", text: 5 }] }] };
    expect(paramOf(() => parseResponses(bad))).toBe("input[1].content[0].text");
    expect(paramOf(() => parseResponses({ input: "x" }))).toBe("model");
    expect(paramOf(() => parseResponses({ model: "x", input: [{ type: "function_call", name: "f", arguments: "{}" }] }))).toBe("input[0].call_id");
  });

  test("openAiParam", () => {
    expect(openAiParam({ path: [{ key: "messages" }, { key: 2 }, { key: "content" }, { key: 0 }] })).toBe("messages[2].content[0]");
    expect(openAiParam({ path: [{ key: "content" }, { key: 0 }, { key: "type" }] }, "input[4]")).toBe("input[4].content[0].type");
    expect(openAiParam({ path: [] })).toBeUndefined();
    expect(openAiParam({ path: [{ key: {} }] })).toBeUndefined();
  });
});
