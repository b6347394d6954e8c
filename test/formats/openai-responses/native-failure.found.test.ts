/**
 * Found by trying the official SDKs against switchyard (helper session 43, report-only): a Responses
 * client served by a Responses provider (native lane, formats/openai-responses/tap.ts `closing`) gets
 * only `response.failed` when the upstream breaks mid-reply, while the translated lanes
 * (formats/openai-responses/encoder.ts `fail`) send `error` then `response.failed`, as OpenAI's own
 * recorded failure does (openai-responses/error-event.sse). With openai 7.60, `responses.stream()` and
 * a raw `for await` reject on the translated lanes and resolve (status "failed", the text so far) on
 * the native one. These tests fail on the current code; the lead may adopt them (test/formats/
 * openai-responses/tap.test.ts "cut mid-stream" asserts the current behaviour and would change too).
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
