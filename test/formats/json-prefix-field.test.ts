/**
 * formats/json-prefix-field.ts: the top-level `model` of a body's first bytes (a disabled key's 403
 * records it without waiting for the whole body, review19 R7).
 */
import { expect, test } from "bun:test";
import { topLevelStringField } from "../../formats/json-prefix-field.ts";

const field = (text: string) => topLevelStringField(new TextEncoder().encode(text), "model");

test("the top-level model of a prefix that holds it whole, wherever it stands among the fields", () => {
  expect(field('{"model":"anth/claude-x",')).toBe("anth/claude-x");
  expect(field(' {\n  "model" : "a/b" ')).toBe("a/b");
  expect(field('{"max_tokens":5,"stream":true,"meta":{"model":"inner","x":[1,{"y":"}"}]},"tags":["model"],"model":"outer","messages":[')).toBe("outer");
  expect(field('{"mod\\u0065l":"esc\\"aped"')).toBe('esc"aped');
  expect(field('{"system":"a \\"quoted\\" \\\\ text","model":"m"}')).toBe("m");
});

test("nothing when the prefix ends before the value does, the value is no string, or the text is no object", () => {
  expect(field('{"model":"anth/clau')).toBeUndefined();
  expect(field('{"model":')).toBeUndefined();
  expect(field('{"messages":[{"role":"user","content":"hi"},')).toBeUndefined();
  expect(field('{"max_tokens":12')).toBeUndefined();
  expect(field('{"model":5,')).toBeUndefined();
  expect(field('{"model":null}')).toBeUndefined();
  expect(field('["model","x"]')).toBeUndefined();
  expect(field('{"a":1}{"model":"x"}')).toBeUndefined();
  expect(field("not json")).toBeUndefined();
  expect(field("")).toBeUndefined();
});
