/**
 * The Anthropic builder (formats/anthropic-messages/build.ts, media.ts) and what another client sent:
 * - a Google-only file URI (gs://, the Gemini Files API) is dropped for Anthropic's own API
 *   (`anthropic`, `claude-code`), which fetches URL sources over HTTP(S); a third-party server
 *   (`anthropic-compatible`) gets it as it came, as an `openai-compatible` server does. Failed before
 *   the fix (dropped for every kind).
 * - a non-object JSON-schema root (a Gemini client's responseSchema {type: "ARRAY"}) goes as
 *   `output_config.format`: Anthropic's structured outputs name no object-only root (their schema
 *   limitations list arrays and the other basic types as supported), unlike OpenAI's.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const URI = "gs://cloud-samples-data/generative-ai/image/scones.jpg";
const gemini = { contents: [{ role: "user", parts: [{ text: "describe" }, { fileData: { mimeType: "image/jpeg", fileUri: URI } }] }] };

test("a Gemini client's gs:// image reaches an anthropic-compatible server as a URL source; Anthropic's own API drops it", () => {
  const compat = translateBody("gemini", gemini, "anthropic-messages", "anthropic-compatible", "glm-4.6");
  const content = (compat.body.messages as Array<{ content: unknown }>)[0]!.content;
  expect(content).toEqual([{ type: "text", text: "describe" }, { type: "image", source: { type: "url", url: URI } }]);
  expect(compat.warnings.map((w) => w.code)).not.toContain("dropped_media");
  for (const kind of ["anthropic", "claude-code"] as const) {
    const own = translateBody("gemini", gemini, "anthropic-messages", kind, "claude-sonnet-4-5");
    expect(own.warnings.map((w) => w.message)).toContain(
      "An image given by a Google-only file URI (gs:// or the Gemini Files API) was not sent: Anthropic cannot read it.",
    );
  }
});

test("a Gemini client's array-root response schema reaches Anthropic as output_config.format, with no warning", () => {
  const schema = { type: "ARRAY", items: { type: "STRING" } };
  const body = { contents: [{ role: "user", parts: [{ text: "list" }] }], generationConfig: { responseMimeType: "application/json", responseSchema: schema } };
  const out = translateBody("gemini", body, "anthropic-messages", "anthropic", "claude-sonnet-4-5");
  const format = (out.body.output_config as { format: { type: string; schema: { type: string } } }).format;
  expect(format.type).toBe("json_schema");
  expect(format.schema.type).toBe("array");
  expect(out.warnings.map((w) => w.code)).not.toContain("dropped_field");
});
