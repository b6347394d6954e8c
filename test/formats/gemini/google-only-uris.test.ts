/**
 * Found by the request-features tryout (session 45; fixed that session): a Gemini client's `fileData` whose
 * `fileUri` only Google can read, a `gs://` Cloud Storage object or a Gemini Files API file
 * (`https://generativelanguage.googleapis.com/v1beta/files/…`, which needs the Google API key), is
 * sent to Anthropic as `source: {type: "url", url: "gs://…"}` and to OpenAI as `image_url` /
 * `input_image` with that URI, with no warning. Neither provider can fetch it, so the request fails
 * upstream (or the file is silently unreadable). The Gemini builder itself names these URIs as
 * Google's own (formats/gemini/build.ts FILES_API, "gs://"), and the other lanes drop a file id of
 * another provider with a `dropped_media` warning. Expected: not sent as a URL, and a warning saying
 * so (SPEC F-2). It failed for that reason before the fix.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";
import type { ProviderKind } from "../../../formats/codec.ts";
import type { WireFormat } from "../../../formats/hub.ts";

const URIS = [
  ["image/png", "gs://bucket/photo.png"],
  ["application/pdf", "gs://bucket/report.pdf"],
  ["image/png", "https://generativelanguage.googleapis.com/v1beta/files/abc123"],
] as const;
const TARGETS: Array<[WireFormat, ProviderKind, string]> = [
  ["anthropic-messages", "anthropic", "claude-sonnet-4-5"],
  ["openai-chat", "openai", "gpt-4.1"],
  ["openai-responses", "openai-responses", "gpt-5"],
];

describe("a Google-only file URI is not sent to another provider as a URL", () => {
  for (const [mimeType, fileUri] of URIS) {
    test(`${fileUri} (${mimeType})`, () => {
      const body = { contents: [{ role: "user", parts: [{ text: "describe it" }, { fileData: { mimeType, fileUri } }] }] };
      for (const [to, kind, model] of TARGETS) {
        const built = translateBody("gemini", body, to, kind, model);
        expect(JSON.stringify(built.body).includes(fileUri), `${to}: the URI is in the body`).toBe(false);
        expect(built.warnings.some((w) => w.code === "dropped_media" || w.code === "dropped_content"), `${to}: a warning`).toBe(true);
      }
    });
  }
});
