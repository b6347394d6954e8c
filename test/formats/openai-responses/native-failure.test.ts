/**
 * Found by trying the official SDKs against switchyard (session 43): a Responses client served by a
 * Responses provider (native lane, formats/openai-responses/tap.ts `closing`) got only `response.failed`
 * when the upstream broke mid-reply, while the translated lanes (formats/openai-responses/encoder.ts
 * `fail`) send `error` then `response.failed`, as OpenAI's own recorded failure does
 * (openai-responses/error-event.sse). With openai 7.x, `responses.stream()` and a raw `for await`
 * rejected on the translated lanes and resolved (status "failed", the text so far) on the native one.
 * Fixed 2026-12-07: the native lane sends the `error` event too (test/e2e/responses-native-cut.test.ts
 * through the gateway).
 */
import { describe, expect, test } from "bun:test";
import { recordedBytes } from "../../support/fixtures.ts";
import { parseSse, sdkStream } from "../../support/openai-responses-helpers.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import { concatBytes } from "../../../formats/sse.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function cutNative() {
  const bytes = await recordedBytes("openai-responses/text.sse");
  const s = text(bytes);
  const cutAt = new TextEncoder().encode(s.slice(0, s.indexOf('"delta":" file"'))).length; // inside the third delta
  const tap = openaiResponses.createTap({ family: "openai" });
  const forwarded = tap.push(bytes.subarray(0, cutAt));
  const appended = tap.end();
  return concatBytes([forwarded, appended]);
}

describe("native Responses lane, upstream cut mid-reply: the client is told as on the translated lanes", () => {
  test("an `error` event precedes the closing response.failed", async () => {
    const wire = parseSse(text(await cutNative()));
    expect(wire.slice(-2).map((w) => w.event)).toEqual(["error", "response.failed"]);
  });

  test("the OpenAI SDK's responses.stream() rejects instead of resolving a failed response with partial text", async () => {
    const { error, final } = await sdkStream(await cutNative());
    expect(final?.status).toBeUndefined();
    expect(error).toBeDefined();
  });
});
