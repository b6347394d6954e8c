/**
 * Test helpers for the OpenAI Responses format: run a byte stream through the official `openai` SDK's
 * Responses stream accumulator (no network: the client's `fetch` answers with the given bytes), split
 * SSE text into events, and decode a recorded stream into hub events.
 */
import OpenAI from "openai";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import type { HubEvent } from "../../formats/hub.ts";

/** One SSE event of an encoder's output: the `event:` name and the parsed `data:` JSON. */
export interface WireEvent {
  event: string | undefined;
  data: any;
}

/** Splits SSE text written by an encoder (`\n` line ends) into events with parsed data. */
export function parseSse(text: string): WireEvent[] {
  const out: WireEvent[] = [];
  for (const block of text.split("\n\n")) {
    if (block.trim() === "") continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    out.push({ event, data: JSON.parse(data.join("\n")) });
  }
  return out;
}

/** An OpenAI client whose every request is answered with `body` as an SSE stream. */
export function fakeOpenAI(body: string | Uint8Array): OpenAI {
  return new OpenAI({
    apiKey: "test-key",
    baseURL: "http://127.0.0.1:1",
    maxRetries: 0,
    fetch: async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
  });
}

/**
 * Runs `body` through `client.responses.stream(...)`: returns every event the SDK yielded and the
 * final response, or the error the SDK raised (`error`), whichever happened.
 */
export async function sdkStream(body: string | Uint8Array): Promise<{ events: any[]; final?: any; error?: unknown }> {
  const client = fakeOpenAI(body);
  const events: any[] = [];
  try {
    const stream = client.responses.stream({ model: "gpt-x", input: "hi" });
    for await (const ev of stream) events.push(ev);
    const final = await stream.finalResponse();
    return { events, final };
  } catch (error) {
    return { events, error };
  }
}

/** Decodes whole bytes (or pieces) with the Responses decoder; returns the loose hub events. */
export function decodePieces(pieces: Uint8Array[], family: "openai" = "openai"): HubEvent[] {
  const evs: HubEvent[] = [];
  const dec = openaiResponses.createDecoder({ family }, (e) => evs.push(e));
  for (const p of pieces) dec.push(p);
  dec.end();
  return evs;
}
