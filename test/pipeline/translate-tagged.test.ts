import { describe, expect, test } from "bun:test";
import { hasTaggedValue } from "../../pipeline/translate.ts";

const b = (s: string) => new TextEncoder().encode(s);

describe("gateway-tagged reasoning state in Anthropic bodies (SPEC F-8)", () => {
  test("a signature or redacted data value carrying the sy| tag is found", () => {
    expect(hasTaggedValue(b('{"content":[{"type":"thinking","thinking":"x","signature":"sy|gemini|abc"}]}'))).toBe(true);
    expect(hasTaggedValue(b('{"content":[{"type":"redacted_thinking","data" : "sy|openai|enc"}]}'))).toBe(true);
  });
  test("text that merely contains \"sy| does not switch a native pair to tidy", () => {
    expect(hasTaggedValue(b('{"content":[{"type":"text","text":"a diff with \\"sy|x\\" in it"}]}'))).toBe(false);
    expect(hasTaggedValue(b('{"content":[{"type":"text","text":"sy|gemini|abc"}]}'))).toBe(false);
    expect(hasTaggedValue(b('{"content":[{"type":"thinking","signature":"EqQBsy|"}]}'))).toBe(false);
  });
});
