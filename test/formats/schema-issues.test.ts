/**
 * Validation messages a client reads for a wrong-typed body (SPEC G-4: a clear error): when a field
 * may be one of several shapes (a string or an array of parts), the message names what is wrong
 * inside the value the client sent, not only that the union as a whole did not match ("Expected
 * (string | Array) but received Array" said nothing about the array's bad element).
 */
import { describe, expect, test } from "bun:test";
import { parseRequest as parseChat } from "../../formats/openai-chat/parse.ts";
import { parseRequest as parseResponses } from "../../formats/openai-responses/parse.ts";
import { specificIssue } from "../../formats/schema-issues.ts";

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
    expect(m).toMatch(/input\W+0/);
    expect(m).toContain("received 5");
  });

  test("Chat: a content part whose image_url is a number", () => {
    const m = messageOf(() => parseChat({ model: "x", messages: [{ role: "user", content: [{ type: "image_url", image_url: 5 }] }] }));
    expect(m).not.toContain("received Array");
    expect(m).toContain("messages.0.content.0.image_url");
    expect(m).toContain("received 5");
  });

  test("a failure that is already the most specific is kept as it is", () => {
    expect(messageOf(() => parseChat({ model: "x", messages: [{ role: "user", content: 5 }] }))).toBe(
      "Invalid request at messages.0.content: Invalid type: Expected (string | Array) but received 5",
    );
    const flat = { message: "top", path: [{ key: "a" }], issues: [{ message: "on the value itself" }, { message: "also", path: [] }] };
    expect(specificIssue(flat)).toBe(flat);
  });
});
