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
  test("a large body: every \"sy| in text is passed over, the tagged signature after them is found", () => {
    const text = 'see \\"sy|x\\" and sy|y '.repeat(4000);
    const head = `{"messages":[{"role":"user","content":[{"type":"text","text":"${text}"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"t",`;
    expect(hasTaggedValue(b(head + '"signature"\n :\t"sy|gemini|abc"}]}]}'))).toBe(true);
    expect(hasTaggedValue(b(head + '"signature":"EqQBsy|abc"}]}]}'))).toBe(false);
    expect(hasTaggedValue(b(head + '"thinking2":"sy|gemini|abc"}]}]}'))).toBe(false);
    expect(hasTaggedValue(b('{"thoughtSignature":"sy|anthropic|s"}'))).toBe(true);
    expect(hasTaggedValue(b('"sy|'))).toBe(false);
  });
  test("a body that is a view into a larger buffer is scanned only within its bytes", () => {
    const whole = b('{"signature":"sy|gemini|abc"}{"text":"plain"}');
    expect(hasTaggedValue(whole.subarray(29))).toBe(false);
    expect(hasTaggedValue(whole.subarray(0, 29))).toBe(true);
    const after = b('{"text":"plain"}{"signature":"sy|gemini|abc"}');
    expect(hasTaggedValue(after.subarray(16))).toBe(true);
  });
});
