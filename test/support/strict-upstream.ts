/**
 * The fake upstream's strict mode (test/support/fake-upstream.ts `strict`): which schema governs a
 * request to the fake, what in its body the provider would refuse (./upstream-schemas.ts), and the
 * 400 each provider answers such a body with.
 */
import type { FakeFormat, FakeReply, ReceivedRequest } from "./fake-upstream.ts";
import { refusedLines } from "./upstream-schemas.ts";

/** A model request the strict fake refused: where it went and what the provider would have said. */
export interface StrictViolation {
  path: string;
  format: FakeFormat;
  model: string | undefined;
  /** The schema file (test/fixtures/schemas) the body was checked against. */
  schema: string;
  /** One line per violation (`/json/pointer: message` or `rule <name>: …`). */
  lines: string[];
}

/** The schema file (test/fixtures/schemas) of each wire format. */
export const SCHEMA_OF: Record<FakeFormat, string> = {
  "anthropic-messages": "anthropic-messages",
  "openai-chat": "openai-chat-completions",
  "openai-responses": "openai-responses",
  gemini: "gemini-generate-content",
};

/** The 400 the provider of `format` answers a body it does not take with (each provider's error shape). */
export function badRequestReply(format: FakeFormat, lines: readonly string[]): FakeReply {
  const message = `Invalid request (fake upstream, strict): ${lines.join("; ")}`;
  switch (format) {
    case "anthropic-messages":
      return { status: 400, json: { type: "error", error: { type: "invalid_request_error", message } } };
    case "gemini":
      return { status: 400, json: { error: { code: 400, message, status: "INVALID_ARGUMENT" } } };
    default:
      return { status: 400, json: { error: { message, type: "invalid_request_error", param: null, code: null } } };
  }
}

/** Options of strict mode (FakeUpstreamOptions.strict as an object). */
export interface StrictOptions {
  /** Requests left unchecked: those the test knows are a client's own bytes. */
  exempt?: (req: ReceivedRequest) => boolean;
  /**
   * The Chat path stands for an `openai-compatible` server (DeepSeek, Kimi, GLM, Qwen…), which takes
   * the vendor members upstream-schemas.ts LIVE_ACCEPTED names for it (`reasoning_content`).
   */
  openaiCompatible?: boolean | ((req: ReceivedRequest) => boolean);
}

/** What strict mode refuses in `rec` (empty when the API takes it). */
export function strictLines(rec: ReceivedRequest, opts: StrictOptions): string[] {
  if (!rec.format || rec.method !== "POST") return [];
  if (!rec.body || typeof rec.body !== "object" || Array.isArray(rec.body)) return ["/: the body is not a JSON object"];
  return refusedLines({ schema: SCHEMA_OF[rec.format], body: rec.body, headers: rec.headers, openaiCompatible: typeof opts.openaiCompatible === "function" ? opts.openaiCompatible(rec) : opts.openaiCompatible }, rec.model ?? "");
}
