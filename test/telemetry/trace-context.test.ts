/**
 * What the OpenTelemetry export takes from a request (src/telemetry/otel.ts): the caller's span from a
 * W3C `traceparent` (Trace Context 3.2; a malformed, version-ff or all-zero value starts a new trace) and
 * the GenAI conventions' `gen_ai.provider.name` from the provider's kind (newuser15's tryout, N6).
 */
import { expect, test } from "bun:test";
import { genAiProviderName, remoteParent } from "../../src/telemetry/otel.ts";

test("a traceparent names the caller's span; malformed, ff or all-zero values are none", () => {
  expect(remoteParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1, isRemote: true });
  expect(remoteParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.traceFlags).toBe(0);
  // a later version may add fields; version 00 may not
  expect(remoteParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")?.spanId).toBe("00f067aa0ba902b7");
  for (const bad of [
    undefined,
    "",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
  ])
    expect(remoteParent(bad)).toBeUndefined();
});

test("gen_ai.provider.name: the well-known value of the kind; a compatible provider's own id", () => {
  expect(["anthropic", "claude-code", "openai", "openai-responses", "codex", "gemini", "openai-compatible", "anthropic-compatible"].map((k) => genAiProviderName(k as never, "myid"))).toEqual([
    "anthropic",
    "anthropic",
    "openai",
    "openai",
    "openai",
    "gcp.gemini",
    "myid",
    "myid",
  ]);
  expect(genAiProviderName(undefined, "gone")).toBe("gone");
});
