/**
 * Found (review of session 43): the flight recorder's scrubbing (pipeline/scrub.ts `scrubText`,
 * SPEC O-6: a recording "never carries" a credential) does not see a credential inside the reasoning a
 * Gemini client's call carries as `thoughtSignature: "sy|thoughts|<base64url JSON>"`
 * (formats/gemini/thought-carry.ts). The clear thought part is scrubbed; the same text, base64url
 * encoded on the call, is not, and decodes back to the credential.
 */
import { expect, test } from "bun:test";
import { scrubText } from "../../pipeline/scrub.ts";
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
  expect(decoded).not.toContain(key); // fails: the carried copy holds the credential
});
