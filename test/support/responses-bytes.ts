/**
 * What the Responses byte-pinning tests share (test/formats/openai-responses/encoder-bytes.test.ts for
 * the stream encoders, response-text.test.ts for the non-streamed body): the client requests a reply
 * is written for (their echo is in every response object), upstream bytes decoded into canonical hub
 * events, deterministic ids and the digest each golden file keeps per reply and request. The names of
 * the requests are part of the golden files' keys (`<reply> | <request>`): keep them.
 */
import { codecFor } from "../../formats/index.ts";
import { normalizeEvents } from "../../formats/normalize.ts";
import type { HubEvent, HubRequest, WireFormat } from "../../formats/hub.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { clientRequest } from "./fixtures.ts";

/** The provider family a recorded upstream of `format` is decoded as. */
export const familyOf = (f: WireFormat) => (f === "anthropic-messages" ? "anthropic" : f === "gemini" ? "gemini" : "openai");

/** Upstream bytes → that format's decoder → canonical (normalized) hub events; read whole, or `piece` bytes at a time. */
export function decodeSse(format: WireFormat, bytes: Uint8Array, piece?: number): HubEvent[] {
  const evs: HubEvent[] = [];
  const dec = codecFor(format).createDecoder({ family: familyOf(format) } as never, (e) => evs.push(e));
  if (piece) for (let i = 0; i < bytes.length; i += piece) dec.push(bytes.subarray(i, i + piece));
  else dec.push(bytes);
  dec.end();
  return normalizeEvents(evs);
}

/** The bench's system prompt (1,650 characters). */
const SYSTEM = "You are a careful coding assistant. Answer briefly and precisely. ".repeat(25);
const parseResponses = (body: unknown) => openaiResponses.parseRequest!(body as never);

/** One of Codex's recorded turns: its name in the golden keys, the recorded file, members set on top. */
export type CodexTurn = [name: string, file: string, extra?: Record<string, unknown>];

/**
 * The client requests a reply is written for, by name (the golden files' keys): none, the bench's,
 * Codex's recorded `turns` (in order), and one with every kind of tool and setting. `stream` adds
 * `stream: true` to the bench's and the tools' request, as a streaming client sends it.
 */
export async function responsesClientRequests(stream: boolean, turns: CodexTurn[]): Promise<[string, HubRequest | undefined][]> {
  const streamed = stream ? { stream: true } : {};
  const codex: [string, HubRequest][] = [];
  for (const [name, file, extra] of turns) codex.push([name, parseResponses({ ...(await clientRequest(file)), ...extra })]);
  return [
    ["none", undefined],
    ["bench", parseResponses({ model: "cchat/gpt-bench", ...streamed, instructions: SYSTEM, input: "Summarise the change in one sentence.", max_output_tokens: 256 })],
    ...codex,
    [
      "tools",
      parseResponses({
        model: "m",
        input: "x",
        ...streamed,
        instructions: 'quote " and newline\n and ☕',
        tools: [
          { type: "function", name: "get_weather", parameters: { type: "object", properties: {} } },
          { type: "namespace", name: "ns_", description: "d", tools: [{ type: "function", name: "inner", parameters: { type: "object", properties: {} } }] },
          { type: "custom", name: "apply_patch", description: "patch" },
          { type: "local_shell" },
        ],
        tool_choice: "auto",
        reasoning: { effort: "high", summary: "auto" },
        text: { verbosity: "low" },
        metadata: { a: "b" },
      }),
    ],
  ];
}

/** Ids `<prefix>1`, `<prefix>2`, … (one counter across prefixes), as the golden files were written with. */
export function counterIds(): (prefix: string) => string {
  let n = 0;
  return (prefix) => `${prefix}${++n}`;
}

/** The SHA-256 (hex) of a text's UTF-8 bytes: what a golden file keeps. */
export const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
