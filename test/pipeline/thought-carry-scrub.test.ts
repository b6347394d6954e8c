/**
 * The flight recorder's scrubbing (pipeline/scrub.ts `scrubText`,
 * SPEC O-6: a recording "never carries" a credential) does not see a credential inside the reasoning a
 * Gemini client's call carries as `thoughtSignature: "sy|thoughts|<base64url JSON>"`
 * (formats/gemini/thought-carry.ts). The clear thought part is scrubbed; the same text, base64url
 * encoded on the call, was not, and decoded back to the credential; scrubText now decodes such values,
 * scrubs them and encodes them back.
 */
import { expect, test } from "bun:test";
import { scrubbedHead, scrubText } from "../../pipeline/scrub.ts";
import { encodeResponse } from "../../formats/gemini/encoder.ts";
import type { HubResponse } from "../../formats/hub.ts";

test("a credential in carried reasoning is not recoverable from a scrubbed Gemini reply", () => {
  const key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8".repeat(5);
  const resp = {
    id: "r1",
    model: "claude-x",
    stopReason: "tool_use",
    content: [
      { type: "thinking", text: `The .env holds ANTHROPIC_API_KEY=${key}; do not print it.`, signature: { family: "anthropic", value: "SIG" } },
      { type: "tool_call", id: "toolu_1", name: "run_shell_command", arguments: "{}" },
    ],
    usage: { inputTokens: 1, outputTokens: 1 },
  } as unknown as HubResponse;
  const scrubbed = scrubText(JSON.stringify(encodeResponse(resp, { model: "gemini-x" } as never)));
  expect(scrubbed).not.toContain(key); // the clear thought part: scrubbed (passes)
  const parts = JSON.parse(scrubbed).candidates[0].content.parts as Array<Record<string, unknown>>;
  const sig = String(parts.find((p) => p.functionCall)?.thoughtSignature ?? "");
  expect(sig.startsWith("sy|thoughts|")).toBe(true);
  const decoded = Buffer.from(sig.slice("sy|thoughts|".length), "base64url").toString("utf8");
  expect(decoded).not.toContain(key); // the carried copy: decoded, scrubbed, encoded back
});

const TAG = "sy|thoughts|";
const carry = (text: string) => TAG + Buffer.from(JSON.stringify({ v: 1, p: [{ t: text, s: "anthropic|SIG" }] }), "utf8").toString("base64url");
const open = (sig: string) => Buffer.from(sig.slice(TAG.length), "base64url").toString("utf8");

test("a known secret of no credential shape inside a carried value is replaced, the rest of the value kept", () => {
  const secret = "hunter2-correct-horse-battery";
  const body = JSON.stringify({ parts: [{ functionCall: { name: "f", args: {} }, thoughtSignature: carry(`the password is ${secret}.`) }] });
  const out = scrubText(body, [secret]);
  const sig = (JSON.parse(out).parts[0].thoughtSignature as string);
  expect(sig.startsWith(TAG)).toBe(true);
  expect(JSON.parse(open(sig))).toEqual({ v: 1, p: [{ t: "the password is [redacted].", s: "anthropic|SIG" }] });
});

test("a carried value without a secret is left byte for byte", () => {
  const body = JSON.stringify({ thoughtSignature: carry("plain reasoning about the build") });
  expect(scrubText(body, ["not-in-there-at-all"])).toBe(body);
});

test("a recording cut inside a carried value keeps no part of the secret", () => {
  const key = "sk-ant-api03-" + "Zz9Yy8Xx7Ww6Vv5U".repeat(5);
  const whole = JSON.stringify({ thoughtSignature: carry(`${"x".repeat(40)} key ${key} and more words after it`) });
  const head = whole.slice(0, whole.length - 20);
  const shown = scrubbedHead(whole, head);
  const sig = shown.slice(shown.indexOf(TAG));
  expect(open(sig)).not.toContain(key.slice(0, 24));
  expect(open(sig)).toContain("[redacted]");
});
