/**
 * The bench upstream's Responses replies (scripts/bench-upstream.ts, docs/performance.md item 211) are
 * what OpenAI's Responses API sends for the same request: the response object in `response.created`,
 * `response.in_progress` and `response.completed` (and the non-streamed body) echoes the request's
 * `instructions`, `max_output_tokens`, tools and settings, with the members of the recorded replies of
 * the shared fixtures (`openai-responses/text.sse`, `text.json`). scripts/bench's raw pipe forwards
 * this reply on the responses→chat lane while switchyard translates into Responses and must echo: a
 * reply without the echo made the baseline send less than half of switchyard's bytes.
 */
import { describe, expect, test } from "bun:test";
import { benchReply } from "../../scripts/bench-upstream.ts";
import { recordedBytes } from "../support/fixtures.ts";

const INSTRUCTIONS = "You are a careful coding assistant. ".repeat(20);
const request = (stream: boolean, extra: Record<string, unknown> = {}) => JSON.stringify({ model: "gpt-bench", stream, instructions: INSTRUCTIONS, input: "Hi", max_output_tokens: 256, ...extra });

/** The `data:` payloads of an SSE text, parsed. */
const events = (sse: string) =>
  sse
    .split(/\r?\n\r?\n/)
    .map((e) => e.split(/\r?\n/).find((l) => l.startsWith("data: ")))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)));
const keys = (o: object) => Object.keys(o).sort();

describe("bench upstream: Responses replies echo the request as OpenAI's do", () => {
  test("a stream's three response events carry the request's instructions and settings, and the recorded members", async () => {
    const recorded = events(new TextDecoder().decode(await recordedBytes("openai-responses/text.sse")));
    const got = events(await benchReply("/v1/responses", request(true, { temperature: 0.2, tools: [{ type: "function", name: "Read", parameters: {} }] }))!.text());
    const responses = got.filter((e) => e.response);
    expect(responses.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.completed"]);
    for (const { response } of responses) {
      expect(response.instructions).toBe(INSTRUCTIONS);
      expect([response.max_output_tokens, response.temperature, response.tools[0].name]).toEqual([256, 0.2, "Read"]);
    }
    // Every member the API sends, in the response object and in each event (the recording's padding aside).
    const recordedByType = new Map(recorded.map((e) => [e.type, e]));
    for (const e of got) {
      const r = recordedByType.get(e.type);
      expect({ type: e.type, keys: keys(e) }).toEqual({ type: e.type, keys: keys(r).filter((k) => k !== "obfuscation") });
      if (e.response) expect({ type: e.type, keys: keys(e.response) }).toEqual({ type: e.type, keys: keys(r.response) });
    }
    expect(keys(got.at(-1).response.usage)).toEqual(keys(recorded.at(-1).response.usage));
  });

  test("a non-streamed reply carries the echo and the recorded body's members; a request without instructions reads null", async () => {
    const recorded = JSON.parse(new TextDecoder().decode(await recordedBytes("openai-responses/text.json")));
    const body = (await benchReply("/v1/responses", request(false))!.json()) as any;
    expect([body.instructions, body.max_output_tokens, body.status]).toEqual([INSTRUCTIONS, 256, "completed"]);
    expect(keys(body)).toEqual(keys(recorded));
    const bare = (await benchReply("/v1/responses", JSON.stringify({ model: "gpt-bench", input: "Hi" }))!.json()) as any;
    expect([bare.instructions, bare.max_output_tokens, bare.tools]).toEqual([null, null, []]);
  });

  test("the same request text gets the same bytes; a different one its own echo", async () => {
    const a = await benchReply("/v1/responses", request(true))!.text();
    expect(await benchReply("/v1/responses", request(true))!.text()).toBe(a);
    const other = await benchReply("/v1/responses", request(true, { instructions: "Be terse." }))!.text();
    expect(events(other)[0].response.instructions).toBe("Be terse.");
    // Not JSON: answered as a request with nothing to echo.
    expect(events(await benchReply("/v1/responses", '"stream":true not json')!.text())[0].response.instructions).toBeNull();
  });
});
