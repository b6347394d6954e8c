/**
 * `TranslatedStreamDriver.hold` (the commit point's peek, pipeline/commit.ts): a reply read with held
 * reads must give the client exactly the bytes, and the request exactly the observations, that the
 * same reads pushed one by one give, for every recorded provider stream and every client format.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { concatBytes } from "../../formats/sse.ts";
import { TranslatedStreamDriver } from "../../pipeline/re-translate.ts";
import { manifest, recordedBytes } from "../support/fixtures.ts";

const CLIENTS: WireFormat[] = ["openai-chat", "anthropic-messages", "openai-responses", "gemini"];
const dec = new TextDecoder();

// Ids and times the encoders would draw at random are fixed, so two drivers write the same bytes.
const realRandom = Math.random;
beforeAll(() => {
  Math.random = () => 0.5;
});
afterAll(() => {
  Math.random = realRandom;
});

function driver(provider: WireFormat, client: WireFormat): TranslatedStreamDriver {
  let n = 0;
  const request = client === "openai-responses" ? codecFor(client).parseRequest!({ model: "m", input: "hi", instructions: "Be brief." }) : undefined;
  return new TranslatedStreamDriver(codecFor(provider), codecFor(client), { family: provider === "anthropic-messages" ? "anthropic" : provider === "gemini" ? "gemini" : "openai" }, {
    model: "m",
    includeUsage: true,
    request,
    now: () => 1_700_000_000_000,
    newId: (prefix) => `${prefix}id${n++}`,
  });
}

/** The recorded bytes cut into reads of uneven sizes (one cut inside the first event, several later). */
function reads(bytes: Uint8Array): Uint8Array[] {
  const cuts = [7, 120, 121, 600, 1500, 4000].filter((c) => c < bytes.length);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of cuts) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  out.push(bytes.subarray(from));
  return out;
}

function observations(d: TranslatedStreamDriver) {
  return { contentSeen: d.contentSeen, usage: d.usage, usageSeen: d.usageSeen, stopReason: d.stopReason, earlyError: d.earlyError, lateError: d.lateError };
}

const streams = (await manifest()).filter((e) => e.kind === "sse");

describe("a translated stream read with held reads", () => {
  test("there are recorded streams of every provider format", () => {
    expect(new Set(streams.map((s) => s.format))).toEqual(new Set<WireFormat>(CLIENTS));
  });

  for (const entry of streams) {
    for (const client of CLIENTS) {
      test(`${entry.file} → ${client}: same bytes and observations as pushed reads`, async () => {
        const parts = reads(await recordedBytes(entry.file));

        const pushed = driver(entry.format, client);
        const pushedOut: Uint8Array[] = [];
        const seenAfterEach: boolean[] = [];
        for (const p of parts) {
          pushedOut.push(pushed.push(p));
          seenAfterEach.push(pushed.contentSeen);
        }
        pushedOut.push(pushed.end());
        const expected = dec.decode(concatBytes(pushedOut));
        expect(expected.length).toBeGreaterThan(0);

        // Every read held, then the end: one output with everything.
        const held = driver(entry.format, client);
        parts.forEach((p, i) => {
          held.hold(p);
          // What the commit point decides on is known at once, output or not.
          expect(held.contentSeen).toBe(seenAfterEach[i]!);
        });
        expect(dec.decode(held.end())).toBe(expected);
        expect(observations(held)).toEqual(observations(pushed));

        // The first reads held, their output taken with an empty push, the rest pushed (a reply still
        // arriving after the peek: pipeline/commit.ts).
        const mixed = driver(entry.format, client);
        const mixedOut: Uint8Array[] = [];
        const half = Math.ceil(parts.length / 2);
        for (const p of parts.slice(0, half)) mixed.hold(p);
        mixedOut.push(mixed.push(new Uint8Array(0)));
        for (const p of parts.slice(half)) mixedOut.push(mixed.push(p));
        mixedOut.push(mixed.end());
        expect(dec.decode(concatBytes(mixedOut))).toBe(expected);
        expect(observations(mixed)).toEqual(observations(pushed));
      });
    }
  }

  test("a failure at the end after held reads: the held output, then the in-band error", async () => {
    const bytes = await recordedBytes("openai-chat/text.sse");
    const text = dec.decode(bytes);
    const cut = new TextEncoder().encode(text.slice(0, text.indexOf("\n\n", 600) + 2));
    const failure = { kind: "api_error" as const, status: 502, message: "The upstream broke the connection." };
    const pushed = driver("openai-chat", "anthropic-messages");
    const a = dec.decode(concatBytes([pushed.push(cut), pushed.end(failure)]));
    const held = driver("openai-chat", "anthropic-messages");
    held.hold(cut);
    const b = dec.decode(held.end(failure));
    expect(b).toBe(a);
    expect(b).toContain("event: error");
    expect(held.lateError).toEqual(failure);
  });
});
