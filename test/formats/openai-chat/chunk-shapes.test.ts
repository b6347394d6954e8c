/**
 * The Chat decoder's shapes of a stream's opening and closing events, learned across streams
 * (formats/openai-chat/chunk-shapes.ts): a stream read after another one taught the shapes must decode
 * to exactly what the full path makes of it alone (its own id, usage and text), and an event that only
 * looks like a learned one (another model or finish reason, a value that is no valid JSON of its kind,
 * a state in which the full path does more) must still take the full path.
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { chatShapes } from "../../../formats/openai-chat/chunk-shapes.ts";
import type { HubEvent } from "../../../formats/hub.ts";
import { decodeChat } from "../../support/openai-chat-helpers.ts";

const utf8 = new TextEncoder();
const sse = (datas: string[]) => [utf8.encode(datas.map((d) => `data: ${d}\n\n`).join("") + "data: [DONE]\n\n")];
const ROLE_DELTA = '{"role":"assistant","content":"","refusal":null}';

/** One stream in OpenAI's layout (every chunk with `usage: null` and `obfuscation` padding, then a usage chunk), varied by its values. */
function openaiStream(v: { id: string; created: string; pad: string; texts: string[]; prompt: number; completion: number; model?: string; finish?: string }): string[] {
  const model = v.model ?? "gpt-4.1-nano-2025-04-14";
  const head = `{"id":${v.id},"object":"chat.completion.chunk","created":${v.created},"model":"${model}","service_tier":"default","system_fingerprint":"fp_1","choices":`;
  const choice = (delta: string, finish: string) => `[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":null,"obfuscation":${v.pad}}`;
  return [
    head + choice(ROLE_DELTA, "null"),
    ...v.texts.map((t) => head + choice(`{"content":${JSON.stringify(t)}}`, "null")),
    head + choice("{}", `"${v.finish ?? "stop"}"`),
    head + `[],"usage":{"prompt_tokens":${v.prompt},"completion_tokens":${v.completion},"total_tokens":${v.prompt + v.completion},"prompt_tokens_details":{"cached_tokens":3}},"obfuscation":${v.pad}}`,
  ];
}

const TEACHER = { id: '"chatcmpl-A1"', created: "1770933892", pad: '"Qup1"', texts: ["Hello", " there"], prompt: 16, completion: 2 };
const STUDENT = { id: '"chatcmpl-Zz9"', created: "1770999999", pad: '"x"', texts: ['say "hi"', "π 🎉", "\\"], prompt: 1200, completion: 30 };

/** What the full path alone makes of `datas` (the book emptied first; each kind comes once, so nothing it learns applies). */
function alone(datas: string[]): HubEvent[] {
  chatShapes.clear();
  return decodeChat(sse(datas));
}

/** `datas` decoded after the teacher's stream taught the book its shapes. */
function taught(datas: string[], teacher: string[] = openaiStream(TEACHER)): { events: HubEvent[]; hits: number } {
  chatShapes.clear();
  decodeChat(sse(teacher));
  const before = chatShapes.hits.reduce((a, b) => a + b, 0);
  const events = decodeChat(sse(datas));
  return { events, hits: chatShapes.hits.reduce((a, b) => a + b, 0) - before };
}

beforeEach(() => chatShapes.clear());

describe("Chat chunk shapes across streams", () => {
  test("a second stream's role, first delta, finish and usage chunks come out as the full path reads them, with its own id, text and usage", () => {
    const student = openaiStream(STUDENT);
    const { events, hits } = taught(student);
    expect(hits).toBe(4); // role, first content, finish, usage: all four read from shapes
    expect(events).toEqual(alone(student));
    expect(events[0]).toEqual({ type: "message_start", id: "chatcmpl-Zz9", model: "gpt-4.1-nano-2025-04-14" });
    expect(events.find((e) => e.type === "usage")).toEqual({ type: "usage", usage: { inputTokens: 1197, cacheReadTokens: 3, outputTokens: 30 } });
  });

  test("the bench upstream's layout (no usage: null, no padding) and an id written with escapes", () => {
    const bench = (id: string, texts: string[], completion: number) => {
      const head = `{"id":${id},"object":"chat.completion.chunk","created":1700000000,"model":"gpt-bench","choices":`;
      return [
        head + `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
        ...texts.map((t) => head + `[{"index":0,"delta":{"content":${JSON.stringify(t)}},"finish_reason":null}]}`),
        head + `[{"index":0,"delta":{},"finish_reason":"length"}]}`,
        head + `[],"usage":{"prompt_tokens":42,"completion_tokens":${completion},"total_tokens":${42 + completion}}}`,
      ];
    };
    const student = bench('"chatcmpl-\\u0041\\/b"', ["The", " end"], 7);
    const { events, hits } = taught(student, bench('"chatcmpl-bench"', ["One"], 1));
    expect(hits).toBe(4);
    expect(events).toEqual(alone(student));
    expect(events[0]).toMatchObject({ id: "chatcmpl-A/b" });
    expect(events).toContainEqual({ type: "finish", reason: "max_tokens", raw: "length" });
  });

  test("another model, finish reason or field takes the full path", () => {
    for (const student of [
      openaiStream({ ...STUDENT, model: "gpt-4o" }),
      openaiStream({ ...STUDENT, finish: "length" }),
      openaiStream(STUDENT).map((d) => d.replace('"service_tier":"default"', '"service_tier":"flex"')),
    ]) {
      const { events } = taught(student);
      expect(events).toEqual(alone(student));
    }
    // another finish reason: the role chunk, first delta and usage still match, the finish does not
    expect(taught(openaiStream({ ...STUDENT, finish: "length" })).hits).toBe(3);
    expect(taught(openaiStream({ ...STUDENT, model: "gpt-4o" })).hits).toBe(0);
  });

  test("a hole whose value is no valid JSON of its kind fails the stream as the full path does", () => {
    for (const v of [
      { ...STUDENT, id: '"bad\\x"' }, // an invalid escape in the id
      { ...STUDENT, pad: '"a\tb"' }, // a raw control character in the padding
      { ...STUDENT, created: "01" }, // a number JSON does not allow
    ]) {
      const student = openaiStream(v);
      const { events } = taught(student);
      expect(events).toEqual(alone(student));
      expect(events.at(-1)).toMatchObject({ type: "error", error: { code: "upstream_invalid_event" } });
    }
    // a usage object that does not parse: only the usage chunk fails
    const student = openaiStream(STUDENT);
    student[student.length - 1] = student.at(-1)!.replace('"cached_tokens":3', '"cached_tokens":3,');
    const { events } = taught(student);
    expect(events).toEqual(alone(student));
    expect(events.at(-1)).toMatchObject({ type: "error", error: { code: "upstream_invalid_event" } });
  });

  test("a key that names a hole but is not the value it stands for (a nested id) makes no shape", () => {
    const nested = (meta: string) => openaiStream(TEACHER).map((d) => d.replace('{"id":', `{"meta":{"id":"${meta}"},"id":`));
    const student = nested("m2");
    const { events, hits } = taught(student, nested("m1"));
    expect(events).toEqual(alone(student));
    expect(events[0]).toMatchObject({ type: "message_start", id: "chatcmpl-A1" });
    expect(hits).toBe(0);
  });

  test("a created time that is not an integer takes the full path", () => {
    const student = openaiStream({ ...STUDENT, created: "1770999999.5" });
    const { events, hits } = taught(student);
    expect(hits).toBe(0);
    expect(events).toEqual(alone(student));
  });

  test("a stream that opens with a content delta, a finish or usage gets its message start from the full path", () => {
    const s = openaiStream(STUDENT);
    for (const student of [s.slice(1), s.slice(1 + STUDENT.texts.length), [s.at(-1)!, ...s.slice(0, -1)]]) {
      const { events } = taught(student);
      expect(events).toEqual(alone(student));
      expect(events[0]).toMatchObject({ type: "message_start", id: "chatcmpl-Zz9" });
    }
  });

  test("a role chunk or a content delta after the finish, and a second finish, are left to the full path", () => {
    const s = openaiStream(STUDENT);
    const finish = s[1 + STUDENT.texts.length]!;
    const student = [s[0]!, s[1]!, finish, s[0]!, s[2]!, finish, s.at(-1)!];
    const { events } = taught(student);
    expect(events).toEqual(alone(student));
    expect(events.filter((e) => e.type === "finish")).toHaveLength(1);
  });

  test("a shape does not keep the upstream's read it was cut from", () => {
    // One read of ~6 MB: the opening and closing events are slices of its text, the shapes outlive it.
    const heap = () => {
      Bun.gc(true);
      return process.memoryUsage().heapUsed;
    };
    const learn = () => {
      const datas = openaiStream({ ...TEACHER, texts: Array.from({ length: 20_000 }, (_, i) => `word ${i} `) });
      chatShapes.clear();
      decodeChat(sse(datas));
    };
    // What the learned shapes hold: the heap with them, against the heap once they are forgotten. Other
    // test files sharing the process (their servers, timers) may free memory between the two readings:
    // the least of three tries is taken. Shapes that kept the read would hold its ~6 MB in every try.
    const held: number[] = [];
    for (let i = 0; i < 3 && !(held.length > 0 && Math.min(...held) < 1_000_000); i++) {
      learn();
      expect(chatShapes.hits.reduce((a, b) => a + b, 0)).toBe(0);
      const withShapes = heap();
      chatShapes.clear();
      held.push(withShapes - heap());
    }
    expect(Math.min(...held)).toBeLessThan(1_000_000);
    expect(taught(openaiStream(STUDENT)).hits).toBe(4); // and the shapes still match
  });
});
